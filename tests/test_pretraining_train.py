"""Training loop: exact resume, SIGTERM checkpoint, 2-process DDP, settings, checkpoints,
threads, export, summary."""

import csv
import dataclasses
import json
import logging
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
import torch.distributed as dist

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.network.model import ModelConfig, NeSymReSModel, config_for_size
from pretraining import train as train_module
from pretraining.bank import build_bank
from pretraining.checkpoint import (
    CHECKPOINT,
    PREVIOUS_CHECKPOINT,
    CheckpointFormatError,
    load_checkpoint,
    upgrade_checkpoint,
)
from pretraining.config import FLAT_NAMES, TrainConfig, config_from_args, load_train_config
from pretraining.data import BatchConfig, EquationSampler
from pretraining.export import export_model
from pretraining.train import setup, summary_json, train
from pretraining.validate import main as validate_main
from pretraining.validate import validate_folder

TINY = dict(
    model_size="tiny",
    batch_size=8,
    min_points=40,
    max_points=80,
    checkpoint_every=2,
    eval_every=3,
    n_val_batches=2,
    log_every=1,
    num_workers=0,
    progress=False,
)


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bank")
    build_bank(folder, n_skeletons=60, n_heldout=10, seed=2, n_jobs=1, chunk_size=20, chunks_per_shard=2)
    return str(folder)


def _config(bank, out, **overrides):
    """A TrainConfig from flat names (the command-line options)."""
    return TrainConfig.from_dict({**TINY, "bank": bank, "out": str(out), **overrides})


def _cli(bank, out, **overrides):
    settings = {**TINY, **overrides}
    args = ["--bank", bank, "--out", str(out)]
    for key, value in settings.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            args.append(flag if value else "--no-" + key.replace("_", "-"))
        else:
            args += [flag, str(value)]
    return args


def _log(out):
    with open(out / "log.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
@pytest.mark.parametrize("data_source", ["host", "device"])
def test_resume_matches_uninterrupted_run(bank, tmp_path, data_source):
    full = train(_config(bank, tmp_path / "full", max_steps=6, data_source=data_source))
    assert full["step"] == 6 and math.isfinite(full["train_loss"]) and math.isfinite(full["val_loss"])
    train(_config(bank, tmp_path / "split", max_steps=3, data_source=data_source))
    resumed = train(_config(bank, tmp_path / "split", max_steps=6, data_source=data_source))
    a = load_checkpoint(tmp_path / "full" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert a["step"] == b["step"] == 6
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    assert resumed["train_loss"] == full["train_loss"]
    columns = ("step", "train_loss", "val_loss", "val_accuracy")
    rows = [[row[c] for c in columns] for row in _log(tmp_path / "full")]
    assert rows == [[row[c] for c in columns] for row in _log(tmp_path / "split")]
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4, 5, 6]


@pytest.mark.slow
@pytest.mark.parametrize("num_workers, whole_group", [(0, False), (1, True)])
def test_sigterm_checkpoints_and_resumes(bank, tmp_path, num_workers, whole_group):
    """SIGTERM to the trainer, or to its whole process group (data workers included,
    as a scheduler or Ctrl-C does), checkpoints and exits cleanly."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pretraining.train",
            *_cli(bank, out, max_steps=100000, checkpoint_every=100000, num_workers=num_workers),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not ((out / "log.csv").exists() and len(_log(out)) >= 2):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.2)
    if whole_group:
        os.killpg(process.pid, signal.SIGTERM)
    else:
        process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"]
    state = load_checkpoint(out / "checkpoint.pt")
    assert state["step"] == summary["step"] >= 2
    resumed = train(_config(bank, out, max_steps=state["step"] + 2))
    assert resumed["step"] == state["step"] + 2 and not resumed["stopped"]
    assert [int(row["step"]) for row in _log(out)] == list(range(1, state["step"] + 3))


def _torchrun_two_processes(bank, out, **overrides) -> dict:
    """``pretraining.train`` as 2 gloo processes through torchrun; its summary."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            "-m",
            "pretraining.train",
            *_cli(bank, out, device="cpu", **overrides),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


@pytest.mark.slow
def test_ddp_two_processes_gloo(bank, tmp_path):
    out = tmp_path / "ddp"
    summary = _torchrun_two_processes(bank, out, max_steps=4)
    assert summary["world_size"] == 2 and summary["step"] == 4
    assert summary["equations"] == 4 * 2 * TINY["batch_size"]
    first, second = summary["weight_checksums"]
    assert first == second
    assert math.isfinite(summary["train_loss"]) and math.isfinite(summary["val_loss"])
    assert load_checkpoint(out / "checkpoint.pt")["step"] == 4
    assert (out / "model" / "model.safetensors").exists()


def test_main_leaves_the_process_group_when_the_run_raises(monkeypatch, tmp_path):
    def failing_train(config):
        raise RuntimeError("run failed")

    monkeypatch.setattr(train_module, "train", failing_train)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError, match="run failed"):
            train_module.main(["--bank", "b", "--out", str(tmp_path / "out")])
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


#: A train_config.json as runs wrote it before the settings had sections (one key per
#: setting; this one, like several committed ones, predates ``weighting``).
OLD_FLAT_CONFIG = {
    "bank": "bank",
    "bank_size": 560000,
    "batch_size": 64,
    "checkpoint_every": 500,
    "device": "auto",
    "eval_every": 250,
    "export_dtype": "float32",
    "grad_clip": 1.0,
    "init_weights": None,
    "learning_rate": 0.0003,
    "log_every": 10,
    "max_points": 200,
    "max_steps": 2000,
    "min_points": 50,
    "model_overrides": {},
    "model_size": "tiny",
    "n_val_batches": 8,
    "num_workers": 1,
    "out": "runs/data-560000",
    "precision": "auto",
    "progress": False,
    "push_to_hub": None,
    "seed": 0,
}


def test_config_from_yaml_and_overrides(tmp_path):
    flat = tmp_path / "flat.yaml"
    flat.write_text("bank: b\nout: o\nmodel_size: tiny\nmax_steps: 7\nmodel_overrides:\n  max_length: 40\n")
    nested = tmp_path / "nested.yaml"
    nested.write_text(
        "run: {bank: b, out: o}\nmodel: {size: tiny, overrides: {max_length: 40}}\nschedule: {max_steps: 7}\n"
    )
    expected = TrainConfig(
        run={"bank": "b", "out": "o", "progress": False},
        model={"size": "tiny", "overrides": {"max_length": 40}},
        schedule={"max_steps": 9},
    )
    for path in (flat, nested):
        assert config_from_args(["--config", str(path), "--max-steps", "9", "--no-progress"]) == expected
    with pytest.raises(ValueError, match="Unknown model_size"):
        TrainConfig.from_dict({"model_size": "huge"})
    with pytest.raises(ValueError, match="Unknown settings"):
        TrainConfig.from_dict({"batch_sise": 64})
    with pytest.raises(SystemExit):
        config_from_args(["--bank", "b"])  # no run folder


def test_every_setting_has_one_command_line_option():
    values = {
        "bank": "b",
        "bank_size": 7,
        "out": "o",
        "seed": 3,
        "device": "cpu",
        "data_source": "device",
        "num_workers": 0,
        "num_threads": 3,
        "compile": True,
        "progress": False,
        "model_size": "tiny",
        "model_overrides": {"max_length": 40},
        "init_weights": "w",
        "batch_size": 5,
        "min_points": 11,
        "max_points": 12,
        "min_valid_fraction": 0.25,
        "max_constants": 2,
        "constant_range": (0.5, 2.0),
        "constant_signs": "both",
        "support_range": (-3.0, 4.0),
        "max_abs_y": 99.0,
        "weighting": "uniform",
        "frequency_power": 0.75,
        "optimizer": "adamw",
        "learning_rate": 0.5,
        "weight_decay": 0.01,
        "warmup_steps": 10,
        "cooldown_fraction": 0.25,
        "grad_clip": 0.0,
        "precision": "fp32",
        "max_steps": 4,
        "max_time": 90.5,
        "export_reserve": 0.05,
        "checkpoint_every": 2,
        "eval_every": 0,
        "n_val_batches": 1,
        "log_every": 3,
        "export_dtype": "float16",
        "push_to_hub": "user/repo",
    }
    assert set(values) == set(FLAT_NAMES)  # a new setting needs a value here
    defaults = TrainConfig().flat()
    assert all(defaults[name] != value for name, value in values.items())
    argv = []
    for name, value in values.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            argv.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, dict):
            argv += [flag, json.dumps(value)]
        elif isinstance(value, tuple):
            argv += [flag, *map(str, value)]
        else:
            argv += [flag, str(value)]
    config = config_from_args(argv)
    assert config.flat() == values
    assert config.data.support_range == (-3.0, 4.0) and config.model.size == "tiny"
    assert TrainConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_old_flat_train_config_files_are_read_into_sections(tmp_path):
    path = tmp_path / "train_config.json"
    path.write_text(json.dumps(OLD_FLAT_CONFIG))
    config = load_train_config(path)
    assert config.run.bank_size == 560000 and config.run.out == "runs/data-560000"
    assert config.model.size == "tiny" and config.model.overrides == {}
    assert (config.data.batch_size, config.data.min_points, config.data.max_points) == (64, 50, 200)
    assert config.data.weighting == "frequency"  # absent from the file: the default
    assert config.optimisation.learning_rate == 0.0003
    assert (config.schedule.max_steps, config.schedule.eval_every, config.schedule.n_val_batches) == (2000, 250, 8)
    assert config.export.dtype == "float32"
    assert {key: config.flat()[key] for key in OLD_FLAT_CONFIG} == OLD_FLAT_CONFIG
    path.write_text(json.dumps(config.to_dict()))
    assert load_train_config(path) == config
    assert set(json.loads(path.read_text())) == {"run", "model", "data", "optimisation", "schedule", "export"}


@pytest.mark.slow
def test_export_loads_into_the_estimator(bank, tmp_path):
    out = tmp_path / "run"
    summary = train(_config(bank, out, max_steps=2))
    folder = out / "model"
    assert summary["export"] == str(folder)
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    model = NeSymReSModel.from_pretrained(folder)
    state = load_checkpoint(out / "checkpoint.pt")  # weights_only=True
    assert set(state["rng"]) <= {"torch", "python", "cuda"}
    for key, value in model.state_dict().items():
        assert torch.equal(value, state["model"][key])
    saved = load_train_config(out / "train_config.json")
    assert saved == _config(bank, out, max_steps=2) and state["train_config"] == saved.to_dict()
    half = export_model(out / "checkpoint.pt", tmp_path / "half", dtype="float16")
    X = np.random.default_rng(0).uniform(-2, 2, size=(40, 2))
    y = X[:, 0] + X[:, 1]
    for path in (folder, half):
        regressor = NeSymReSRegressor(model=str(path), beam_size=2, n_restarts=1, max_time=20, random_state=0)
        regressor.fit(X, y)
        assert regressor.predict(X).shape == (40,)


@pytest.mark.slow
def test_bank_size_trains_on_a_prefix_of_the_bank(bank, tmp_path, monkeypatch):
    seen = []
    original = EquationSampler.__init__

    def record(self, skeleton_bank, *args, **kwargs):
        seen.append((skeleton_bank.split, len(skeleton_bank)))
        original(self, skeleton_bank, *args, **kwargs)

    monkeypatch.setattr(EquationSampler, "__init__", record)
    train(_config(bank, tmp_path / "run", max_steps=1, bank_size=25))
    assert ("train", 25) in seen and ("heldout", 10) in seen
    with pytest.raises(ValueError, match="fewer than the 61 asked for"):
        train(_config(bank, tmp_path / "other", max_steps=1, bank_size=61))


@pytest.mark.slow
def test_init_weights_starts_a_new_run_from_an_export(bank, tmp_path):
    first = train(_config(bank, tmp_path / "first", max_steps=3))
    config = _config(bank, tmp_path / "second", max_steps=1, learning_rate=0.0, init_weights=first["export"])
    train(config)
    exported = NeSymReSModel.from_pretrained(first["export"]).state_dict()
    continued = load_checkpoint(tmp_path / "second" / "checkpoint.pt")["model"]
    assert all(torch.equal(exported[key], continued[key]) for key in exported)
    fresh = load_checkpoint(tmp_path / "first" / "checkpoint.pt")
    assert fresh["step"] == 3
    with pytest.raises(ValueError, match="holds another model config"):
        train(_config(bank, tmp_path / "third", max_steps=1, init_weights=first["export"], model_size="small"))


def test_validate_command_reproduces_the_logged_validation(bank, tmp_path, capsys):
    out = tmp_path / "run"
    summary = train(_config(bank, out, max_steps=3))
    validate_main(
        [
            summary["export"],
            "--bank",
            bank,
            "--n-batches",
            str(TINY["n_val_batches"]),
            "--batch-size",
            str(TINY["batch_size"]),
            "--min-points",
            str(TINY["min_points"]),
            "--max-points",
            str(TINY["max_points"]),
        ]
    )
    printed = json.loads(capsys.readouterr().out)
    logged = _log(out)[-1]
    assert math.isclose(printed["val_loss"], float(logged["val_loss"]), rel_tol=1e-4)
    assert math.isclose(printed["val_accuracy"], float(logged["val_accuracy"]), rel_tol=1e-4)
    # The run's own settings file gives the same batches.
    validate_main(
        [
            summary["export"],
            "--bank",
            bank,
            "--n-batches",
            str(TINY["n_val_batches"]),
            "--train-config",
            str(out / "train_config.json"),
        ]
    )
    assert json.loads(capsys.readouterr().out) == printed


def test_validate_reads_banks_of_at_most_the_models_variables(bank, tmp_path):
    """A model of 5 variables is validated on the 3-variable bank; one of 2 is refused."""
    for n_variables in (5, 2):
        NeSymReSModel(config_for_size("tiny", n_variables)).save_pretrained(tmp_path / f"model-{n_variables}")
    result = validate_folder(tmp_path / "model-5", bank, BatchConfig(batch_size=4, min_points=10, max_points=20), 0, 2)
    assert math.isfinite(result["val_loss"]) and 0.0 <= result["val_accuracy"] <= 1.0
    with pytest.raises(ValueError, match="The bank has 3 variables but the model reads 2"):
        validate_folder(tmp_path / "model-2", bank, BatchConfig(batch_size=4, min_points=10, max_points=20), 0, 2)


@pytest.mark.slow
def test_resume_compares_configs_not_their_spelling(bank, tmp_path):
    """A checkpoint whose stored config spells out fields at their defaults (as saved by
    earlier versions) resumes; one of another size is refused."""
    out = tmp_path / "run"
    train(_config(bank, out, max_steps=2))
    state = load_checkpoint(out / "checkpoint.pt")
    spelled_out = dataclasses.asdict(ModelConfig(**state["model_config"]))
    assert spelled_out != state["model_config"]  # the saved dict leaves defaults out
    torch.save({**state, "model_config": spelled_out}, out / "checkpoint.pt")
    assert train(_config(bank, out, max_steps=3))["step"] == 3
    with pytest.raises(ValueError, match="trained with another model config"):
        train(_config(bank, out, max_steps=4, model_size="small"))


def test_resume_takes_the_new_learning_rate(bank, tmp_path):
    out = str(tmp_path / "run")
    train(_config(bank, out, max_steps=2))
    before = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["model"]
    train(_config(bank, out, max_steps=4, learning_rate=0.0))
    state = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert state["step"] == 4
    assert [group["lr"] for group in state["optimizer"]["param_groups"]] == [0.0]
    assert all(torch.equal(before[key], state["model"][key]) for key in before)  # rate 0: no update
    rates = [float(row["learning_rate"]) for row in _log(tmp_path / "run")]
    assert rates[:2] == [1e-4, 1e-4] and rates[2:] == [0.0, 0.0]


@pytest.mark.slow
def test_checkpoints_of_the_earlier_format_are_refused_with_a_way_on(bank, tmp_path):
    """Checkpoints that held the global NumPy RNG state need weights_only=False: loading
    says how to continue, and upgrading them resumes the run where it stopped."""
    out = tmp_path / "run"
    train(_config(bank, out, max_steps=2))
    state = load_checkpoint(out / "checkpoint.pt")
    old = {**state, "rng": {**state["rng"], "numpy": np.random.get_state()}}
    torch.save(old, out / "checkpoint.pt")
    for load in (
        lambda: train(_config(bank, out, max_steps=3)),
        lambda: export_model(out / "checkpoint.pt", tmp_path / "export"),
    ):
        with pytest.raises(CheckpointFormatError, match="pretraining.checkpoint upgrade") as error:
            load()
        assert "--init-weights" in str(error.value)
    assert upgrade_checkpoint(out / "checkpoint.pt") and not upgrade_checkpoint(out / "checkpoint.pt")
    upgraded = load_checkpoint(out / "checkpoint.pt")
    assert set(upgraded["rng"]) == set(state["rng"]) and upgraded["step"] == 2
    assert all(torch.equal(upgraded["model"][key], value) for key, value in state["model"].items())
    assert train(_config(bank, out, max_steps=3))["step"] == 3
    assert [int(row["step"]) for row in _log(out)] == [1, 2, 3]


def test_planned_schedule_warms_up_holds_and_cools_down_to_zero():
    settings = TrainConfig.from_dict(
        {"optimizer": "adamw", "learning_rate": 1e-3, "weight_decay": 0.01, "warmup_steps": 4, "cooldown_fraction": 0.2}
    ).optimisation
    rates = [settings.rate_at(step, 20) for step in range(20)]
    assert rates[:4] == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3])
    assert rates[4:16] == pytest.approx([1e-3] * 12)
    assert rates[16:] == pytest.approx([1e-3, 7.5e-4, 5e-4, 2.5e-4])
    assert TrainConfig().optimisation.rate_at(123, 20) == TrainConfig().optimisation.learning_rate
    with pytest.raises(ValueError, match="weight_decay needs optimizer='adamw'"):
        TrainConfig.from_dict({"weight_decay": 0.1})


def _files(folder):
    return {path.relative_to(folder): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("cause", ["model_size", "unreadable_checkpoints"])
def test_a_refused_resume_writes_nothing_to_the_run_folder(bank, tmp_path, cause):
    out = tmp_path / "run"
    train(_config(bank, out, max_steps=2))
    if cause == "model_size":
        rerun, error = _config(bank, out, max_steps=4, model_size="small"), "another model config"
    else:
        _truncate(out / CHECKPOINT)
        rerun, error = _config(bank, out, max_steps=4), "No readable checkpoint"
    before = _files(out)
    with pytest.raises(ValueError, match=error):
        train(rerun)
    assert _files(out) == before


@pytest.mark.slow
def test_a_truncated_checkpoint_resumes_from_the_previous_one(bank, tmp_path, caplog):
    out = tmp_path / "run"
    train(_config(bank, out, max_steps=2))
    assert not (out / PREVIOUS_CHECKPOINT).exists()  # the layout of runs from before two were kept
    train(_config(bank, out, max_steps=4))  # resumes from checkpoint.pt alone
    assert load_checkpoint(out / PREVIOUS_CHECKPOINT)["step"] == 2 and load_checkpoint(out / CHECKPOINT)["step"] == 4
    _truncate(out / CHECKPOINT)
    with caplog.at_level(logging.WARNING):
        summary = train(_config(bank, out, max_steps=5))
    assert f"{out / CHECKPOINT} is truncated or corrupt" in caplog.text
    assert f"Resuming from the checkpoint before it, {out / PREVIOUS_CHECKPOINT} (step 2)" in caplog.text
    assert summary["step"] == 5 and (out / "checkpoint.pt.corrupt").exists()
    assert load_checkpoint(out / PREVIOUS_CHECKPOINT)["step"] == 4 and load_checkpoint(out / CHECKPOINT)["step"] == 5
    assert [int(row["step"]) for row in _log(out)] == [1, 2, 3, 4, 5]


def _strict_json(text):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_summary_json_is_strict_json_with_null_for_losses_never_measured(bank, tmp_path):
    out = tmp_path / "run"
    summary = train(_config(bank, out, max_steps=1, eval_every=0))
    assert math.isnan(summary["val_loss"])
    written = _strict_json((out / "summary.json").read_text())
    assert written["val_loss"] is None and written["val_accuracy"] is None
    assert written["train_loss"] == summary["train_loss"] and written["step"] == 1
    text = summary_json({"loss": math.inf, "weight_checksums": [1.5, math.nan], "stopped": False})
    assert _strict_json(text) == {"loss": None, "weight_checksums": [1.5, None], "stopped": False}


@pytest.mark.parametrize(
    "num_workers, num_threads, omp, expected",
    [(1, None, None, 3), (0, None, None, 4), (1, 2, None, 2), (1, 2, "1", 2), (1, None, "1", "unchanged")],
)
def test_setup_gives_the_training_process_the_cores_its_workers_leave(
    tmp_path, monkeypatch, num_workers, num_threads, omp, expected
):
    monkeypatch.setattr("pretraining.train.available_cores", lambda: 4)
    if omp is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", omp)
    config = _config("bank", tmp_path / "run", num_workers=num_workers, num_threads=num_threads)
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(5)
        setup(config)
        assert torch.get_num_threads() == (5 if expected == "unchanged" else expected)
    finally:
        torch.set_num_threads(previous)
    assert not (tmp_path / "run").exists()  # setup writes nothing


class _CountingClock:
    """A clock that advances one second per reading (the loop reads it once per step,
    after a reading at its start) and can send this process SIGTERM at one reading."""

    def __init__(self, interrupt_at: int | None = None):
        self.readings = 0
        self.interrupt_at = interrupt_at

    def __call__(self) -> float:
        if self.readings == self.interrupt_at:
            os.kill(os.getpid(), signal.SIGTERM)
        self.readings += 1
        return float(self.readings - 1)


TIMED = dict(
    max_time=12.5,
    export_reserve=0.2,
    optimizer="adamw",
    weight_decay=0.01,
    learning_rate=1e-3,
    warmup_steps=2,
    cooldown_fraction=0.5,
    eval_every=4,
    checkpoint_every=3,
)


@pytest.mark.slow
def test_max_time_plans_the_schedule_in_time_and_ends_at_the_deadline(bank, tmp_path):
    """One second per step: the run trains 10 s (12.5 s less the 20% kept for the export),
    cools down over the last half of them, and exports."""
    out = tmp_path / "run"
    config = _config(bank, out, **TIMED)
    summary = train(config, clock=_CountingClock())
    assert summary["step"] == 10 and summary["elapsed_seconds"] == 10.0 and not summary["stopped"]
    rows = _log(out)
    assert [float(row["elapsed_seconds"]) for row in rows] == [float(step) for step in range(1, 11)]
    rates = [float(row["learning_rate"]) for row in rows]
    expected = [config.optimisation.rate_at_time(step, float(step), 10.0) for step in range(10)]
    assert rates == pytest.approx(expected, rel=1e-3)  # the log keeps 4 digits
    assert rates[:3] == pytest.approx([5e-4, 1e-3, 1e-3])  # warmup in steps
    assert rates[6] == pytest.approx(1e-3 * 4 / 5, rel=1e-3) and rates[-1] == pytest.approx(1e-3 / 5, rel=1e-3)
    assert load_checkpoint(out / CHECKPOINT)["step"] == 10
    assert (out / "model" / "model.safetensors").exists()
    assert train(config, clock=_CountingClock())["step"] == 10  # past its deadline: nothing more
    assert len(_log(out)) == 10


@pytest.mark.slow
def test_a_max_time_run_resumes_exactly_like_an_uninterrupted_one(bank, tmp_path):
    """Stopped by SIGTERM at 5 s (between checkpoints) and resumed, a run follows the same time schedule and
    ends with the same weights, optimiser state and log as a run never stopped."""
    train(_config(bank, tmp_path / "full", **TIMED), clock=_CountingClock())
    stopped = train(_config(bank, tmp_path / "split", **TIMED), clock=_CountingClock(interrupt_at=5))
    assert stopped["stopped"] and stopped["step"] == 5
    assert not (tmp_path / "split" / "model").exists()
    resumed = train(_config(bank, tmp_path / "split", **TIMED), clock=_CountingClock())
    assert resumed["step"] == 10 and not resumed["stopped"]
    a = load_checkpoint(tmp_path / "full" / CHECKPOINT)
    b = load_checkpoint(tmp_path / "split" / CHECKPOINT)
    assert a["elapsed_seconds"] == b["elapsed_seconds"] == 10.0
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    for index, state in a["optimizer"]["state"].items():
        assert torch.equal(state["exp_avg_sq"], b["optimizer"]["state"][index]["exp_avg_sq"])
    columns = ("step", "train_loss", "val_loss", "learning_rate", "elapsed_seconds")
    assert [[row[c] for c in columns] for row in _log(tmp_path / "full")] == [
        [row[c] for c in columns] for row in _log(tmp_path / "split")
    ]


def test_max_time_must_be_positive_and_the_reserve_a_share():
    with pytest.raises(ValueError, match="max_time must be a positive number"):
        TrainConfig.from_dict({"max_time": 0})
    with pytest.raises(ValueError, match=r"export_reserve must be in \[0, 1\)"):
        TrainConfig.from_dict({"max_time": 60, "export_reserve": 1.0})
    assert TrainConfig.from_dict({"max_time": 600, "export_reserve": 0.05}).schedule.training_seconds == 570.0
    assert TrainConfig().schedule.training_seconds is None


def test_the_loop_reads_the_loss_only_on_control_steps(bank, tmp_path, monkeypatch):
    """Between log rows, validations and checkpoints nothing waits for the device: the
    loss stays a tensor and is read once per log row."""
    reads = []
    original = train_module._Meter.mean_loss

    def counted(meter):
        reads.append(meter.steps)
        return original(meter)

    monkeypatch.setattr(train_module._Meter, "mean_loss", counted)
    train(_config(bank, tmp_path / "run", max_steps=12, log_every=4, eval_every=0, checkpoint_every=12))
    assert reads == [4, 4, 4]
    assert [int(row["step"]) for row in _log(tmp_path / "run")] == [4, 8, 12]


@pytest.mark.slow
def test_ddp_ranks_agree_on_the_deadline(bank, tmp_path):
    """With max_time each rank reads its own clock; they agree on the elapsed time at
    control steps, so both stop at the same step with the same weights."""
    out = tmp_path / "ddp"
    # every control step (log, validation, checkpoint) a multiple of 2, so the stop is at an even step
    summary = _torchrun_two_processes(
        bank, out, max_time=8.0, log_every=2, eval_every=2, optimizer="adamw", cooldown_fraction=0.5
    )
    first, second = summary["weight_checksums"]
    assert first == second and summary["step"] >= 2 and summary["step"] % 2 == 0
    assert summary["elapsed_seconds"] >= 8.0 * 0.98
    assert float(_log(out)[-1]["learning_rate"]) < 1e-4  # cooled down
    assert (out / "model" / "model.safetensors").exists()
