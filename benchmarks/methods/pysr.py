"""PySR (optional; needs a Julia installation). Sweeps the number of iterations.

The function set matches the other genetic baselines; ``timeout_in_seconds`` is the
time budget. PySR runs single-threaded and deterministic for a fair timing.
"""

from __future__ import annotations

import shutil

import numpy as np

from .base import Adapter, missing_packages_reason, rename_features


class PySRAdapter(Adapter):
    """Options: any :class:`pysr.PySRRegressor` argument."""

    name = "pysr"
    parameter = "niterations"
    requires = ("pysr", "juliacall")
    install_hint = "pip install pysr, and Julia (PySR downloads it on first import)"

    @classmethod
    def check_installed(cls):
        reason = missing_packages_reason(cls.requires, cls.install_hint)
        if reason is None and shutil.which("julia") is None:
            return "no 'julia' executable on PATH (PySR needs Julia)"
        return reason

    def _fit(self, X, y):
        from pysr import PySRRegressor

        params = {
            "niterations": int(self.value),
            "binary_operators": ["+", "-", "*", "/"],
            "unary_operators": ["sin", "cos", "exp", "log", "sqrt"],
            "parallelism": "serial",
            "deterministic": True,
            "random_state": self.random_state,
            "progress": False,
            "verbosity": 0,
            **self.options,
        }
        if self.time_budget is not None:
            params.setdefault("timeout_in_seconds", float(self.time_budget))
        self.model_ = PySRRegressor(**params).fit(X, y)

    def predict(self, X):
        with np.errstate(all="ignore"):
            return np.asarray(self.model_.predict(X), dtype=np.float64)

    def expression(self):
        return str(rename_features(self.model_.sympy(), offset=0))
