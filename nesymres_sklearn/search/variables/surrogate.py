"""One smooth surrogate of the data for the many-variable stages: a Gaussian process.

The reduction reads its gradients and its leave-one-out error; the decomposition
evaluates it at points that are not in the data. scikit-learn's Gaussian process with a
Gaussian kernel (one length scale per standardised column, plus white noise) and a
normalised target; the search for the kernel's parameters stops after
``MAX_ITERATIONS`` steps, or raises :class:`OutOfTime` once a deadline passes. Its
small factorisations run on one BLAS thread (:func:`..blas.one_blas_thread`).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

from ..budget import Deadline

#: Steps of the search for the kernel's parameters.
MAX_ITERATIONS = 20


class OutOfTime(Exception):
    """The deadline passed while a surrogate was fitted."""


def _optimizer_until(deadline: Deadline | None):
    """scikit-learn's L-BFGS-B search of the kernel's parameters, stopped after
    ``MAX_ITERATIONS`` steps; it raises :class:`OutOfTime` once ``deadline`` passes."""

    def optimizer(objective, start, bounds):
        def timed(theta):
            if deadline is not None and deadline.passed():
                raise OutOfTime
            return objective(theta)

        found = minimize(timed, start, method="L-BFGS-B", jac=True, bounds=bounds, options={"maxiter": MAX_ITERATIONS})
        return found.x, found.fun

    return optimizer


class Surrogate:
    """A Gaussian process fitted to ``(X, y)`` on standardised columns: its values at new
    points (``__call__``), its leave-one-out unexplained share of ``y``'s variance
    (``error``) and its gradients at the points (``gradients``)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, seed: int, deadline: Deadline | None = None):
        self._center, self._spread = X.mean(axis=0), X.std(axis=0)
        self._spread[self._spread == 0] = 1.0
        self.points = self._standardised(X)
        kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(X.shape[1]), (0.1, 1e3)) + WhiteKernel(
            1e-5, (1e-10, 1e-1)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model = GaussianProcessRegressor(
                kernel, optimizer=_optimizer_until(deadline), normalize_y=True, random_state=seed
            )
            self.model.fit(self.points, y)
        # leave-one-out residuals of the normalised target, on the fitted kernel alone
        # (the fit's own factor holds scikit-learn's jitter, which moves near-exact errors)
        normalised = (y - y.mean()) / (y.std() or 1.0)
        try:
            inverse = cho_solve(cho_factor(self.model.kernel_(self.points)), np.eye(len(y)))
        except LinAlgError:
            self.error = 1.0
            return
        self.error = float(np.mean(((inverse @ normalised) / np.diag(inverse)) ** 2))

    def _standardised(self, X: np.ndarray) -> np.ndarray:
        return (X - self._center) / self._spread

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict(self._standardised(X))

    def gradients(self) -> np.ndarray:
        """The gradients of the fitted mean at the points, in the unstandardised columns."""
        product = self.model.kernel_.k1  # the constant times the Gaussian kernel
        K = product(self.points, self.points)
        length = product.k2.length_scale
        weighted = K * self.model.alpha_.ravel()[None, :]
        # d/dz_q sum_n w_n k(z_q, z_n) = sum_n w_n k(z_q, z_n) (z_n - z_q) / length**2
        G = (weighted @ self.points - weighted.sum(axis=1)[:, None] * self.points) / length**2
        return G / self._spread
