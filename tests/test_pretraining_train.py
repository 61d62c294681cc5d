"""Training loop: exact resume, SIGTERM checkpoint, 2-process DDP, YAML config, export."""

import csv
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.network.model import ModelConfig, NeSymReSModel
from pretraining.bank import build_bank
from pretraining.export import export_model
from pretraining.data import EquationSampler
from pretraining.train import TrainConfig, config_from_args, train
from pretraining.validate import main as validate_main

TINY = dict(model_size="tiny", batch_size=8, min_points=40, max_points=80, checkpoint_every=2,
            eval_every=3, n_val_batches=2, log_every=1, num_workers=0, progress=False)


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bank")
    build_bank(folder, n_skeletons=60, n_heldout=10, seed=2, n_jobs=2, chunk_size=20, chunks_per_shard=2)
    return str(folder)


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


def test_resume_matches_uninterrupted_run(bank, tmp_path):
    full = train(TrainConfig(bank=bank, out=str(tmp_path / "full"), max_steps=6, **TINY))
    assert full["step"] == 6 and math.isfinite(full["train_loss"]) and math.isfinite(full["val_loss"])
    train(TrainConfig(bank=bank, out=str(tmp_path / "split"), max_steps=3, **TINY))
    resumed = train(TrainConfig(bank=bank, out=str(tmp_path / "split"), max_steps=6, **TINY))
    a = torch.load(tmp_path / "full" / "checkpoint.pt", weights_only=False)
    b = torch.load(tmp_path / "split" / "checkpoint.pt", weights_only=False)
    assert a["step"] == b["step"] == 6
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    assert resumed["train_loss"] == full["train_loss"]
    columns = ("step", "train_loss", "val_loss", "val_accuracy")
    rows = [[row[c] for c in columns] for row in _log(tmp_path / "full")]
    assert rows == [[row[c] for c in columns] for row in _log(tmp_path / "split")]
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("num_workers, whole_group", [(0, False), (1, True)])
def test_sigterm_checkpoints_and_resumes(bank, tmp_path, num_workers, whole_group):
    """SIGTERM to the trainer, or to its whole process group (data workers included,
    as a scheduler or Ctrl-C does), checkpoints and exits cleanly."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "pretraining.train",
         *_cli(bank, out, max_steps=100000, checkpoint_every=100000, num_workers=num_workers)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
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
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    assert state["step"] == summary["step"] >= 2
    resumed = train(TrainConfig(bank=bank, out=str(out), max_steps=state["step"] + 2, **TINY))
    assert resumed["step"] == state["step"] + 2 and not resumed["stopped"]
    assert [int(row["step"]) for row in _log(out)] == list(range(1, state["step"] + 3))


def test_ddp_two_processes_gloo(bank, tmp_path):
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         "-m", "pretraining.train", *_cli(bank, out, max_steps=4, device="cpu")],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["step"] == 4
    assert summary["equations"] == 4 * 2 * TINY["batch_size"]
    first, second = summary["weight_checksums"]
    assert first == second
    assert math.isfinite(summary["train_loss"]) and math.isfinite(summary["val_loss"])
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 4
    assert (out / "model" / "model.safetensors").exists()


def test_config_from_yaml_and_overrides(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("bank: b\nout: o\nmodel_size: tiny\nmax_steps: 7\nmodel_overrides:\n  max_length: 40\n")
    config = config_from_args(["--config", str(path), "--max-steps", "9", "--no-progress"])
    assert config == TrainConfig(bank="b", out="o", model_size="tiny", max_steps=9, progress=False,
                                 model_overrides={"max_length": 40})
    with pytest.raises(ValueError):
        TrainConfig(bank="b", out="o", model_size="huge")


def test_export_loads_into_the_estimator(bank, tmp_path):
    out = tmp_path / "run"
    summary = train(TrainConfig(bank=bank, out=str(out), max_steps=2, **TINY))
    folder = out / "model"
    assert summary["export"] == str(folder)
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    model = NeSymReSModel.from_pretrained(folder)
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    for key, value in model.state_dict().items():
        assert torch.equal(value, state["model"][key])
    half = export_model(out / "checkpoint.pt", tmp_path / "half", dtype="float16")
    X = np.random.default_rng(0).uniform(-2, 2, size=(40, 2))
    y = X[:, 0] + X[:, 1]
    for path in (folder, half):
        regressor = NeSymReSRegressor(model=str(path), beam_size=2, n_restarts=1, max_time=20, random_state=0)
        regressor.fit(X, y)
        assert regressor.predict(X).shape == (40,)


def test_bank_size_trains_on_a_prefix_of_the_bank(bank, tmp_path, monkeypatch):
    seen = []
    original = EquationSampler.__init__

    def record(self, skeleton_bank, *args, **kwargs):
        seen.append((skeleton_bank.split, len(skeleton_bank)))
        original(self, skeleton_bank, *args, **kwargs)

    monkeypatch.setattr(EquationSampler, "__init__", record)
    train(TrainConfig(bank=bank, out=str(tmp_path / "run"), max_steps=1, bank_size=25, **TINY))
    assert ("train", 25) in seen and ("heldout", 10) in seen
    with pytest.raises(ValueError, match="fewer than the 61 asked for"):
        train(TrainConfig(bank=bank, out=str(tmp_path / "other"), max_steps=1, bank_size=61, **TINY))


def test_init_weights_starts_a_new_run_from_an_export(bank, tmp_path):
    first = train(TrainConfig(bank=bank, out=str(tmp_path / "first"), max_steps=3, **TINY))
    config = TrainConfig(bank=bank, out=str(tmp_path / "second"), max_steps=1, learning_rate=0.0,
                         init_weights=first["export"], **TINY)
    train(config)
    exported = NeSymReSModel.from_pretrained(first["export"]).state_dict()
    continued = torch.load(tmp_path / "second" / "checkpoint.pt", weights_only=False)["model"]
    assert all(torch.equal(exported[key], continued[key]) for key in exported)
    fresh = torch.load(tmp_path / "first" / "checkpoint.pt", weights_only=False)
    assert fresh["step"] == 3
    with pytest.raises(ValueError, match="holds another model config"):
        train(TrainConfig(bank=bank, out=str(tmp_path / "third"), max_steps=1,
                          init_weights=first["export"], **{**TINY, "model_size": "small"}))


def test_validate_command_reproduces_the_logged_validation(bank, tmp_path, capsys):
    out = tmp_path / "run"
    summary = train(TrainConfig(bank=bank, out=str(out), max_steps=3, **TINY))
    validate_main([summary["export"], "--bank", bank, "--n-batches", str(TINY["n_val_batches"]),
                   "--batch-size", str(TINY["batch_size"]), "--min-points", str(TINY["min_points"]),
                   "--max-points", str(TINY["max_points"])])
    printed = json.loads(capsys.readouterr().out)
    logged = _log(out)[-1]
    assert math.isclose(printed["val_loss"], float(logged["val_loss"]), rel_tol=1e-4)
    assert math.isclose(printed["val_accuracy"], float(logged["val_accuracy"]), rel_tol=1e-4)


def test_resume_compares_configs_not_their_spelling(bank, tmp_path):
    """A checkpoint whose stored config spells out fields at their defaults (as saved by
    earlier versions) resumes; one of another size is refused."""
    out = tmp_path / "run"
    train(TrainConfig(bank=bank, out=str(out), max_steps=2, **TINY))
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    spelled_out = dataclasses.asdict(ModelConfig(**state["model_config"]))
    assert spelled_out != state["model_config"]  # the saved dict leaves defaults out
    torch.save({**state, "model_config": spelled_out}, out / "checkpoint.pt")
    assert train(TrainConfig(bank=bank, out=str(out), max_steps=3, **TINY))["step"] == 3
    with pytest.raises(ValueError, match="trained with another model config"):
        train(TrainConfig(bank=bank, out=str(out), max_steps=4, **{**TINY, "model_size": "small"}))


def test_resume_takes_the_new_learning_rate(bank, tmp_path):
    out = str(tmp_path / "run")
    train(TrainConfig(bank=bank, out=out, max_steps=2, **TINY))
    before = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["model"]
    train(TrainConfig(bank=bank, out=out, max_steps=4, **{**TINY, "learning_rate": 0.0}))
    state = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    assert state["step"] == 4
    assert [group["lr"] for group in state["optimizer"]["param_groups"]] == [0.0]
    assert all(torch.equal(before[key], state["model"][key]) for key in before)  # rate 0: no update
    rates = [float(row["learning_rate"]) for row in _log(tmp_path / "run")]
    assert rates[:2] == [1e-4, 1e-4] and rates[2:] == [0.0, 0.0]
