import os
import time

import numpy as np
import pandas as pd
import pytest

from benchmarks import runner
from benchmarks.datasets import Equation
from benchmarks.methods import METHODS
from benchmarks.methods.base import Adapter
from benchmarks.profiles import PROFILES, Profile
from benchmarks.report import markdown_tables, splice, summarize, write_report


class SleepAdapter(Adapter):
    """Sleeps ``value`` seconds in fit, then predicts the mean."""

    name, parameter = "sleep", "seconds"

    def _fit(self, X, y):
        time.sleep(self.value)
        self.mean_ = float(y.mean())

    def predict(self, X):
        return np.full(len(X), self.mean_)

    def expression(self):
        return repr(self.mean_)


class FailingAdapter(Adapter):
    name, parameter = "failing", "knob"

    def _fit(self, X, y):
        raise RuntimeError("diverged")


class ImportingAdapter(Adapter):
    name, parameter = "importing", "knob"

    def _fit(self, X, y):
        import no_such_package_for_tests  # noqa: F401


class CrashingAdapter(Adapter):
    name, parameter = "crashing", "knob"

    def _fit(self, X, y):
        os._exit(3)


class MissingAdapter(Adapter):
    name, parameter = "missing", "knob"
    requires = ("no_such_package_for_tests",)
    install_hint = "it does not exist"


@pytest.fixture
def fake_methods(monkeypatch):
    # Children are forked, so they see the patched registry; runs that use these
    # methods take the threading backend (loky workers would not see the patch).
    for cls in (SleepAdapter, FailingAdapter, ImportingAdapter, CrashingAdapter, MissingAdapter):
        monkeypatch.setitem(METHODS, cls.name, cls)


EQUATION = Equation("toy", "square", "x_1**2", ((1.0, 2.0),))


def test_timeout_kills_the_fit(fake_methods):
    task = runner.Task(EQUATION, "sleep", 30, n_points=16, n_test_points=100)
    start = time.perf_counter()
    row = runner.run_task(task, time_limit=1.0)
    assert time.perf_counter() - start < 10
    assert row["status"] == "timeout"
    assert "time limit" in row["error"]
    assert row["method"] == "sleep" and row["equation"] == "square"


def test_task_within_the_limit(fake_methods):
    task = runner.Task(EQUATION, "sleep", 0, n_points=16, n_test_points=100)
    row = runner.run_task(task, time_limit=30.0)
    assert row["status"] == "ok"
    assert row["a1_iid"] is False and row["r2_iid"] == pytest.approx(0.0, abs=0.1)
    assert row["fit_time"] >= 0 and row["total_time"] >= row["fit_time"]


def test_a_dying_fit_is_recorded_as_crashed(fake_methods):
    row = runner.run_task(runner.Task(EQUATION, "crashing", 1, n_points=16, n_test_points=100), 30.0)
    assert row["status"] == "crashed" and "code 3" in row["error"]


def test_errors_and_import_errors_are_recorded(fake_methods):
    row = runner.run_task(runner.Task(EQUATION, "failing", 1, n_points=16, n_test_points=100), 30.0)
    assert row["status"] == "error" and row["error"] == "RuntimeError: diverged"
    row = runner.run_task(runner.Task(EQUATION, "importing", 1, n_points=16, n_test_points=100), 30.0)
    assert row["status"] == "not_installed" and "no_such_package_for_tests" in row["error"]


def test_not_installed_methods_are_recorded_and_the_run_goes_on(fake_methods, tmp_path):
    profile = Profile(
        datasets={"nguyen": ["Nguyen-1", "Nguyen-8"]},
        methods={"missing": (1, 2), "sleep": (0,)},
        n_points=(16,),
        time_limit=30.0,
    )
    out = tmp_path / "run.csv"
    results = runner.run(profile, out, n_jobs=2, backend="threading", progress=False)
    assert len(results) == 6
    missing = results[results["method"] == "missing"]
    assert (missing["status"] == "not_installed").all()
    assert missing["error"].str.contains("not installed: package 'no_such_package_for_tests'").all()
    assert (results[results["method"] == "sleep"]["status"] == "ok").all()


def test_quick_profile_end_to_end_and_resume(tmp_path):
    out = tmp_path / "quick.csv"
    start = time.perf_counter()
    results = runner.run(PROFILES["quick"], out, n_jobs=2, progress=False, command="test")
    first = time.perf_counter() - start
    quick = PROFILES["quick"]
    n_equations = sum(len(v) for v in quick.datasets.values())
    assert len(results) == n_equations * sum(len(v) for v in quick.methods.values())
    assert list(pd.read_csv(out).columns) == runner.COLUMNS
    for method in ("nesymres", "gplearn", "gp", "operon"):
        rows = results[results["method"] == method]
        assert (rows["status"] == "ok").all(), rows[["status", "error"]]
        assert rows["a1_iid"].isin([0, 1]).all() and rows["fit_time"].gt(0).all()
    assert results[results["method"] == "gp"]["expression"].isna().all()
    assert results[results["method"] == "operon"]["expression"].notna().all()
    assert out.with_suffix(".json").exists()

    # A second run skips every finished row.
    start = time.perf_counter()
    again = runner.run(PROFILES["quick"], out, n_jobs=2, progress=False)
    assert len(again) == len(results)
    assert time.perf_counter() - start < first

    # Reports: plots, markdown and a docs block.
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\nintro\n\n<!-- results:start -->\nold\n<!-- results:end -->\n\noutro\n")
    written = write_report(out, tmp_path / "report", docs)
    names = {p.name for p in written}
    assert {"quick_aifeynman_time.png", "quick_nguyen_time.png", "quick.md", "benchmarks.md"} <= names
    text = docs.read_text()
    assert "old" not in text and "intro" in text and "outro" in text
    assert "| NeSymReS | beam_size=1 |" in text and "`test`" in text
    assert "DSR: not installed" in text


def test_resume_skips_done_rows_and_redoes_failed(fake_methods, tmp_path):
    profile = Profile(datasets={"nguyen": ["Nguyen-1"]}, methods={"sleep": (0, 30)}, n_points=(16,), time_limit=1.0)
    out = tmp_path / "run.csv"
    first = runner.run(profile, out, n_jobs=2, backend="threading", progress=False)
    assert sorted(first["status"]) == ["ok", "timeout"]
    assert runner.read_done(out) == {
        ("nguyen", "Nguyen-1", "sleep", 0.0, 16, 0), ("nguyen", "Nguyen-1", "sleep", 30.0, 16, 0)
    }
    assert len(runner.read_done(out, redo_failed=True)) == 1
    # Nothing is run again ...
    start = time.perf_counter()
    assert len(runner.run(profile, out, n_jobs=1, backend="threading", progress=False)) == 2
    assert time.perf_counter() - start < 1.0  # no fit, no time limit waited
    # ... unless failed rows are redone (the timeout happens again, the row is replaced).
    again = runner.run(profile, out, n_jobs=1, backend="threading", progress=False, redo_failed=True)
    assert len(again) == 2 and sorted(again["status"]) == ["ok", "timeout"]


def test_plan_tasks_and_cli_overrides():
    args = runner.build_parser().parse_args(
        ["--profile", "laptop", "--datasets", "nguyen", "--methods", "gp=8", "nesymres",
         "--n-points", "32", "64", "--time-limit", "5"]
    )
    profile = runner.profile_from_args(args)
    assert profile.methods == {"gp": (8,), "nesymres": (1, 4, 16, 32)}
    assert profile.datasets == {"nguyen": None} and profile.n_points == (32, 64)
    tasks = runner.plan_tasks(profile, max_equations=2)
    assert len(tasks) == 2 * (1 + 4) * 2
    assert len({task.key for task in tasks}) == len(tasks)
    with pytest.raises(ValueError, match="Unknown method"):
        runner.profile_from_args(runner.build_parser().parse_args(["--methods", "eureqa"]))


def test_summary_counts_failures_as_not_recovered():
    frame = pd.DataFrame(
        {
            "dataset": "d", "equation": ["a", "b", "c", "d"], "method": ["m", "m", "m", "x"],
            "parameter": "p", "value": 1, "n_points": 128,
            "status": ["ok", "timeout", "ok", "not_installed"], "fit_time": [1.0, 3.0, 2.0, None],
            "a1_iid": [1, None, 0, None], "a1_ood": [1, None, 1, None],
            "a2_iid": [1, None, 1, None], "a2_ood": [0, None, 0, None],
            "error": [None, "time limit", None, "not installed: x"],
        }
    )
    summary = summarize(frame)
    assert len(summary) == 1
    row = summary.iloc[0]
    assert row["n"] == 3 and row["failed"] == 1 and row["fit_time"] == pytest.approx(2.0)
    assert row["a1_iid"] == pytest.approx(1 / 3) and row["a1_ood"] == pytest.approx(2 / 3)
    text = markdown_tables(frame)
    assert "| m | p=1 | 2.00 | 33.3 | 66.7 | 66.7 | 0.0 | 1 |" in text
    assert "- x: not installed: x" in text


def test_splice_appends_a_block(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text("# Title\n")
    splice(path, "table")
    splice(path, "table 2")
    text = path.read_text()
    assert text.count("<!-- results:start -->") == 1 and "table 2" in text and "table\n" not in text
