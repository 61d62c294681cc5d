"""Tiny randomly initialised models for the tests (saved once per test session, in a
temporary folder that is removed when the session ends)."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import torch

from nesymres_sklearn.network.model import NeSymReSModel, config_for_size
from nesymres_sklearn.operon.settings import OperonSettings

# Enough variables for every dataset of scikit-learn's estimator checks.
CHECKS_VARIABLES = 12
#: Operon's fixed work for tests that fit with ``refine="auto"`` but assert nothing about
#: Operon's search: a fit on 64 points took 0.3 s with it, 1.5 s with the default
#: (1000 individuals, 20 generations).
QUICK_OPERON = OperonSettings(population_size=100, generations=5)
# Made at import: scikit-learn's checks need the models while tests are collected.
_ROOT = tempfile.TemporaryDirectory(prefix="nesymres-test-models-")


@cache
def tiny_model_folder(n_variables: int = 3, seed: int = 0) -> Path:
    """Folder with ``config.json`` + ``model.safetensors`` of a random tiny model."""
    folder = Path(_ROOT.name) / f"tiny-{n_variables}-{seed}"
    torch.manual_seed(seed)
    config = config_for_size("tiny", n_variables=n_variables, hidden_size=32, feedforward_size=64, max_length=40)
    NeSymReSModel(config).save_pretrained(folder)
    return folder
