"""Gaussian process regression (scikit-learn), the paper's non-symbolic baseline.

Registered as ``"gpr"``: in symbolic regression "GP" means genetic programming
(:mod:`benchmarks.methods.gplearn`).

As in appendix "Baselines": a constant times RBF kernel, diagonal noise 1e-10, L-BFGS-B
on the marginal likelihood; the number of optimiser restarts is swept (8, 16, 32).
"""

from __future__ import annotations

import numpy as np

from .base import Adapter


class GaussianProcessAdapter(Adapter):
    name = "gpr"
    parameter = "n_restarts_optimizer"
    preload_modules = ("sklearn.gaussian_process",)
    requires = ("sklearn",)
    symbolic = False

    @classmethod
    def expected_cost(cls, value, n_points: int) -> float:
        # The restarts alone (small numbers): these short fits are started last.
        return float(value)

    def _fit(self, X, y):
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel

        kernel = ConstantKernel(1.0) * RBF(1.0)
        self.model_ = GaussianProcessRegressor(
            kernel=kernel,
            alpha=1e-10,
            n_restarts_optimizer=int(self.value),
            random_state=self.random_state,
            **self.options,
        ).fit(X, y)

    def predict(self, X):
        return np.asarray(self.model_.predict(X), dtype=np.float64)
