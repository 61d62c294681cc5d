"""Fitting the constants of a skeleton: BFGS on the mean squared error.

The objective is the MSE divided by the variance of ``y`` (so tolerances do not depend
on the scale of the data), with the exact gradient from
:meth:`PrefixProgram.value_and_jacobian`. The first start sets every constant to 1;
further starts draw from U(-5, 5). The constants kept are the optimiser's result
(``OptimizeResult.x``), re-evaluated, never the last point it happened to evaluate.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ..expression.program import PrefixProgram

# Stop restarting once the normalised MSE is this small: the fit is exact.
EXACT_FIT = 1e-14
# BFGS stops when the gradient norm of the normalised MSE is below this, or after
# MAX_ITERATIONS iterations: skeletons that do not fit after 100 iterations rarely
# win, and letting them run to scipy's 200*k limit cost 8x the time at beam 32.
GRADIENT_TOLERANCE = 1e-8
MAX_ITERATIONS = 100
START_RANGE = 5.0


@dataclass(frozen=True)
class ConstantFit:
    """Result of fitting one skeleton."""

    constants: np.ndarray
    mse: float
    n_restarts_run: int


def mse(program: PrefixProgram, X: np.ndarray, y: np.ndarray, constants) -> float:
    """Mean squared error of ``program`` on ``(X, y)``; inf when not finite."""
    with np.errstate(all="ignore"):
        value = float(np.mean((program(X, constants) - y) ** 2))
    return value if np.isfinite(value) else np.inf


def fit_constants(
    program: PrefixProgram,
    X: np.ndarray,
    y: np.ndarray,
    n_restarts: int,
    rng: np.random.Generator,
    deadline: float | None = None,
) -> ConstantFit:
    """Fit the constants of ``program`` to ``(X, y)`` with BFGS from ``n_restarts`` starts.

    ``deadline`` is a :func:`time.time` value after which no new start begins
    and a running optimisation stops at its current iterate.
    """
    k = program.n_constants
    if k == 0:
        return ConstantFit(np.empty(0), mse(program, X, y, ()), 0)
    scale = float(np.var(y)) or 1.0

    def objective(constants):
        values, jacobian = program.value_and_jacobian(X, constants)
        with np.errstate(all="ignore"):
            residual = values - y
            loss = float(np.mean(residual**2)) / scale
            gradient = (2.0 / (len(y) * scale)) * (residual @ jacobian)
        if not (np.isfinite(loss) and np.all(np.isfinite(gradient))):
            return np.inf, np.zeros(k)
        return loss, gradient

    def stop_at_deadline(intermediate_result):
        if deadline is not None and time.time() > deadline:
            raise StopIteration

    best = ConstantFit(np.ones(k), mse(program, X, y, np.ones(k)), 0)
    for restart in range(max(1, n_restarts)):
        if restart and deadline is not None and time.time() > deadline:
            break
        start = np.ones(k) if restart == 0 else rng.uniform(-START_RANGE, START_RANGE, size=k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = minimize(
                objective,
                start,
                jac=True,
                method="BFGS",
                callback=stop_at_deadline,
                options={"gtol": GRADIENT_TOLERANCE, "maxiter": MAX_ITERATIONS},
            )
        loss = mse(program, X, y, result.x)
        if loss < best.mse or not np.isfinite(best.mse):
            best = ConstantFit(np.array(result.x, dtype=np.float64), loss, restart + 1)
        else:
            best = ConstantFit(best.constants, best.mse, restart + 1)
        if best.mse / scale <= EXACT_FIT:
            break
    return best
