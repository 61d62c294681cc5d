import json
import multiprocessing
import os
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks import results as results_module
from benchmarks import runner
from benchmarks.datasets import Equation
from benchmarks.isolation import evaluate_task, run_task
from benchmarks.methods import METHODS
from benchmarks.methods.base import Adapter
from benchmarks.profiles import PROFILES, Profile
from benchmarks.report import write_report
from benchmarks.results import (
    add_missing_columns,
    append_rows,
    drop_failed,
    drop_incomplete_row,
    locked,
    merge_results,
    read_done,
    read_results,
)
from benchmarks.tasks import COLUMNS, Task, longest_first, pending, plan_tasks


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


class OracleAdapter(Adapter):
    """Predicts the true values of ``EQUATION``, whatever it was trained on."""

    name, parameter = "oracle", "knob"

    def _fit(self, X, y):
        self.train_y_ = y

    def predict(self, X):
        return EQUATION.evaluate(X)

    def expression(self):
        return EQUATION.expression


class BlockingAdapter(Adapter):
    """Never returns from fit: only the time limit ends it, however fast the machine."""

    name, parameter = "blocking", "knob"

    def _fit(self, X, y):
        threading.Event().wait()


class FlakyAdapter(Adapter):
    """Raises until the file ``options["fixed"]`` exists, then predicts the mean."""

    name, parameter = "flaky", "knob"

    def _fit(self, X, y):
        if not Path(self.options["fixed"]).exists():
            raise RuntimeError("not fixed yet")
        self.mean_ = float(y.mean())

    def predict(self, X):
        return np.full(len(X), self.mean_)


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


FAKE_METHODS = (
    SleepAdapter,
    OracleAdapter,
    BlockingAdapter,
    FlakyAdapter,
    FailingAdapter,
    ImportingAdapter,
    CrashingAdapter,
    MissingAdapter,
)


@pytest.fixture
def fake_methods(monkeypatch):
    # Children are forked, so they see the patched registry; runs that use these
    # methods take the threading backend (loky workers would not see the patch).
    for cls in FAKE_METHODS:
        monkeypatch.setitem(METHODS, cls.name, cls)


EQUATION = Equation("toy", "square", "x_1**2", ((1.0, 2.0),))


def test_timeout_kills_the_fit(fake_methods):
    children = set(multiprocessing.active_children())
    row = run_task(Task(EQUATION, "blocking", 1, n_points=16, n_test_points=100), time_limit=0.5)
    assert row["status"] == "timeout" and row["error"] == "time limit of 0.5 s reached"
    assert row["method"] == "blocking" and row["equation"] == "square" and row["setting"] == "knob=1"
    assert row["fit_time"] == row["total_time"]  # a timeout's fit time is the time waited
    # The blocked child was killed and reaped, not left behind.
    assert set(multiprocessing.active_children()) <= children


def test_task_within_the_limit(fake_methods):
    row = run_task(Task(EQUATION, "sleep", 0.05, n_points=16, n_test_points=100), time_limit=60.0)
    assert row["status"] == "ok" and "error" not in row
    assert row["a1_iid"] is False and row["r2_iid"] == pytest.approx(0.0, abs=0.1)
    assert float(row["expression"]) == EQUATION.sample_train(16, seed=0)[1].mean()
    # fit_time covers the fit (which sleeps 0.05 s), total_time also sampling and scoring.
    assert row["fit_time"] >= 0.049 and row["total_time"] >= row["fit_time"]


def test_a_dying_fit_is_recorded_as_crashed(fake_methods):
    row = run_task(Task(EQUATION, "crashing", 1, n_points=16, n_test_points=100), 30.0)
    assert row["status"] == "crashed" and "code 3" in row["error"]


def test_errors_and_import_errors_are_recorded(fake_methods):
    row = run_task(Task(EQUATION, "failing", 1, n_points=16, n_test_points=100), 30.0)
    assert row["status"] == "error" and row["error"] == "RuntimeError: diverged"
    row = run_task(Task(EQUATION, "importing", 1, n_points=16, n_test_points=100), 30.0)
    assert row["status"] == "not_installed" and "no_such_package_for_tests" in row["error"]


@pytest.mark.slow
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


@pytest.mark.slow
def test_quick_profile_end_to_end_and_resume(tmp_path):
    out = tmp_path / "quick.csv"
    quick = PROFILES["quick"]
    results = runner.run(quick, out, n_jobs=2, progress=False, command="test")
    n_equations = sum(len(v) for v in quick.datasets.values())
    assert len(results) == n_equations * sum(len(v) for v in quick.methods.values())
    assert list(pd.read_csv(out).columns) == COLUMNS
    for method in ("nesymres", "gplearn", "gpr", "operon", "dsr"):
        rows = results[results["method"] == method]
        assert (rows["status"] == "ok").all(), rows[["status", "error"]]
        assert rows["a1_iid"].isin([0, 1]).all() and rows["fit_time"].gt(0).all()
    assert results[results["method"] == "gpr"]["expression"].isna().all()
    assert results[results["method"] == "operon"]["expression"].notna().all()
    assert out.with_suffix(".json").exists()

    # A second run finds nothing left to do and leaves the file as it is.
    assert pending(plan_tasks(quick), read_done(out)) == []
    content = out.read_bytes()
    again = runner.run(quick, out, n_jobs=2, progress=False)
    assert out.read_bytes() == content and again.equals(results)

    # Reports: plots, markdown and a docs block.
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\nintro\n\n<!-- results:start -->\nold\n<!-- results:end -->\n\noutro\n")
    written = write_report(out, tmp_path / "report", docs)
    names = {p.name for p in written}
    assert {"quick-aifeynman-time.png", "quick-nguyen-time.png", "quick.md", "benchmarks.md"} <= names
    text = docs.read_text()
    assert "old" not in text and "intro" in text and "outro" in text
    assert "| NeSymReS | beam_size=1 |" in text and "| Gaussian Process | n_restarts_optimizer=1 |" in text
    assert "`test`" in text and "PySR: not installed" in text


@pytest.mark.slow
def test_resume_skips_done_rows_and_redoes_failed(fake_methods, tmp_path):
    fixed = tmp_path / "fixed"
    profile = Profile(
        datasets={"nguyen": ["Nguyen-1"]},
        methods={"sleep": (0,), "flaky": (1,)},
        n_points=(16,),
        time_limit=60.0,
        method_options={"flaky": {"fixed": str(fixed)}},
    )
    out = tmp_path / "run.csv"
    first = runner.run(profile, out, n_jobs=2, backend="threading", progress=False)
    assert dict(zip(first["method"], first["status"])) == {"sleep": "ok", "flaky": "error"}
    assert read_done(out) == {
        ("nguyen", "Nguyen-1", "sleep", 0.0, 16, 0, 0.0),
        ("nguyen", "Nguyen-1", "flaky", 1.0, 16, 0, 0.0),
    }
    # The failing fit would now succeed, but a plain rerun runs nothing: the file is unchanged.
    fixed.touch()
    content = out.read_bytes()
    again = runner.run(profile, out, n_jobs=1, backend="threading", progress=False)
    assert out.read_bytes() == content and again.equals(first)
    # With redo_failed the error row is replaced by a new fit; the ok row is kept as it was.
    redone = runner.run(profile, out, n_jobs=1, backend="threading", progress=False, redo_failed=True)
    assert len(redone) == 2 and dict(zip(redone["method"], redone["status"])) == {"sleep": "ok", "flaky": "ok"}
    (ok_line,) = [line for line in content.decode().splitlines() if ",sleep," in line]
    assert ok_line in out.read_text().splitlines()


def test_result_file_format_and_dropping_failed_rows(tmp_path):
    path = tmp_path / "rows.csv"
    base = {"dataset": "d", "equation": "e", "method": "m", "parameter": "p", "value": 1, "n_points": 16, "seed": 0}
    statuses = ["ok", "error", "timeout", "crashed", "not_installed"]
    append_rows(
        path,
        [
            {**base, "value": i, "status": s, "a1_iid": True, "r2_iid": 0.1, "extra": "x"}
            for i, s in enumerate(statuses)
        ],
    )
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 6
    first = dict(zip(COLUMNS, lines[1].split(",")))
    assert first["a1_iid"] == "1" and first["r2_iid"] == "0.1" and first["expression"] == ""
    drop_failed(path)
    assert list(read_results(path)["status"]) == ["ok", "not_installed"]
    assert read_done(path) == {("d", "e", "m", 0.0, 16, 0, 0.0), ("d", "e", "m", 4.0, 16, 0, 0.0)}


@pytest.mark.slow
def test_a_row_cut_short_is_dropped_and_its_task_runs_again(fake_methods, tmp_path, caplog):
    profile = Profile(datasets={"nguyen": ["Nguyen-1", "Nguyen-8"]}, methods={"sleep": (0,)}, n_points=(16,))
    out = tmp_path / "run.csv"
    first = runner.run(profile, out, n_jobs=1, backend="threading", progress=False)
    content = out.read_bytes()
    # The run was killed while writing its last row.
    out.write_bytes(content[:-40])
    again = runner.run(profile, out, n_jobs=1, backend="threading", progress=False)
    assert "Cut the incomplete last row" in caplog.text
    assert sorted(again["equation"]) == ["Nguyen-1", "Nguyen-8"] and (again["status"] == "ok").all()
    assert out.read_text().splitlines()[:2] == content.decode().splitlines()[:2]  # header, first row
    assert len(again) == len(first) and drop_incomplete_row(out) is None


def test_an_incomplete_row_is_found_inside_a_quoted_cell(tmp_path):
    path = tmp_path / "rows.csv"
    base = {"dataset": "d", "equation": "e", "method": "m", "value": 1, "n_points": 16, "seed": 0}
    append_rows(path, [{**base, "status": "ok"}, {**base, "value": 2, "status": "error", "error": "one\ntwo"}])
    whole = path.read_text()
    assert drop_incomplete_row(path) is None and path.read_text() == whole
    append_rows(path, [{**base, "value": 3, "status": "error", "error": "three\nfour"}])
    # Cut just after the line break inside the last row's quoted error: the file ends with a line break.
    text = path.read_text()
    path.write_text(text[: text.rindex("three\n") + len("three\n")])
    assert drop_incomplete_row(path).startswith("d,e,m,,3,")
    assert path.read_text() == whole
    assert list(read_results(path)["error"].fillna("")) == ["", "one\ntwo"]


@pytest.mark.slow
def test_a_second_run_on_the_same_file_is_refused(fake_methods, tmp_path):
    profile = Profile(datasets={"nguyen": ["Nguyen-1"]}, methods={"sleep": (0,)}, n_points=(16,))
    out = tmp_path / "run.csv"
    with locked(out), pytest.raises(RuntimeError, match="being written by another run"):
        runner.run(profile, out, backend="threading", progress=False)
    assert len(runner.run(profile, out, backend="threading", progress=False)) == 1


def _wait_for(started, release) -> None:
    started.set()  # after the process's start-up, which closes the inherited lock
    release.wait(60)


def test_a_process_forked_during_a_run_does_not_keep_its_lock(tmp_path):
    out = tmp_path / "run.csv"
    context = multiprocessing.get_context("fork")
    started, release = context.Event(), context.Event()
    with locked(out):
        lingering = context.Process(target=_wait_for, args=(started, release), daemon=True)
        lingering.start()
        assert started.wait(60)
    try:
        assert lingering.is_alive()
        with locked(out):  # the child still lives, and the lock was released with the run
            pass
    finally:
        release.set()
        lingering.join()


def test_merging_the_files_of_several_machines(tmp_path, capsys):
    base = {"dataset": "d", "equation": "e", "method": "m", "parameter": "p", "n_points": 16, "seed": 0}
    one, two, out = tmp_path / "one.csv", tmp_path / "two.csv", tmp_path / "all.csv"
    append_rows(one, [{**base, "value": 1, "status": "ok", "r2_iid": 0.1}, {**base, "value": 2, "status": "error"}])
    append_rows(
        two,
        [
            {**base, "value": 2.0, "status": "ok", "r2_iid": 0.2},
            {**base, "value": 1, "status": "ok", "r2_iid": 0.3},
            {**base, "value": 3, "status": "timeout"},
        ],
    )
    assert results_module.main(["merge", str(one), str(two), "--out", str(out)]) == 0
    assert "3 rows in" in capsys.readouterr().out
    merged = read_results(out)
    # One row per task: the first file's ok row, the second file's ok row over an error.
    assert list(merged["value"]) == [1, 2, 3] and list(merged["status"]) == ["ok", "ok", "timeout"]
    assert merged["r2_iid"].iloc[:2].tolist() == [0.1, 0.2] and np.isnan(merged["r2_iid"].iloc[2])
    assert list(merged.columns) == COLUMNS and read_done(out) == {
        ("d", "e", "m", float(v), 16, 0, 0.0) for v in (1, 2, 3)
    }
    # Merging into one of the sources is allowed.
    assert len(merge_results([out, one], one)) == 3


def test_plan_tasks_and_cli_overrides():
    args = runner.build_parser().parse_args(
        [
            "--profile",
            "laptop",
            "--datasets",
            "nguyen",
            "--methods",
            "gpr=8",
            "nesymres",
            "--n-points",
            "32",
            "64",
            "--time-limit",
            "5",
        ]
    )
    profile = runner.profile_from_args(args)
    assert profile.methods == {"gpr": (8,), "nesymres": (1, 4, 16, 32)}
    assert profile.datasets == {"nguyen": None} and profile.n_points == (32, 64)
    tasks = plan_tasks(profile, max_equations=2)
    assert len(tasks) == 2 * (1 + 4) * 2
    assert len({task.key for task in tasks}) == len(tasks)
    with pytest.raises(ValueError, match="Unknown method"):
        runner.profile_from_args(runner.build_parser().parse_args(["--methods", "eureqa"]))


def test_a_dataset_given_with_equations_keeps_only_those():
    from benchmarks.datasets import load_dataset

    given = ["--profile", "hybrid", "--datasets", "aifeynman:AIF-04,AIF-10", "nguyen", "--methods", "gpr"]
    profile = runner.profile_from_args(runner.build_parser().parse_args(given))
    assert profile.datasets == {"aifeynman": ["AIF-04", "AIF-10"], "nguyen": None}  # hybrid: all of Nguyen
    names = {task.equation.name for task in plan_tasks(profile)}
    assert names == {"AIF-04", "AIF-10"} | {equation.name for equation in load_dataset("nguyen")}
    bad = runner.profile_from_args(runner.build_parser().parse_args(["--datasets", "aifeynman:AIF-99"]))
    with pytest.raises(ValueError, match="no equations"):
        plan_tasks(bad)


def test_longest_fits_start_first():
    profile = Profile(
        datasets={"nguyen": ["Nguyen-1"]}, methods={"gpr": (32,), "nesymres": (1, 32), "gplearn": (1024,)}
    )
    order = [(task.method, task.value) for task in longest_first(plan_tasks(profile))]
    # gplearn 1024 x 128 points, nesymres 32 x 128, nesymres 1 x 128; the Gaussian process by restarts only.
    assert order == [("gplearn", 1024), ("nesymres", 32), ("nesymres", 1), ("gpr", 32)]


@pytest.mark.slow
def test_command_line_writes_rows_and_records_the_command(fake_methods, tmp_path, capsys):
    out = tmp_path / "cli.csv"
    argv = [
        "--profile",
        "quick",
        "--datasets",
        "nguyen",
        "--methods",
        "sleep=0",
        "missing=1",
        "--backend",
        "threading",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert runner.main(argv) == 0
    results = read_results(out)
    assert sorted(zip(results["method"], results["status"])) == [("missing", "not_installed"), ("sleep", "ok")]
    metadata = json.loads(out.with_suffix(".json").read_text())
    assert metadata["command"] == "python -m benchmarks.runner " + " ".join(argv)
    assert metadata["n_tasks"] == 2 and metadata["profile"]["methods"] == {"sleep": [0], "missing": [1]}
    assert f"2 rows in {out}" in capsys.readouterr().out


def test_noise_goes_to_the_training_targets_only(fake_methods):
    clean, noisy = (
        evaluate_task(Task(EQUATION, "oracle", 1, n_points=64, n_test_points=100, noise=level)) for level in (0.0, 0.1)
    )
    # The true equation scores perfectly on the test points whatever the training noise.
    for row in (clean, noisy):
        assert row["status"] == "ok" and row["noise"] in (0.0, 0.1)
        assert row["r2_iid"] == 1.0 and row["r2_ood"] == 1.0 and row["a1_iid"] and row["solution"]


@pytest.mark.slow
def test_noise_levels_are_tasks_of_their_own_and_resume_by_level(fake_methods, tmp_path):
    profile = Profile(datasets={"nguyen": ["Nguyen-1"]}, methods={"sleep": (0,)}, n_points=(16,), noise=(0.0, 0.1))
    out = tmp_path / "run.csv"
    first = runner.run(profile, out, backend="threading", progress=False)
    assert sorted(first["noise"]) == [0.0, 0.1] and (first["status"] == "ok").all()
    # The fake method predicts the training mean: noise on the training targets changes it.
    assert first["expression"].nunique() == 2
    assert read_done(out) == {("nguyen", "Nguyen-1", "sleep", 0.0, 16, 0, level) for level in (0.0, 0.1)}
    # A third level runs alone; the two done are skipped.
    more = profile.with_overrides(noise=(0.0, 0.01, 0.1))
    assert [task.noise for task in pending(plan_tasks(more), read_done(out))] == [0.01]
    assert sorted(runner.run(more, out, backend="threading", progress=False)["noise"]) == [0.0, 0.01, 0.1]


def test_a_file_without_a_noise_column_reads_as_noise_0_and_is_extended(fake_methods, tmp_path):
    profile = Profile(datasets={"nguyen": ["Nguyen-1"]}, methods={"sleep": (0,)}, n_points=(16,), noise=(0.0, 0.1))
    out = tmp_path / "old.csv"
    old_columns = [column for column in COLUMNS if column != "noise"]
    old_row = "nguyen,Nguyen-1,sleep,seconds,0,seconds=0,16,0,ok" + "," * (len(old_columns) - 9)
    out.write_text(",".join(old_columns) + "\n" + old_row + "\n")
    assert read_done(out) == {("nguyen", "Nguyen-1", "sleep", 0.0, 16, 0, 0.0)}
    assert read_results(out)["noise"].tolist() == [0.0]
    # The run adds the column (empty for the old row) and appends only the noisy fit under it.
    results = runner.run(profile, out, backend="threading", progress=False)
    assert out.read_text().splitlines()[0] == ",".join(COLUMNS)
    assert results["noise"].tolist() == [0.0, 0.1] and len(results) == 2
    assert add_missing_columns(out) == []


def test_merging_a_file_without_a_noise_column_with_a_noisy_one(tmp_path):
    old, new, out = tmp_path / "old.csv", tmp_path / "new.csv", tmp_path / "all.csv"
    old_columns = [column for column in COLUMNS if column != "noise"]
    old.write_text(",".join(old_columns) + "\n" + "d,e,m,p,1,p=1,16,0,ok" + "," * (len(old_columns) - 9) + "\n")
    base = {"dataset": "d", "equation": "e", "method": "m", "parameter": "p", "value": 1, "n_points": 16, "seed": 0}
    append_rows(new, [{**base, "noise": 0.0, "status": "error"}, {**base, "noise": 0.1, "status": "ok"}])
    merged = merge_results([old, new], out)
    # The old row is the noise-0 task (kept over the new error); the noisy task is another one.
    assert list(zip(merged["noise"], merged["status"])) == [(0.0, "ok"), (0.1, "ok")]
    assert out.read_text().splitlines()[1].split(",")[COLUMNS.index("noise")] == ""


def test_noise_from_the_command_line_and_the_noise_profile():
    args = runner.build_parser().parse_args(
        ["--profile", "noise", "--noise", "0", "0.01", "--seeds", "0", "--datasets", "nguyen"]
    )
    profile = runner.profile_from_args(args)
    assert profile.noise == (0.0, 0.01) and profile.methods == {"nesymres-operon": (1.0,), "operon-timed": (1.0,)}
    tasks = plan_tasks(profile, max_equations=1)
    assert [(task.method, task.noise) for task in tasks] == [
        (method, level) for method in ("nesymres-operon", "operon-timed") for level in (0.0, 0.01)
    ]
    assert PROFILES["noise"].noise == (0.0, 0.001, 0.01, 0.1) and PROFILES["noise"].seeds == (0, 1, 2)
    assert runner.profile_from_args(runner.build_parser().parse_args([])).noise == (0.0,)
