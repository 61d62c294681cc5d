"""Whether the data support each variable of an approximate equation: a shuffled-column test.

An equation that does not fit exactly can lower its error a little with any column,
used or not: a term such as ``c*x4/x2`` soaks up some of the error near ``x2 = 0``
whatever ``x4`` holds. So a variable's gain is compared with what copies of its column
in shuffled order gain in the same place. The gain is the drop in log error from the
equation with the variable replaced by a constant (constants refitted from its mean,
and from the quantile of its column of ``REPLACEMENT_QUANTILES`` that fits best as it
is; the lower) to the equation itself; a shuffled copy's gain is the same drop with the column shuffled (constants
refitted; the equation's own error is taken after a refit too). A variable is
supported when its gain is more than ``gain_ratio`` (:attr:`.SearchSettings.support_gain_ratio`)
times the largest of
``SHUFFLES`` shuffled gains, or more than ``max_gain`` (``support_max_gain``). A used variable's
gain dwarfs them (its column carries the signal); an unused one's is of their size,
since shuffling a column that carries nothing changes nothing. The second bound keeps
a variable whose removal would cost much accuracy: shuffles of a column that an
approximate form uses in an odd way can gain by chance too. Exact fits are not
tested: no column can soak up an error that is not there.

A cheaper test runs on every best row, exact or not, and after the refits' time is
spent too: a variable is *negligible* when replacing it by its mean, nothing refitted,
raises the MSE by less than ``loss / n_points`` (what a column of noise lowers it by,
on average, once fitted) plus float64's rounding of ``y``: a cancellation left over in
an exact fit (``4e-17*x1``) or a term an approximate fit found by chance. It costs one
evaluation of the row per variable.
"""

from __future__ import annotations

import numpy as np

from ...expression.program import PrefixProgram
from ...expression.skeleton import Skeleton
from ...expression.tokens import variable_index
from ..exactness import fvu_floor
from ..fitted import mse
from ..fitting.constants import Evaluations, least_squares_run
from ..settings import SearchSettings
from .pruning import column_mean, variable_replaced, variables_of
from .scores import log_fvu

SHUFFLES = 5
#: Besides its mean, a variable is replaced by these quantiles of its column: inside a
#: nonlinear law the mean may be no value that the rest of the law fits with (a column
#: under ``sin`` times a large frequency: ``sin`` of its mean may lie far from where the
#: law needs it, and no refit of the frequency finds its way back).
REPLACEMENT_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
# Float64's rounding of values of the size of y's standard deviation, with room for the
# rounding of a program's operations.
ROUNDING = 1e3 * np.finfo(np.float64).eps


def _refitted_loss(tokens, start, X, y, weights, evaluations) -> float:
    """The lowest MSE of ``tokens`` on ``(X, y)`` from ``start`` and after one refit from it."""
    program = PrefixProgram(tokens)
    loss = mse(program, X, y, start, weights)
    if len(start):
        refitted = least_squares_run(program, X, y, start, weights=weights, evaluations=evaluations)
        if refitted is not None:
            loss = min(loss, mse(program, X, y, refitted, weights))
    return loss


def negligible_variables(
    skeleton: Skeleton,
    constants: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    loss: float,
    scale: float,
    weights: np.ndarray | None = None,
) -> dict[str, float]:
    """The variables of ``skeleton`` with ``constants`` (MSE ``loss`` on ``(X, y)``,
    ``scale`` the variance of ``y``) whose replacement by their mean, nothing refitted,
    raises the MSE by less than ``loss / len(y)`` plus float64's rounding of ``y``,
    each with that mean."""
    tokens, constants = list(skeleton.tokens), np.asarray(constants, dtype=np.float64)
    rounding = (ROUNDING * np.sqrt(scale)) ** 2
    negligible = {}
    for variable in variables_of(tokens):
        mean = column_mean(variable, X, weights)
        replaced, values = variable_replaced(tokens, constants, variable, X, weights, mean)
        rise = mse(PrefixProgram(replaced), X, y, values, weights) - loss
        if rise <= loss / len(y) + rounding:
            negligible[variable] = mean
    return negligible


def _replacement(tokens, constants, variable: str, X, y, weights, evaluations) -> tuple[float, float]:
    """The lowest MSE of ``tokens`` with ``variable`` replaced by a constant, refitted
    from its mean and from the quantile of its column (``REPLACEMENT_QUANTILES``) that
    fits best as it is, and that constant (the mean where no loss is finite)."""
    mean = column_mean(variable, X, weights)
    best = (np.inf, mean)
    for value in dict.fromkeys((mean, _closest_quantile(tokens, constants, variable, X, y, weights))):
        loss = _refitted_loss(
            *variable_replaced(tokens, constants, variable, X, weights, value), X, y, weights, evaluations
        )
        if loss < best[0]:
            best = (loss, value)
    return best


def _closest_quantile(tokens, constants, variable: str, X, y, weights) -> float:
    """Of the quantiles of ``variable``'s column (``REPLACEMENT_QUANTILES``), the value
    whose replacement of it, nothing refitted, fits ``(X, y)`` best (the first where none
    is finite)."""
    quantiles = [float(value) for value in np.quantile(X[:, variable_index(variable)], REPLACEMENT_QUANTILES)]
    program = PrefixProgram(variable_replaced(tokens, constants, variable, X, weights, quantiles[0])[0])
    losses = []
    for value in quantiles:  # the same tokens each time, the constants differ
        losses.append(mse(program, X, y, variable_replaced(tokens, constants, variable, X, weights, value)[1], weights))
    losses = np.where(np.isfinite(losses), losses, np.inf)
    return quantiles[int(np.argmin(losses))]


def unsupported_variables(
    skeleton: Skeleton,
    constants: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    scale: float,
    weights: np.ndarray | None = None,
    seed: int = 0,
    evaluations: Evaluations | None = None,
    gain_ratio: float = SearchSettings.support_gain_ratio,
    max_gain: float = SearchSettings.support_max_gain,
) -> dict[str, float]:
    """The variables (tokens such as ``x_3``) of ``skeleton`` with ``constants`` whose
    gain on ``(X, y)`` is neither above ``gain_ratio`` times that of any shuffled
    copy of their column nor above ``max_gain``, each with the constant that replaces
    it best (:func:`_replacement`); ``scale`` is the variance of ``y``. Variables not
    tested before the refits spent the shared ``evaluations`` count as supported."""
    tokens, constants = list(skeleton.tokens), np.asarray(constants, dtype=np.float64)
    # refitted as the comparisons are, so that a better optimum of the other constants
    # is not credited to the shuffled copies
    loss = _refitted_loss(tokens, constants, X, y, weights, evaluations)
    tie = fvu_floor(y, scale, weights)  # the selection's floor
    rng = np.random.default_rng(seed)
    unsupported = {}
    for variable in variables_of(tokens):
        if evaluations is not None and evaluations.spent:
            break
        column = variable_index(variable)
        without, value = _replacement(tokens, constants, variable, X, y, weights, evaluations)
        if not np.isfinite(without):  # the equation needs the variable to be defined: nothing to compare
            continue
        shuffled_losses = []
        for _ in range(SHUFFLES):
            shuffled = X.copy()
            shuffled[:, column] = rng.permutation(shuffled[:, column])
            shuffled_losses.append(_refitted_loss(tokens, constants, shuffled, y, weights, evaluations))
        floor, gains = log_fvu([without], scale, tie)[0], log_fvu(shuffled_losses, scale, tie)
        gain = floor - log_fvu([loss], scale, tie)[0]
        shuffled_gain = max(0.0, float(np.max(floor - gains)))
        if gain <= max_gain and not gain > gain_ratio * shuffled_gain:
            unsupported[variable] = value
    return unsupported
