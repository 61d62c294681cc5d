import pandas as pd
import pytest

from benchmarks.report import markdown_tables, splice, summarize


def test_summary_counts_failures_as_not_recovered():
    frame = pd.DataFrame(
        {
            "dataset": "d",
            "equation": ["a", "b", "c", "d"],
            "method": ["m", "m", "m", "x"],
            "parameter": "p",
            "value": 1,
            "n_points": 128,
            "status": ["ok", "timeout", "ok", "not_installed"],
            "fit_time": [1.0, 3.0, 2.0, None],
            "a1_iid": [1, None, 0, None],
            "a1_ood": [1, None, 1, None],
            "a2_iid": [1, None, 1, None],
            "a2_ood": [0, None, 0, None],
            "error": [None, "time limit", None, "not installed: x"],
        }
    )
    summary = summarize(frame)
    assert len(summary) == 1
    row = summary.iloc[0]
    assert row["n"] == 3 and row["failed"] == 1 and row["fit_time"] == pytest.approx(2.0)
    assert row["a1_iid"] == pytest.approx(1 / 3) and row["a1_ood"] == pytest.approx(2 / 3)
    text = markdown_tables(frame)
    assert "| m | p=1 | 2.00 | 33.3 | 66.7 | 66.7 | 0.0 | - | - | - | 1 |" in text
    assert "- x: not installed: x" in text


def test_method_labels_tell_gaussian_process_from_genetic_programming():
    frame = pd.DataFrame(
        {
            "dataset": "nguyen",
            "equation": ["a", "a"],
            "method": ["gpr", "gplearn"],
            "parameter": ["n_restarts_optimizer", "population_size"],
            "value": [8, 1024],
            "n_points": 128,
            "status": "ok",
            "fit_time": 1.0,
            "a1_iid": 1,
            "a1_ood": 0,
            "a2_iid": 1,
            "a2_ood": 0,
        }
    )
    text = markdown_tables(frame)
    assert "| Gaussian Process | n_restarts_optimizer=8 |" in text
    assert "| Genetic Prog. (gplearn) | population_size=1024 |" in text


def test_splice_appends_a_block(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text("# Title\n")
    splice(path, "table")
    splice(path, "table 2")
    text = path.read_text()
    assert text.count("<!-- results:start -->") == 1 and "table 2" in text and "table\n" not in text


def test_committed_results_and_labels_use_the_registered_method_names():
    from pathlib import Path

    from benchmarks.methods import METHODS
    from benchmarks.report import METHOD_COLORS, METHOD_LABELS, load_results

    assert set(METHOD_LABELS) == set(METHOD_COLORS) == set(METHODS)
    import benchmarks.fastsrb.true_noise  # noqa: F401  (registers ours-true-noise, whatever ran before)
    from benchmarks.fastsrb.methods import METHODS as FASTSRB_METHODS

    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    fastsrb = results / "fastsrb"  # its own runner, rows and methods (benchmarks/fastsrb)
    # studies' own rows: one per setting, split or law (benchmarks/studies/search_settings, black_box,
    # noise_level, selection_rules, noise_variants, wild_misses)
    studies = {
        results / "search-settings",
        results / "black-box",
        results / "noise-level",
        results / "noise-search",
        results / "wild-misses",
    }
    paths = sorted(path for path in results.rglob("*.csv") if not ({fastsrb} | studies) & set(path.parents))
    assert paths
    for path in paths:
        assert set(load_results(path)["method"]) <= set(METHODS), path
    fastsrb_paths = sorted(fastsrb.glob("*.csv"))
    assert fastsrb_paths
    for path in fastsrb_paths:
        assert set(pd.read_csv(path)["method"]) <= set(FASTSRB_METHODS), path


def test_committed_result_files_follow_the_naming_rule():
    """benchmarks/results/README.md: lowercase words and numbers joined by hyphens, then the extension."""
    import re
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    rule = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*(\.[a-z]+)*")
    paths = [path.relative_to(results) for path in results.rglob("*") if path.name != "README.md"]
    assert len(paths) > 100
    offenders = [str(path) for path in paths if not all(rule.fullmatch(part) for part in path.parts)]
    assert not offenders, f"rename to lowercase-with-hyphens: {offenders}"


def test_summary_and_tables_keep_noise_levels_apart():
    frame = pd.DataFrame(
        {
            "dataset": "d",
            "equation": ["a", "a", "b", "b"],
            "method": "m",
            "parameter": "p",
            "value": 1,
            "n_points": 128,
            "noise": [0.0, 0.1, 0.0, 0.1],
            "status": "ok",
            "fit_time": 1.0,
            "a1_iid": [1, 0, 1, 1],
            "a1_ood": [1, 0, 1, 0],
            "a2_iid": 1,
            "a2_ood": 1,
            "r2_iid": [1.0, 0.9, 1.0, 0.7],
        }
    )
    summary = summarize(frame).set_index("noise")
    assert summary.loc[0.0, "a1_iid"] == 1.0 and summary.loc[0.1, "a1_iid"] == 0.5
    assert summary.loc[0.1, "r2_iid"] == pytest.approx(0.8)
    text = markdown_tables(frame)
    assert "| m | p=1 | 1.00 | 100.0 | 100.0 |" in text and "| m | p=1, noise 0.1 | 1.00 | 50.0 | 0.0 |" in text
    # A frame without the column is noise 0.
    assert summarize(frame[frame["noise"] == 0].drop(columns="noise"))["noise"].tolist() == [0.0]
