"""The studies of ``benchmarks.studies``: size selection (power-law extrapolation), data scaling, bank
statistics and model comparison."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.studies import compare_models, data_scaling, size_selection, variable_reader
from pretraining.bank import SkeletonBank, build_bank
from pretraining.generator import GeneratorConfig

#: Banks of the tests below keep SymPy's construction rules only: full simplification (the
#: default, tested in test_pretraining_generator.py) was most of their build time.
AUTOMATIC = GeneratorConfig(simplification="automatic")


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_data_scaling_table_is_sorted_by_bank_size(tmp_path):
    bank = tmp_path / "bank"
    build_bank(bank, n_skeletons=30, n_heldout=5, seed=1, n_jobs=1, chunk_size=20, chunks_per_shard=2, config=AUTOMATIC)
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

    build_bank(
        tmp_path, n_skeletons=40, n_heldout=0, seed=2, n_jobs=1, chunk_size=40, chunks_per_shard=2, config=AUTOMATIC
    )
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


def test_bank_statistics_share_draws_by_number_of_columns(tmp_path):
    from benchmarks.studies.bank_statistics import column_shares
    from pretraining.bank import SkeletonBank

    build_bank(
        tmp_path, n_skeletons=40, n_heldout=0, seed=2, n_jobs=1, chunk_size=40, chunks_per_shard=2, config=AUTOMATIC
    )
    bank = SkeletonBank(tmp_path)
    columns = np.array([max(int(t[2:]) for t in bank.tokens(k) if t.startswith("x_")) for k in range(len(bank))])
    shares = column_shares(bank, frequency_power=1.0)
    assert sorted(shares) == sorted(set(columns.tolist()))
    for n, (skeletons, draws) in shares.items():
        assert skeletons == pytest.approx(np.mean(columns == n))
        assert draws == pytest.approx(bank.counts[columns == n].sum() / bank.counts.sum())
    assert sum(draws for _, draws in shares.values()) == pytest.approx(1.0)


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

    build_bank(
        tmp_path / "bank",
        n_skeletons=60,
        n_heldout=0,
        seed=3,
        n_jobs=1,
        chunk_size=60,
        chunks_per_shard=2,
        config=AUTOMATIC,
    )
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
    """Stands in for the estimator in the search-settings study: records the parameters
    it was fitted with."""

    used: list = []

    def __init__(self, **params):
        self.params = params

    def fit(self, X, y):
        self.used.append(self.params)
        scaled = self.params["search_settings"].n_scaled > 0
        self.equations_ = pd.DataFrame({"origin": ["scaled" if scaled else "beam"]})
        self.timings_ = {"constant_fitting": 0.5}
        return self

    def predict(self, X):
        return np.zeros(len(X))


def test_linear_scaling_study_fits_with_and_without_the_scaling(monkeypatch):
    import benchmarks.studies.search_settings as study
    from benchmarks.datasets import load_dataset
    from nesymres_sklearn.search.settings import SearchSettings

    monkeypatch.setattr(_RecordingRegressor, "used", [])
    monkeypatch.setattr(study, "NeSymReSRegressor", _RecordingRegressor)
    rows = study.evaluate(load_dataset("nguyen")[0], 3, {"max_time": 1.0}, "linear-scaling")
    used = _RecordingRegressor.used
    assert [params["search_settings"] for params in used] == [SearchSettings(n_scaled=8), SearchSettings(n_scaled=0)]
    assert {k: v for k, v in used[0].items() if k != "search_settings"} == {
        "random_state": 3,
        "device": "cpu",
        "refine": None,
        "max_time": 1.0,
    }
    assert [(r["setting"], r["selected_scaled"], r["a1_ood"], r["fitting_seconds"]) for r in rows] == [
        ("scaled", True, False, 0.5),
        ("unscaled", False, False, 0.5),
    ]


def test_lm_scaling_study_fits_under_each_scaling(monkeypatch):
    import benchmarks.studies.search_settings as study
    from benchmarks.datasets import load_dataset

    monkeypatch.setattr(_RecordingRegressor, "used", [])
    monkeypatch.setattr(study, "NeSymReSRegressor", _RecordingRegressor)
    rows = study.evaluate(load_dataset("nguyen")[0], 0, {}, "lm-scaling")
    assert [params["search_settings"].lm_x_scale for params in _RecordingRegressor.used] == ["jac", 1.0]
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

    monkeypatch.setattr(_RecordingRegressor, "used", [])
    monkeypatch.setattr(study, "NeSymReSRegressor", _RecordingRegressor)
    rows = study.evaluate(load_dataset("nguyen")[0], 0, {"max_time": 3.0}, "network-share")
    used = [(p["search_settings"].network_share, p["refine"]) for p in _RecordingRegressor.used]
    assert used == [(0.5, "operon"), (0.25, "operon"), (0.75, "operon")]
    assert [r["setting"] for r in rows] == ["half", "quarter", "three-quarters"]
    _RecordingRegressor.used.clear()
    rows = study.evaluate(load_dataset("nguyen")[0], 0, {"max_time": 3.0}, "network-share", ["quarter"])
    assert [p["search_settings"].network_share for p in _RecordingRegressor.used] == [0.25]
    assert [r["setting"] for r in rows] == ["quarter"]


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


# --- bench_pretraining: the loop and data modes on tiny settings ----------------------


@pytest.fixture(scope="module")
def tiny_bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench_pretraining") / "bank"
    build_bank(
        folder, n_skeletons=60, n_heldout=0, seed=2, n_jobs=1, chunk_size=20, chunks_per_shard=2, config=AUTOMATIC
    )
    return folder


def _markdown_table(text: str, heading: str) -> tuple[list[str], list[list[str]]]:
    """The header cells and the body rows (cells) of the first table after ``heading``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert rows[1] == ["---"] * len(rows[0])
    return rows[0], rows[2:]


def _positive(cell: str) -> float:
    value = float(cell.replace(",", "").rstrip("%"))
    assert np.isfinite(value) and value > 0, cell
    return value


def _assert_head_and_foot(text: str, mode: str, threads: int | None = None) -> None:
    lines = text.splitlines()
    assert lines[0].startswith("# ")
    assert lines[2].startswith(f"Command: `python -m benchmarks.studies.bench_pretraining {mode} ")
    assert lines[3].startswith("Machine: ") and " cores, torch " in lines[3]
    if threads is not None:
        assert f"({threads} threads)" in lines[3]
    assert lines[4].startswith("Load average at the start (1/5/15 min): ")
    assert lines[-1].startswith("Load average at the end (1/5/15 min): ")


def test_bench_pretraining_without_a_mode_runs_them_all_and_each_mode_has_its_own_table():
    from benchmarks.studies import bench_pretraining

    assert bench_pretraining.parse_args(["--n-skeletons", "400", "--train-steps", "2"]).mode == "all"
    outputs = {mode: bench_pretraining.parse_args([mode, "--bank", "b"] if mode == "data" else [mode]).out
               for mode in bench_pretraining.OUTPUTS}  # fmt: skip
    assert outputs["all"].name == "pretraining-benchmark.md" and len(set(outputs.values())) == len(outputs)
    assert {path.parent.name for path in outputs.values()} == {"pretraining"}


@pytest.fixture
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_bench_pretraining_loop_mode_times_the_step_at_both_batch_sizes_and_profiles_it(tiny_bank, tmp_path):
    import torch

    from benchmarks.studies import bench_pretraining
    from nesymres_sklearn.network.model import config_for_size
    from pretraining.bank import SkeletonBank
    from pretraining.data import EquationSampler
    from pretraining.train import learning_rate, loss_function, make_state, train_step

    out = tmp_path / "loop.md"
    threads = torch.get_num_threads()
    bench_pretraining.main(
        ["loop", "--bank", str(tiny_bank), "--model-size", "tiny", "--batch-size", "4", "--points", "20",
         "--steps", "3", "--warmup-steps", "2", "--threads", "1", "--tiny-batch", "--tiny-steps", "3",
         "--profile-steps", "2", "--out", str(out)]
    )  # fmt: skip
    assert torch.get_num_threads() == threads  # restored
    text = out.read_text()
    _assert_head_and_foot(text, "loop", threads=1)
    header, rows = _markdown_table(text, "## Host time per step")
    assert header[:2] == ["step", "batch"] and header[-1] == "loss at the first step"
    by_label = {row[0]: row for row in rows}
    assert list(by_label) == ["step", "step, tiny batch"]
    assert [row[1] for row in rows] == ["4", "2"]
    for row in rows:
        assert row[3] == "3"  # timed steps
        low, high = (_positive(cell) for cell in row[5].split("-"))
        assert low <= _positive(row[4]) <= high
        for cell in (row[2], row[6], row[7], row[8]):
            _positive(cell)
    assert "compiled" not in text  # only with --compile
    # The first timed step is the library's step on the first batch, from the initial weights.
    config = bench_pretraining.loop_config("tiny", 4, 20, threads=1)
    model_config = config_for_size("tiny", SkeletonBank(tiny_bank).n_variables)
    runtime = bench_pretraining.cpu_runtime(config)
    sampler = EquationSampler(
        SkeletonBank(tiny_bank), config.data, model_config.n_variables, max_length=model_config.max_length
    )
    (batch,) = bench_pretraining.make_batches(sampler, 1)
    state = make_state(config, model_config, runtime)
    torch.manual_seed(bench_pretraining.SEED)
    loss, _ = train_step(batch, loss_function(state.model), state, config, runtime, learning_rate(state, config))
    assert float(by_label["step"][8]) == pytest.approx(loss.item(), abs=2e-6)
    for heading in ("## Where the step spends its host time (batch 4", "## Where the step spends its "
                    "host time at batch 2"):  # fmt: skip
        header, rows = _markdown_table(text, heading)
        assert header[0] == "operator" and 1 <= len(rows) <= 12
        for row in rows:
            assert row[0].startswith("`") and all(np.isfinite(float(c.rstrip("%"))) for c in row[1:])
            _positive(row[1])
        shares = [float(row[3].rstrip("%")) for row in rows]
        assert shares == sorted(shares, reverse=True) and sum(shares) <= 100.5


def test_bench_pretraining_data_mode_measures_loader_workers_and_one_process(tiny_bank, tmp_path):
    from benchmarks.studies import bench_pretraining

    out = tmp_path / "data.md"
    bench_pretraining.main(
        ["data", "--bank", str(tiny_bank), "--bank-size", "50", "--workers", "1", "--batch-size", "8",
         "--warmup-batches", "1", "--batches", "2", "--out", str(out)]
    )  # fmt: skip
    text = out.read_text()
    _assert_head_and_foot(text, "data")
    assert "50 training skeletons" in text and "frequency weighting to the power 0.75" in text
    header, rows = _markdown_table(text, "## Data loading")
    assert header[0] == "processes" and header[-2:] == ["equations/s", "equations/s per worker"]
    assert [row[0] for row in rows] == ["1 (this process, `EquationSampler.batch`)", "1 worker(s)"]
    for row in rows:
        assert row[1] == "2"
        for cell in row[2:]:
            _positive(cell)
        assert row[4] == row[5]  # one process: per worker = in total
        assert 50 * 0.5 <= float(row[3]) <= 200
    assert "_COMPILED_SKELETONS" in text and "misses more on a large bank" in text


@pytest.mark.slow
def test_batch_scaling_scales_the_rate_and_validates_every_run_on_the_same_batches(tmp_path):
    from benchmarks.studies import batch_scaling

    bank = tmp_path / "bank"
    build_bank(
        bank, n_skeletons=40, n_heldout=10, seed=2, n_jobs=1, chunk_size=20, chunks_per_shard=2, config=AUTOMATIC
    )
    assert batch_scaling.scaled_rate(256, 64, 4e-4, 0.5) == pytest.approx(8e-4)
    assert batch_scaling.scaled_rate(256, 64, 4e-4, 1.0) == pytest.approx(1.6e-3)
    assert batch_scaling.scaled_rate(256, 64, 4e-4, 0.0) == pytest.approx(4e-4)
    out = tmp_path / "table.md"
    argv = ["--bank", str(bank), "--out-dir", str(tmp_path / "runs"), "--equations", "32", "--batch-sizes", "8",
            "16", "--base-batch", "8", "--base-rate", "1e-3", "--n-val-batches", "1", "--out", str(out)]  # fmt: skip
    batch_scaling.main(argv)
    rows = [
        line.split("|")[1:-1] for line in out.read_text().splitlines() if line.startswith("| ") and "---" not in line
    ]
    body = [[cell.strip() for cell in row] for row in rows[1:]]
    assert [row[:3] for row in body] == [["8", "0.001", "4"], ["16", "0.00141", "2"]]
    assert [row[3] for row in body] == ["32", "32"]  # equal equations
    for run in ("batch-8", "batch-16"):
        assert (tmp_path / "runs" / run / "model" / "model.safetensors").exists()
    assert all(0 < float(row[6]) < 10 and 0 <= float(row[7]) <= 1 for row in body)


def test_noise_study_tables_per_level_and_pairs_the_solution_rate_by_level():
    from benchmarks.studies import noise

    rows = []
    # solution of A and B per equation, seed and level; e3's fit of A at 0.1 fails.
    solutions = {
        ("e1", 0.0): (1, 1),
        ("e2", 0.0): (1, 0),
        ("e3", 0.0): (1, 0),
        ("e1", 0.1): (1, 0),
        ("e2", 0.1): (0, 0),
        ("e3", 0.1): (None, 1),
    }
    for (equation, level), pair in solutions.items():
        for method, solution in zip(("A", "B"), pair):
            for seed in (0, 1):
                failed = solution is None
                rows.append(
                    dict(
                        dataset="d",
                        equation=equation,
                        method=method,
                        parameter="max_time",
                        value=1.0,
                        n_points=128,
                        seed=seed,
                        noise=level,
                        status="error" if failed else "ok",
                        fit_time=1.0,
                        solution=solution,
                        a1_ood=solution,
                        r2_iid=None if failed else 0.5 + 0.5 * solution,
                        **{column: 0 for column in ("a1_iid", "a2_iid", "a2_ood")},
                    )
                )
    results = pd.DataFrame(rows)
    table = noise.noise_table(results).set_index(["method", "noise"])
    assert table.loc[("A", 0.0), "solution"] == pytest.approx(1.0) and table.loc[("B", 0.0), "solution"] == 1 / 3
    # The failed fit counts as no solution, and has no R^2.
    assert table.loc[("A", 0.1), "solution"] == pytest.approx(1 / 3) and table.loc[("A", 0.1), "failed"] == 2
    assert table.loc[("A", 0.1), "r2_iid"] == pytest.approx(0.75) and table.loc[("B", 0.1), "a1_ood"] == 1 / 3
    paired = noise.paired_by_noise(results, "A", "B", n_resamples=500).set_index("noise")
    assert paired.loc[0.0, "difference"] == pytest.approx(200 / 3) and paired.loc[0.1, "difference"] == 0.0
    assert (paired["pairs"] == 6).all()
    assert paired.loc[0.0, "low"] <= paired.loc[0.0, "difference"] <= paired.loc[0.0, "high"]
    # An equation the run has not finished is left out of the tables.
    unfinished = dict(rows[0], equation="e4", solution=0, a1_ood=0)
    text = noise.markdown(pd.concat([results, pd.DataFrame([unfinished])]), "A", "B", n_resamples=500)
    assert "### d (3 equations)" in text
    assert "| A | max_time=1 | 0.1 | 6 | 33.3 | 33.3 | 0.7500 | 2 |" in text
    assert "| 1 | 0 | 100.0 | 33.3 | +66.7 [" in text


def test_paired_difference_keeps_noise_levels_apart():
    from benchmarks.studies.paired_difference import paired_table

    rows = [
        dict(dataset="d", equation="e", seed=0, value=1.0, noise=level, method=method, solution=solution)
        for level, scores in ((0.0, (1, 0)), (0.1, (0, 0)))
        for method, solution in zip("AB", scores)
    ]
    row = paired_table(pd.DataFrame(rows), "A", "B", "solution", n_resamples=100).iloc[0]
    assert row["pairs"] == 2 and row["difference"] == pytest.approx(50.0)


# --- device_data_speed: both generators, one table ---------------------------------


def test_device_data_speed_times_both_generators(tiny_bank, tmp_path):
    from benchmarks.studies import device_data_speed

    args = device_data_speed._parser().parse_args(
        ["--bank", str(tiny_bank), "--batches", "2", "--turn", "1", "--warmup-batches", "1", "--batch-size", "16",
         "--dtypes", "float32", "--out", str(tmp_path / "speed.md")]
    )  # fmt: skip
    lines = device_data_speed.measure(args, SkeletonBank(tiny_bank))
    header, rows = _markdown_table("\n".join(lines), "Bank: ")
    assert header[-2:] == ["equations/s per core", "against the host"]
    assert [row[0].split(" ")[0] for row in rows] == ["host", "device"]
    assert rows[0][-1] == "1.0x" and all(_positive(row[-2]) for row in rows)


def test_spurious_variables_flags_fake_fractions_only_in_inexact_fits_and_near_constants():
    import sympy

    from benchmarks.studies.spurious_variables import explains_little, fake_fractions

    x = sympy.Symbol("x0", real=True)
    assert fake_fractions(sympy.Rational(464, 11) + 0 * x, 0.2) == [sympy.Rational(464, 11)]
    assert fake_fractions(sympy.Rational(943, 2) * x + sympy.Rational(3, 2), 0.9) == [sympy.Rational(943, 2)]
    assert fake_fractions(sympy.Rational(3, 2) * sympy.sqrt(x), 0.9) == []  # plain, and a root's 1/2
    assert fake_fractions(sympy.Rational(464, 11) * x, 1.0) == []  # an exact fit supports it
    assert explains_little(sympy.Float(3.7), 0.0) and explains_little(x, 0.05) and not explains_little(x, 0.5)


def test_quintic_ratio_checks_the_law_symbolically_then_on_fresh_points():
    import sympy

    from benchmarks.studies.quintic_ratio import X0, X1, data, exactness

    X, y = data(0)
    assert X.shape == (200, 2) and np.allclose(y, X[:, 0] ** 5 / X[:, 1] ** 3)
    assert exactness(X0**5 / X1**3) == "yes (SymPy)"
    assert exactness(sympy.Float(1 + 1e-13) * X0**5 / X1**3) == "yes (points)"
    assert exactness(1.001 * X0**5 / X1**3).startswith("no (relative error 0.001")
    assert exactness(X0**5 / X1**3 + sympy.Symbol("x2", real=True)) == "no (other symbols)"


def test_identity_cost_times_the_identities_and_says_whether_they_found_a_law():
    from benchmarks.studies.identity_cost import timed

    rng = np.random.default_rng(0)
    X = rng.uniform(1, 10, (256, 3))
    seconds, found = timed(X, X[:, 0] * X[:, 1] / (X[:, 0] + X[:, 2]))
    assert found and seconds >= 0
    assert timed(X, np.sin(X[:, 0] * X[:, 1]))[1] is False  # no rational law of the features, their sines and cosines


def test_search_settings_pairs_each_setting_with_the_baseline_by_equation_and_seed():
    import pandas as pd

    from benchmarks.studies.search_settings import paired_table

    rows = []
    for equation in range(4):
        for setting, ood in (("half", equation % 2), ("quarter", 1)):
            rows.append(dict(dataset="d", equation=f"e{equation}", seed=0, setting=setting, a1_ood=ood, a1_iid=1))
    (row,) = paired_table(pd.DataFrame(rows), "half", "1 s", n_resamples=200)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:2] == ["1 s", "quarter - half"] and cells[-1] == "4"
    assert cells[2].startswith("+50.0 [") and cells[3] == "+0.0 [+0.0, +0.0]"


def test_variable_reader_scores_each_number_of_columns_and_pairs_the_last_model_with_the_first(tmp_path, monkeypatch):
    # VAL-WC-001 and -003 have 2 columns, -002 has 3 (benchmarks/datasets/validation_wc.csv).
    scores = {"three": [1.0, 0.0, 0.0], "eight": [1.0, 1.0, 1.0]}
    profiles = []

    def fake_run(profile, out, n_jobs, max_equations):
        profiles.append(profile)
        name = Path(out).stem
        return pd.DataFrame(
            dict(
                dataset="validation-wc",
                equation=f"VAL-WC-00{i + 1}",
                method="nesymres",
                parameter="beam_size",
                value=32,
                n_points=128,
                seed=0,
                status="ok",
                fit_time=float(i + 1),
                a1_iid=score,
                a1_ood=score,
                a2_iid=score,
                a2_ood=None,
            )
            for i, score in enumerate(scores[name])
        )

    monkeypatch.setattr(variable_reader, "run", fake_run)
    out = tmp_path / "table.md"
    variable_reader.main(
        ["three=m3", "eight=m8", "--datasets", "validation-wc", "--csv-dir", str(tmp_path), "--out", str(out)]
    )
    options = [p.method_options["nesymres"] for p in profiles]
    assert [o["model"] for o in options] == ["m3", "m8"]
    assert not options[0]["search_settings"].identities and not options[0]["search_settings"].exhaustive
    rows = {
        tuple(cell.strip() for cell in line.split("|")[1:5]): line
        for line in out.read_text().splitlines()
        if line.startswith("| validation-wc |") and line.count("|") == 10
    }
    # fits, A1 iid, A1 ood, A2 iid, A2 ood (a missing score counts as not recovered), median seconds
    assert rows[("validation-wc", "2", "three", "2")].endswith("| 50.0 | 50.0 | 50.0 | 0.0 | 2.00 |")
    assert rows[("validation-wc", "3", "three", "1")].endswith("| 0.0 | 0.0 | 0.0 | 0.0 | 2.00 |")
    assert rows[("validation-wc", "all", "eight", "3")].endswith("| 100.0 | 100.0 | 100.0 | 0.0 | 2.00 |")
    assert "| validation-wc | a1_iid | +66.7 [" in out.read_text()
    variable_reader.main(["three=m3", "--datasets", "validation-wc", "--csv-dir", str(tmp_path), "--out", str(out)])
    assert "| validation-wc | all | three | 3 | 33.3 |" in out.read_text() and "Paired" not in out.read_text()


def test_black_box_sets_have_their_sizes_and_an_unknown_one_is_named():
    from benchmarks.studies.black_box import black_box_set

    assert [black_box_set(name)[0].shape for name in ("diabetes", "friedman1", "friedman3")] == [
        (442, 10), (600, 10), (600, 4),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="Unknown black-box set 'boston'"):
        black_box_set("boston")


def test_black_box_study_scores_each_split_and_takes_the_median():
    from benchmarks.studies.black_box import markdown, run, summary

    results = run(["friedman1"], ["linear"], [1.0], [0, 1, 2])
    assert len(results) == 3 and results["budget"].eq(0.0).all()
    assert results["r2"].between(0.6, 0.8).all()  # a line explains about 0.73 of Friedman 1
    median = summary(results)["median_r2"].iloc[0]
    assert median == pytest.approx(np.median(results["r2"]))
    assert f"| friedman1 | linear | 0 | 3 | {round(median, 3):g} |" in markdown(results, "cmd")


def test_noise_level_study_counts_the_estimates_within_a_factor_of_one_and_a_half():
    from benchmarks.studies.noise_level import summary

    table = pd.DataFrame(
        dict(set=["a", "a", "a", "a"], equation=list("pqrs"), level=0.01, ratio=[1.0, 1.4, 1.6, 0.5], seconds=0.01,
             resolved=[True, True, False, False])
    )  # fmt: skip
    rows = summary(table)
    assert rows.loc[rows["set"] == "a", ["within", "low", "high"]].to_numpy().tolist() == [[0.5, 0.25, 0.25]]
    assert rows.loc[rows["set"] == "all", "n"].tolist() == [4]
    # the laws the points resolve, apart: both within
    assert rows.loc[rows["set"] == "all, resolved laws", ["n", "within"]].to_numpy().tolist() == [[2, 1.0]]


def test_wild_misses_summary_counts_misses_worse_than_the_mean_their_constants_and_added_columns():
    from benchmarks.fastsrb.wild_misses import summary

    frame = pd.DataFrame(
        {
            "law": ["a", "b", "c", "a", "b", "c"],
            "variant": ["ours"] * 6,
            "rule": ["held-out"] * 3 + ["score"] * 3,
            "fvu": [1.5, 0.2, 1.0, 2.0, 3.0, np.inf],
            "constant": [True, False, False, False, True, False],
            "beyond": [False, True, False, False, False, True],
        }
    )
    table = summary(frame).set_index("rule")
    # FVU exactly 1 is the mean's own: not wild
    assert table.loc["held-out", ["wild", "wild_constant", "beyond"]].tolist() == [1, 1, 1]
    assert table.loc["score", ["wild", "wild_constant", "beyond"]].tolist() == [3, 1, 1]
