import os
import sys
import time
from functools import cache
from pathlib import Path

# One intra-op thread in the test process and the processes it starts: on a small shared
# machine, OpenMP threads that wait for busy cores made a training step ten times slower.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)
sys.path.insert(0, str(Path(__file__).parent))

from models import tiny_model_folder  # noqa: E402
from original_checkpoints import original_state, save_lightning_checkpoint  # noqa: E402


@pytest.fixture(scope="session")
def tiny_model():
    """Folder of a random tiny model with 3 variables."""
    return tiny_model_folder(3)


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(64, 2))
    return X, X[:, 0] * np.sin(X[:, 1])


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    """``checkpoint(name)``: path of a synthetic checkpoint, written on first use."""
    folder = tmp_path_factory.mktemp("original-checkpoints")

    @cache
    def make(name: str):
        path = folder / f"{name}.ckpt"
        save_lightning_checkpoint(path, original_state(name))
        return path

    return make


@pytest.fixture
def conversion_cache(tmp_path, monkeypatch):
    """Converted checkpoints go to a per-test HF_HOME."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HOME", str(tmp_path / "hf-home"))
    return tmp_path / "hf-home" / "nesymres-sklearn" / "converted"


class ManualClock:
    """The budget's clock (``time.perf_counter``): starts now and moves only when told."""

    def __init__(self):
        self.now = time.perf_counter()

    def perf_counter(self):
        return self.now

    def process_time(self):
        """The CPU clock of the budget's pace: the same, so the pace is 1."""
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def manual_clock(monkeypatch):
    """One clock for the whole fit: every decoding takes 10 s of it, every chunk of
    Operon's generations 1 s, nothing else any time."""
    from nesymres_sklearn.operon import refine as operon_refine
    from nesymres_sklearn.search import anytime, budget

    clock = ManualClock()
    monkeypatch.setattr(budget, "time", clock)
    decode, regressor_for = anytime.decode, operon_refine._regressor

    def slow_decode(*args, **kwargs):
        clock.advance(10.0)
        return decode(*args, **kwargs)

    def slow_regressor(*args):
        regressor = regressor_for(*args)
        fit = regressor.fit

        def slow_fit(X, y):
            clock.advance(1.0)
            return fit(X, y)

        regressor.fit = slow_fit
        return regressor

    monkeypatch.setattr(anytime, "decode", slow_decode)
    monkeypatch.setattr(operon_refine, "_regressor", slow_regressor)
    return clock
