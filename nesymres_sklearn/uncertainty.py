"""Error bars of a fitted equation by the delta method.

The fitted constants' covariance is ``s² (JᵀWJ)⁻¹``: ``J`` the Jacobian of the values
by the constants at the training points (exact, from the compiled program that fitted
them), ``W`` the sample weights and ``s² = Σ w r² / (n - k)`` the residual variance
with ``k`` constants. On a skeleton linear in its constants this is ordinary least
squares' covariance. A prediction's standard deviation is that of a fresh observation,
``sqrt(gᵀ Σ g + s²)`` with ``g`` the Jacobian at the new point, as
``BayesianRidge.predict(X, return_std=True)`` gives.

It is conditional on the skeleton: the uncertainty of the skeleton itself (another
law fitting the data as well) is not in it, and neither is an error the skeleton
cannot express, which it counts as noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .expression.program import PrefixProgram
from .expression.skeleton import Skeleton
from .search.problem import Problem
from .search.scaling import Scaling
from .search.selection.table import CandidateTable

# A constant counts as determined by the data when the projection of its axis onto the
# row space of JᵀWJ keeps at least this much of it (1 in exact arithmetic).
IDENTIFIABLE = 1.0 - 1e-6


@dataclass(frozen=True)
class ConstantsCovariance:
    """The covariance of the fitted constants and the residual variance, in the units
    the constants were fitted in."""

    covariance: np.ndarray
    noise_variance: float
    identifiable: np.ndarray

    @property
    def std(self) -> np.ndarray:
        """Standard errors of the constants; inf for a constant the data do not
        determine (one of ``c0*c1*x``'s factors), NaN when the fit is not finite."""
        return np.where(self.identifiable, np.sqrt(np.clip(np.diag(self.covariance), 0.0, None)), np.inf)

    def prediction_std(self, program: PrefixProgram, X: np.ndarray, constants: np.ndarray) -> np.ndarray:
        """Standard deviation of a fresh observation at the rows of ``X``: the
        constants' uncertainty carried through the program plus the noise."""
        _, jacobian = program.value_and_jacobian(X, constants)
        spread = np.einsum("ij,jk,ik->i", jacobian, self.covariance, jacobian)
        return np.sqrt(np.clip(spread, 0.0, None) + self.noise_variance)


def constants_covariance(
    program: PrefixProgram, X: np.ndarray, y: np.ndarray, constants: np.ndarray, weights: np.ndarray | None = None
) -> ConstantsCovariance:
    """The delta method's covariance of ``constants`` fitted to ``X``, ``y`` (with
    sample ``weights``, mean 1); the pseudo-inverse stands in for the inverse when the
    data do not determine every constant."""
    values, jacobian = program.value_and_jacobian(X, constants)
    weights = np.ones(len(y)) if weights is None else weights
    n_points, n_constants = jacobian.shape
    residuals = y - values
    freedom = n_points - n_constants
    noise = float(np.sum(weights * residuals**2) / freedom) if freedom > 0 else np.inf
    if not (np.all(np.isfinite(jacobian)) and np.isfinite(noise)):
        nan = np.full((n_constants, n_constants), np.nan)
        return ConstantsCovariance(nan, noise if np.isfinite(noise) else np.nan, np.ones(n_constants, dtype=bool))
    information = jacobian.T @ (weights[:, None] * jacobian)
    inverse = np.linalg.pinv(information, hermitian=True)
    identifiable = np.diag(inverse @ information) >= IDENTIFIABLE
    return ConstantsCovariance(noise * inverse, noise, identifiable)


@dataclass(frozen=True)
class SelectedUncertainty:
    """The error bars of a fit's selected row (``row``: ``skeleton`` with ``constants``,
    fitted in the search's units, which ``scaling`` maps to the data's)."""

    row: int
    skeleton: Skeleton
    constants: np.ndarray
    scaling: Scaling
    covariance: ConstantsCovariance

    def prediction_std(self, X: np.ndarray, row: int) -> np.ndarray:
        """Standard deviation of a fresh observation at the rows of ``X``, in the units of ``y``."""
        if row != self.row:
            raise ValueError(f"return_std=True covers the selected equation only (row {self.row}), not row {row}.")
        spread = self.covariance.prediction_std(self.skeleton.program, self.scaling.scale_X(X), self.constants)
        return self.scaling.unscale_spread(spread)


def selected_uncertainty(table: CandidateTable, problem: Problem, scaling: Scaling) -> SelectedUncertainty:
    """The error bars of ``table``'s selected row, fitted to ``problem``."""
    skeleton, constants, _ = table.fitted[table.best_index]
    covariance = constants_covariance(skeleton.program, problem.X, problem.y, constants, problem.weights)
    return SelectedUncertainty(table.best_index, skeleton, constants, scaling, covariance)
