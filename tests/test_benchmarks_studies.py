"""The studies of ``benchmarks.studies``: size selection (power-law extrapolation), data scaling, bank
statistics and model comparison."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.studies import compare_models, data_scaling, size_selection
from pretraining.bank import build_bank


def test_extrapolation_recovers_a_known_power_law():
    equations = np.linspace(6400, 200_000, 30)
    loss = size_selection.power_law(equations, 1.2, 40.0, 0.45)
    predicted = size_selection.extrapolate(equations, loss, 2e6)
    assert predicted == pytest.approx(size_selection.power_law(2e6, 1.2, 40.0, 0.45), rel=1e-3)
    assert np.isnan(size_selection.extrapolate(equations[:3], loss[:3], 2e6))


def _run(folder, model_size, losses, bank="bank", bank_size=None, seconds_per_row=10.0):
    folder.mkdir(parents=True)
    n = len(losses)
    pd.DataFrame(
        {
            "step": np.arange(1, n + 1) * 100,
            "equations": np.arange(1, n + 1) * 6400,
            "train_loss": losses,
            "val_loss": losses,
            "val_accuracy": 1 - np.asarray(losses) / 4,
            "elapsed_seconds": np.arange(1, n + 1) * seconds_per_row,
        }
    ).to_csv(folder / "log.csv", index=False)
    config = {"model_size": model_size, "model_overrides": {}, "bank": str(bank), "bank_size": bank_size}
    (folder / "train_config.json").write_text(json.dumps(config))
    return folder


def test_size_selection_compares_runs_at_their_common_wall_time(tmp_path):
    tiny = _run(tmp_path / "tiny", "tiny", [3.0, 2.5, 2.2, 2.0, 1.9, 1.85])
    small = _run(tmp_path / "small", "small", [3.2, 2.6, 2.1, 1.8], seconds_per_row=15.0)  # ends at 60 s
    out, png = tmp_path / "sizes.md", tmp_path / "sizes.png"
    size_selection.main([f"tiny={tiny}", f"small={small}", "--out", str(out), "--plot", str(png)])
    rows = {line.split("|")[1].strip(): line.split("|") for line in out.read_text().splitlines()[2:]}
    assert rows["tiny"][4].strip() == "60" and rows["tiny"][6].strip() == "1.850"
    assert rows["small"][6].strip() == "1.800"
    assert int(rows["small"][2].strip().replace(",", "")) > int(rows["tiny"][2].strip().replace(",", ""))
    assert rows["tiny"][3].strip() == "640" and rows["tiny"][8].strip() == "6"
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_data_scaling_table_is_sorted_by_bank_size(tmp_path):
    bank = tmp_path / "bank"
    build_bank(bank, n_skeletons=30, n_heldout=5, seed=1, n_jobs=1, chunk_size=20, chunks_per_shard=2)
    runs = [
        _run(tmp_path / "all", "tiny", [2.0, 1.5, 1.2], bank=bank),
        _run(tmp_path / "ten", "tiny", [2.5, 2.2], bank=bank, bank_size=10),
    ]
    out, png = tmp_path / "data.md", tmp_path / "data.png"
    data_scaling.main([str(r) for r in runs] + ["--out", str(out), "--plot", str(png), "--max-step", "200"])
    rows = [line.split("|") for line in out.read_text().splitlines()[2:]]
    assert [row[1].strip() for row in rows] == ["10", "30"]
    assert [row[3].strip() for row in rows] == ["200", "200"]  # the third step of "all" is left out
    assert rows[1][5].strip() == "1.500"
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_bank_statistics_weigh_lengths_by_generation_counts(tmp_path):
    from benchmarks.studies.bank_statistics import statistics
    from pretraining.bank import SkeletonBank

    build_bank(tmp_path, n_skeletons=40, n_heldout=0, seed=2, n_jobs=1, chunk_size=40, chunks_per_shard=2)
    bank = SkeletonBank(tmp_path)
    lengths = np.array([len(bank.ids(i)) for i in range(len(bank))])
    row = statistics(bank, short=9)
    assert row["uniform_short"] == pytest.approx(np.mean(lengths <= 9))
    assert row["frequency_length"] == pytest.approx((bank.counts * lengths).sum() / bank.counts.sum())
    assert row["trees"] == bank.counts.sum() and row["frequency_length"] < row["uniform_length"]
    tempered = statistics(bank, short=9, frequency_power=0.5)
    weights = np.sqrt(bank.counts) / np.sqrt(bank.counts).sum()
    assert tempered["frequency_length"] == pytest.approx((weights * lengths).sum())
    assert row["frequency_length"] < tempered["frequency_length"] < row["uniform_length"]
    assert statistics(bank, short=9, frequency_power=0.0)["frequency_length"] == pytest.approx(lengths.mean())


def _fits(model_scores: dict[int, list[float]]) -> pd.DataFrame:
    """Result rows of one model: per seed, one fit per A1-ood score (other metrics 1.0, one failed fit)."""
    rows = []
    for seed, scores in model_scores.items():
        for i, score in enumerate(scores):
            rows.append(
                dict(
                    dataset="aifeynman",
                    equation=f"AIF-{i}",
                    method="nesymres",
                    parameter="beam_size",
                    value=32,
                    n_points=128,
                    seed=seed,
                    status="ok",
                    fit_time=float(i + 1),
                    a1_iid=1.0,
                    a1_ood=score,
                    a2_iid=None if i == 0 else 1.0,
                    a2_ood=1.0,
                )
            )
    return pd.DataFrame(rows)


def test_compare_models_averages_over_seeds_and_lists_each_seed():
    table = compare_models.compare(
        {"old": _fits({0: [1.0, 0.0], 1: [0.0, 0.0]}), "new": _fits({0: [1.0, 1.0], 1: [1.0, 0.0]})}
    )
    old, new = table.set_index("model").loc["old"], table.set_index("model").loc["new"]
    assert old["fits"] == 4 and old["a1_ood"] == 25.0 and new["a1_ood"] == 75.0
    assert old["a1_ood_per_seed"] == "50.0 / 0.0" and new["a1_ood_per_seed"] == "100.0 / 50.0"
    assert old["a2_iid"] == 50.0  # a missing score counts as not recovered
    assert old["median_fit_time"] == 1.5
    lines = compare_models.markdown(table).splitlines()
    assert len(lines) == 4 and lines[2].startswith("| old | aifeynman | 4 | 100.0 | 25.0 | 50.0 |")


def test_compare_models_runs_each_folder_at_one_beam_over_the_seeds(tmp_path, monkeypatch):
    calls = []

    def fake_run(profile, out, n_jobs, progress):
        calls.append((profile, Path(out), n_jobs))
        return _fits({seed: [1.0] for seed in profile.seeds})

    monkeypatch.setattr(compare_models, "run", fake_run)
    out = tmp_path / "table.md"
    compare_models.main(
        [
            "a=folder/a",
            "b=folder/b",
            "--beam-size",
            "8",
            "--seeds",
            "3",
            "4",
            "--n-jobs",
            "2",
            "--csv-dir",
            str(tmp_path / "csv"),
            "--out",
            str(out),
        ]
    )
    assert [(c[0].methods, c[0].seeds, c[0].method_options, c[1].name, c[2]) for c in calls] == [
        ({"nesymres": (8,)}, (3, 4), {"nesymres": {"model": "folder/a"}}, "a.csv", 2),
        ({"nesymres": (8,)}, (3, 4), {"nesymres": {"model": "folder/b"}}, "b.csv", 2),
    ]
    assert [line.split("|")[1].strip() for line in out.read_text().splitlines()[2:]] == ["a", "b"]


def test_seen_skeletons_are_looked_up_by_image(tmp_path):
    from benchmarks.studies.seen_skeletons import main, seen_in_bank
    from pretraining.bank import SkeletonBank

    build_bank(tmp_path / "bank", n_skeletons=60, n_heldout=0, seed=3, n_jobs=1, chunk_size=60, chunks_per_shard=2)
    bank = SkeletonBank(tmp_path / "bank", "train")
    table = seen_in_bank(bank, ["nguyen"])
    assert len(table) == 12 and table["equation"].tolist()[0] == "Nguyen-1"
    # x_1 + x_1**2 + x_1**3 is seen exactly when the bank holds that skeleton's image.
    from benchmarks.datasets import load_dataset
    from nesymres_sklearn.expression.placeholders import attach_constants
    from nesymres_sklearn.expression.prefix import skeletonize
    from pretraining.bank import image_key, image_points

    points = image_points(3, bank.n_variables)
    keys = {int(k) for k in bank.image_keys}
    for equation, seen in zip(load_dataset("nguyen"), table["seen"]):
        tokens, kinds = attach_constants(skeletonize(equation.sympy_expr))
        assert seen == (image_key(tokens, kinds, points) in keys)
    results = tmp_path / "results.csv"
    pd.DataFrame(
        {"dataset": "nguyen", "equation": ["Nguyen-1", "Nguyen-2"], "method": "nesymres", "value": 32,
         "status": "ok", "a1_iid": [True, False], "a1_ood": [True, False]}
    ).to_csv(results, index=False)  # fmt: skip
    out = tmp_path / "seen.md"
    assert (
        main(["--bank", str(tmp_path / "bank"), "--datasets", "nguyen", "--results", str(results), "--out", str(out)])
        == 0
    )
    assert "| nguyen | 12 |" in out.read_text()


class _RecordingRegressor:
    """Stands in for the estimator in the search-settings study: records the module
    constants it was fitted under."""

    used: list = []

    def __init__(self, **params):
        self.params = params

    def fit(self, X, y):
        from nesymres_sklearn.search import fitting, linear_scaling

        self.used.append((linear_scaling.N_SCALED, fitting.X_SCALE, self.params))
        self.equations_ = pd.DataFrame({"origin": ["scaled" if linear_scaling.N_SCALED else "beam"]})
        self.timings_ = {"constant_fitting": 0.5}
        return self

    def predict(self, X):
        return np.zeros(len(X))


def test_linear_scaling_study_fits_with_and_without_the_scaling(monkeypatch):
    import benchmarks.studies.search_settings as study
    from benchmarks.datasets import load_dataset
    from nesymres_sklearn.search import linear_scaling

    monkeypatch.setattr(_RecordingRegressor, "used", [])
    monkeypatch.setattr(study, "NeSymReSRegressor", _RecordingRegressor)
    rows = study.evaluate(load_dataset("nguyen")[0], 3, {"max_time": 1.0}, "linear-scaling")
    used = _RecordingRegressor.used
    assert [n for n, _, _ in used] == [8, 0]
    assert linear_scaling.N_SCALED == 8  # restored afterwards
    assert used[0][2] == {"random_state": 3, "device": "cpu", "refine": None, "max_time": 1.0}
    assert [(r["setting"], r["selected_scaled"], r["a1_ood"], r["fitting_seconds"]) for r in rows] == [
        ("scaled", True, False, 0.5),
        ("unscaled", False, False, 0.5),
    ]


def test_lm_scaling_study_fits_under_each_scaling_and_restores_the_default(monkeypatch):
    import benchmarks.studies.search_settings as study
    from benchmarks.datasets import load_dataset
    from nesymres_sklearn.search import fitting

    monkeypatch.setattr(_RecordingRegressor, "used", [])
    monkeypatch.setattr(study, "NeSymReSRegressor", _RecordingRegressor)
    rows = study.evaluate(load_dataset("nguyen")[0], 0, {}, "lm-scaling")
    assert [x_scale for _, x_scale, _ in _RecordingRegressor.used] == ["jac", 1.0]
    assert fitting.X_SCALE == "jac"  # restored afterwards
    assert [r["setting"] for r in rows] == ["jacobian", "unit"]


def test_paired_difference_pairs_by_equation_and_seed_and_resamples_equations():
    from benchmarks.studies.paired_difference import markdown, paired_table

    rows = []
    for equation, (a, b) in {"e1": ((1, 1), (0, 0)), "e2": ((1, 0), (1, 0)), "e3": ((0, 0), (0, 1))}.items():
        for seed in (0, 1):
            rows.append(dict(dataset="d", equation=equation, seed=seed, value=1.0, method="A", a1_ood=a[seed]))
            rows.append(dict(dataset="d", equation=equation, seed=seed, value=1.0, method="B", a1_ood=b[seed]))
    rows.append(dict(dataset="d", equation="e4", seed=0, value=1.0, method="A", a1_ood=1))  # no partner
    rows.append(dict(dataset="d", equation="e5", seed=0, value=1.0, method="A", a1_ood=None))  # failed fit
    rows.append(dict(dataset="d", equation="e5", seed=0, value=1.0, method="B", a1_ood=1))
    table = paired_table(pd.DataFrame(rows), "A", "B", "a1_ood", n_resamples=2000)
    row = table.iloc[0]
    assert row["pairs"] == 7
    # per equation: e1 +100, e2 0, e3 -50, e5 -100 (a failed fit counts as not recovered)
    assert row["difference"] == pytest.approx(-12.5)
    assert -100 <= row["low"] < row["difference"] < row["high"] <= 100
    assert row["first"] == pytest.approx(100 * 3 / 7) and row["second"] == pytest.approx(100 * 3 / 7)
    assert "| d | 1 | 42.9 | 42.9 | -12.5 [" in markdown(table, "A", "B", "a1_ood")


def test_network_share_study_runs_the_hybrid_under_each_share(monkeypatch):
    import benchmarks.studies.search_settings as study
    from benchmarks.datasets import load_dataset
    from nesymres_sklearn import estimator

    shares = []

    class ShareRecorder(_RecordingRegressor):
        def fit(self, X, y):
            shares.append((estimator.NETWORK_SHARE_WITH_OPERON, self.params["refine"]))
            return super().fit(X, y)

    monkeypatch.setattr(_RecordingRegressor, "used", [])
    monkeypatch.setattr(study, "NeSymReSRegressor", ShareRecorder)
    rows = study.evaluate(load_dataset("nguyen")[0], 0, {"max_time": 3.0}, "network-share")
    assert shares == [(0.5, "operon"), (0.25, "operon"), (0.75, "operon")]
    assert estimator.NETWORK_SHARE_WITH_OPERON == 0.5  # restored afterwards
    assert [r["setting"] for r in rows] == ["half", "quarter", "three-quarters"]
    shares.clear()
    rows = study.evaluate(load_dataset("nguyen")[0], 0, {"max_time": 3.0}, "network-share", ["quarter"])
    assert shares == [(0.25, "operon")] and [r["setting"] for r in rows] == ["quarter"]


def paired_rows(method, scores):
    """One dataset, seed 0, setting 1: equation ``e{i}`` scores ``scores[i]`` (A1 ood)."""
    return pd.DataFrame(
        [
            dict(dataset="d", equation=f"e{i}", seed=0, value=1.0, method=method, a1_ood=score)
            for i, score in enumerate(scores)
        ]
    )


def test_paired_difference_merges_extra_result_files_first_file_first(tmp_path):
    from benchmarks.studies.paired_difference import main

    paired_rows("A", [1, 1, 0, 0]).to_csv(tmp_path / "first.csv", index=False)
    # The second file repeats A's fits with other scores: the first file's count.
    pd.concat([paired_rows("B", [1, 0, 0, 0]), paired_rows("A", [0, 0, 0, 0])]).to_csv(
        tmp_path / "second.csv", index=False
    )
    out = tmp_path / "paired.md"
    argv = [str(tmp_path / "first.csv"), "A", "B", "--extra", str(tmp_path / "second.csv"), "--out", str(out)]
    assert main(argv) == 0
    assert "| d | 1 | 50.0 | 25.0 | +25.0 [" in out.read_text() and "| 4 |" in out.read_text()


def test_paired_difference_second_from_pairs_a_method_with_its_earlier_run(tmp_path):
    from benchmarks.studies.paired_difference import main

    paired_rows("A", [1, 1, 1, 0]).to_csv(tmp_path / "new.csv", index=False)
    # The earlier run holds one fit twice: it counts once.
    earlier = paired_rows("A", [1, 0, 0, 0])
    pd.concat([earlier, earlier.iloc[:1]]).to_csv(tmp_path / "old.csv", index=False)
    out = tmp_path / "paired.md"
    argv = [str(tmp_path / "new.csv"), "A", "A", "--second-from", str(tmp_path / "old.csv"), "--out", str(out)]
    assert main(argv) == 0
    text = out.read_text()
    assert "| A | A (old) |" in text and "| d | 1 | 75.0 | 25.0 | +50.0 [" in text and "| 4 |" in text
