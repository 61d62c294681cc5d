"""The GPU-window command: bank reuse, training to the window's deadline, one result folder."""

import json
import os
import stat
import time

import pytest
import torch

from nesymres_sklearn import NeSymReSRegressor
from pretraining.bank import SkeletonBank, build_bank
from pretraining.bank_pack import pack_bank
from pretraining.runtime import GpuSampler
from pretraining.window import fitting_dtype, main, prepare_bank, run_window, window_parser

TRAIN_OPTIONS = [
    "--model-size", "tiny", "--batch-size", "8", "--min-points", "40", "--max-points", "80",
    "--num-workers", "0", "--log-every", "1", "--eval-every", "10", "--n-val-batches", "1",
    "--checkpoint-every", "20", "--warmup-steps", "2",
]  # fmt: skip


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bank")
    build_bank(folder, n_skeletons=60, n_heldout=10, seed=2, n_jobs=1, chunk_size=20, chunks_per_shard=2)
    return folder


class _CountingClock:
    """One second per reading."""

    def __init__(self):
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return float(self.readings - 1)


@pytest.mark.slow
def test_a_window_trains_to_its_deadline_and_leaves_one_folder_of_small_files(bank, tmp_path):
    """With a clock of one second per reading, a one-minute window reuses the bank,
    trains until the deadline less the export reserve, and ends within 5% of it."""
    out, work = tmp_path / "window", tmp_path / "work"
    argv = ["--out", str(out), "--minutes", "1", "--bank", str(bank), "--work", str(work)]
    args, rest = window_parser().parse_known_args(argv + TRAIN_OPTIONS)
    result = run_window(args, rest, clock=_CountingClock())
    assert result["bank_source"] == "reused" and result["bank_skeletons"] == 60
    assert 0.95 * 60 <= result["total_seconds"] <= 60
    assert result["training_seconds"] >= result["max_time"] * 0.98 and result["steps"] >= 40
    assert result["equations"] == 8 * result["steps"] and not result["stopped"]
    assert result["weights_dtype"] == "float32" and result["gpu_utilisation_samples"] == 0
    names = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert names == [
        "log.csv",
        "model/README.md",
        "model/config.json",
        "model/model.safetensors",
        "summary.json",
        "train_config.json",
        "window.json",
    ]
    assert all(path.stat().st_size <= 16 * 2**20 for path in out.rglob("*") if path.is_file())  # and 8 files at most
    assert json.loads((out / "window.json").read_text())["steps"] == result["steps"]
    settings = json.loads((out / "train_config.json").read_text())
    assert settings["schedule"]["max_time"] == pytest.approx(result["max_time"], abs=1e-3)
    assert settings["optimisation"]["optimizer"] == "adamw"  # from the window's defaults file
    assert settings["data"]["frequency_power"] == 0.75 and settings["model"]["size"] == "tiny"
    assert (work / "run" / "checkpoint.pt").exists() and not list(out.rglob("*.pt"))
    regressor = NeSymReSRegressor(model=str(out / "model"), beam_size=2, refine=None, random_state=0)
    assert regressor.fit(torch.rand(20, 1).numpy(), torch.rand(20).numpy()).expression_ is not None


def test_the_bank_is_reused_when_complete_else_unpacked_from_its_pack(bank, tmp_path):
    files = pack_bank(bank, tmp_path / "packs" / "bank")
    folder = tmp_path / "window-bank"
    assert prepare_bank(folder, files, 10**6, 0, 0, 1) == "unpacked"
    assert prepare_bank(folder, files, 10**6, 0, 0, 1) == "reused"
    original, unpacked = SkeletonBank(bank), SkeletonBank(folder)
    assert len(unpacked) == len(original) == 60
    assert [unpacked[i] for i in range(60)] == [original[i] for i in range(60)]
    assert (unpacked.counts == original.counts).all()


def test_bad_training_options_are_refused_before_the_bank_is_made(tmp_path):
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "w"), "--minutes", "1", "--learning-rate", "fast"])
    assert not (tmp_path / "w-work").exists()


def test_weights_too_large_for_the_file_limit_go_to_float16_or_are_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(bytes(3 * 2**20))
    assert fitting_dtype(tmp_path, 4 * 2**20) == "float32"
    assert fitting_dtype(tmp_path, 2 * 2**20) == "float16"
    with pytest.raises(ValueError, match="do not fit in files of 1 MiB even in float16"):
        fitting_dtype(tmp_path, 2**20)


def test_gpu_utilisation_is_sampled_from_nvidia_smi(tmp_path, monkeypatch):
    script = tmp_path / "nvidia-smi"
    script.write_text("#!/bin/sh\necho 42\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with GpuSampler(period=0.01) as sampler:
        deadline = time.monotonic() + 30
        while len(sampler.samples) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert sampler.summary()["gpu_utilisation_mean"] == 42.0 and sampler.summary()["gpu_utilisation_samples"] >= 2
    assert sampler.take() == 42.0 and sampler.take() is None  # a log row's mean: the samples since the last


def test_without_nvidia_smi_there_are_no_samples(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with GpuSampler(period=0.01) as sampler:
        time.sleep(0.05)
    assert sampler.summary() == {"gpu_utilisation_mean": None, "gpu_utilisation_samples": 0}
