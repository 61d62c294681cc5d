"""A power-law factor split off, so that the network sees the rest: ``y = x_A**b_A * f(x_B)``.

With more features than the network's variables, many laws are a product of powers
of some features and a function of a few others (``n*k*T*ln(V2/V1)``). In logs,
``log|y| = sum over A of b_a*log|x_a| + log|f(x_B)|``, so the split is found on the
data:

1. ``y`` keeps one sign; a column that keeps one sign may be in ``A``, the others
   must be in ``B``.
2. Each column's departure from a power law is how much the error of a line of
   ``log|y|`` on the ``log|x_j|`` drops when ``x_j`` also gets the terms ``x_j``,
   ``x_j**2`` and ``log|x_j|**2``. ``B`` is the columns that cannot be in ``A`` and those
   that depart more than ``power_factor_min_departure`` of that error, the largest
   first, up to the network's variables.
3. The exponents of ``A`` come from one least-squares fit of ``log|y|`` on the
   ``log|x_a|`` and a cubic polynomial in the standardised ``x_B``. Columns that are
   independent in the data leave the exponents unbiased whatever ``f`` is. The fit
   must explain ``power_factor_min_r2`` of the variance of ``log|y|``, and every exponent
   must lie within ``power_factor_exponent_tolerance`` of a multiple of one half (the
   signature of a power law; an arbitrary dependence rarely gives that for every column).
   The three are :class:`..settings.SearchSettings` fields.

Where ``y`` changes sign (``v1*(v2 - v3)*v4/v5``: the rest crosses zero, and its log has
no cubic), or the cubic does not follow the rest, the exponents come from pairs of
nearest neighbours in ``x_B`` instead (:func:`neighbour_split`), with ``B`` the columns
of step 2 and, failing that, the next ones by their departure, up to the network's
variables; the split stands when ``y / x_A**b_A`` is a function of ``x_B`` alone.

The network then works on ``X[:, B]`` and ``y / x_A**b_A`` (divided by a power of ten
that keeps it in the network's range), and each of its skeletons ``f`` comes back as
``c * x_A**b_A * f``. Its least-squares fits run on the fit's one BLAS thread
(:func:`nesymres_sklearn.shared_setting.one_blas_thread`); a deadline that passes between them ends the search
with no split.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial import cKDTree

from ...expression.monomial import monomial_tokens
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..budget import Deadline
from ..exactness import is_power_law
from ..scaling import TARGET_BAND, power_of_ten
from ..settings import SearchSettings
from .power_law import MAX_EXPONENT, keeps_one_sign

# Points per coefficient of the exponents' fit, at least.
POINTS_PER_TERM = 3
# Rounds of the neighbours' split (neighbour_split).
NEIGHBOUR_ROUNDS = 3


@dataclass(frozen=True)
class PowerFactor:
    """``exponents`` of the columns of ``A`` (multiples of one half, none 0), the
    columns ``rest`` (``B``) the network works on, and the power of ten ``scale`` that
    the rest's target is divided by."""

    exponents: dict[int, float]
    rest: np.ndarray
    scale: float

    def monomial(self, X: np.ndarray) -> np.ndarray:
        return np.prod([X[:, j] ** b for j, b in self.exponents.items()], axis=0)

    def target(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """What the network fits on ``X[:, rest]``: ``y`` over the factor and the scale."""
        return y / self.monomial(X) / self.scale

    def times(self, skeleton: Skeleton, constants: np.ndarray) -> tuple[Skeleton, np.ndarray]:
        """``c * x_A**b_A * skeleton`` (``skeleton`` over all features) and its constants."""
        tokens = ("mul", CONSTANT, "mul", *monomial_tokens(self.exponents), *skeleton.tokens)
        return Skeleton(tokens), np.concatenate([[self.scale], np.asarray(constants, dtype=np.float64)])


def _sse(design: np.ndarray, target: np.ndarray, root: np.ndarray) -> tuple[float, np.ndarray]:
    """Weighted sum of squared residuals of the least-squares fit, and its coefficients."""
    coefficients = np.linalg.lstsq(design * root[:, None], target * root, rcond=None)[0]
    return float(np.sum((root * (target - design @ coefficients)) ** 2)), coefficients


def _cubic(Z: np.ndarray) -> np.ndarray:
    """Every monomial of degree 1 to 3 in the columns of ``Z``."""
    columns = [
        np.prod(Z[:, list(combination)], axis=1)
        for degree in (1, 2, 3)
        for combination in itertools.combinations_with_replacement(range(Z.shape[1]), degree)
    ]
    return np.column_stack(columns) if columns else np.empty((len(Z), 0))


class _OutOfTime(Exception):
    """The deadline passed between two fits of the split."""


def power_factor(
    X: np.ndarray,
    y: np.ndarray,
    n_variables: int,
    weights: np.ndarray | None = None,
    deadline: Deadline | None = None,
    settings: SearchSettings | None = None,
) -> PowerFactor | None:
    """The split of ``(X, y)`` into a power-law factor and at most ``n_variables``
    columns for the network (``weights``: sample weights, mean 1), or ``None`` when
    the data show no such split, or when ``deadline`` passes before one is found: by
    the exponents' fit in logs, else (``y`` changing sign, or a rest the cubic does not
    follow) by :func:`neighbour_split`, by the ``settings``' knobs (default
    :class:`.SearchSettings`; see the module docstring)."""
    settings = SearchSettings() if settings is None else settings
    n, d = X.shape
    if d <= n_variables:
        return None
    try:
        chosen = _columns(X, y, n_variables, weights, deadline, settings)
    except _OutOfTime:
        return None
    if chosen is None:
        return None
    forced, ranked, departing = chosen
    rest = sorted(forced + ranked[:departing])
    factor = sorted(j for j in ranked if j not in rest)
    fitted = keeps_one_sign(y) and rest and factor
    split = _fitted_split(X, y, rest, factor, weights, settings) if fitted else None
    for size in range(departing, n_variables - len(forced) + 1):  # the next columns may belong to the rest
        if split is not None or (deadline is not None and deadline.passed()):
            break
        rest = sorted(forced + ranked[:size])
        factor = sorted(j for j in ranked if j not in rest)
        split = neighbour_split(X, y, rest, factor, settings) if rest and factor else None
    if split is None:
        return None
    with np.errstate(all="ignore"):
        divided = split.target(X, y)
    if not np.all(np.isfinite(divided)):
        return None
    return replace(split, scale=power_of_ten(divided, TARGET_BAND))


def _columns(
    X: np.ndarray, y: np.ndarray, n_variables: int, weights, deadline: Deadline | None, settings: SearchSettings
) -> tuple[list[int], list[int], int] | None:
    """Steps 1 and 2 of the module docstring: the columns that must be in the rest, the
    others by their departure from a power law, largest first, and how many of those
    depart more than ``power_factor_min_departure`` of its error (up to the network's
    variables); with ``y`` changing sign, on the points outside the smallest
    ``power_factor_small_share`` of ``|y|`` (the ``settings``'), near
    the rest's zeros. ``None`` when there is no such split; raises :class:`_OutOfTime`
    when ``deadline`` passes between two columns."""
    usable = [j for j in range(X.shape[1]) if keeps_one_sign(X[:, j])]
    forced = [j for j in range(X.shape[1]) if j not in usable]
    if len(forced) > n_variables:
        return None
    if not keeps_one_sign(y):
        kept = np.abs(y) > np.quantile(np.abs(y), settings.power_factor_small_share)
        X, y = X[kept], y[kept]
        weights = None if weights is None else weights[kept]
    n = len(y)
    root = np.ones(n) if weights is None else np.sqrt(weights)
    with np.errstate(divide="ignore"):
        target = np.log(np.abs(y))
    if not np.all(np.isfinite(target)):
        return None
    logs = {j: np.log(np.abs(X[:, j])) for j in usable}
    standard = _standardised(X)
    base = np.column_stack([np.ones(n), *logs.values(), _cubic(standard[:, forced])])
    error, _ = _sse(base, target, root)
    total = float(np.sum((root * (target - np.average(target, weights=weights))) ** 2))
    if is_power_law(error, total):  # a power law of every column: the power-law candidate's case
        return None
    departures = {}
    for j in usable:
        if deadline is not None and deadline.passed():
            raise _OutOfTime
        extra = np.column_stack([standard[:, j], standard[:, j] ** 2, logs[j] ** 2])
        departures[j] = error - _sse(np.column_stack([base, extra]), target, root)[0]
    ranked = sorted(usable, key=lambda j: -departures[j])
    departing = sum(departures[j] > settings.power_factor_min_departure * error for j in usable)
    return forced, ranked, min(departing, n_variables - len(forced))


def _standardised(X: np.ndarray) -> np.ndarray:
    spread = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def _fitted_split(X, y, rest: list[int], factor: list[int], weights, settings: SearchSettings) -> PowerFactor | None:
    """Step 3 of the module docstring: the exponents of ``factor`` from one fit in logs."""
    n = len(y)
    root = np.ones(n) if weights is None else np.sqrt(weights)
    target = np.log(np.abs(y))
    total = float(np.sum((root * (target - np.average(target, weights=weights))) ** 2))
    logs = {j: np.log(np.abs(X[:, j])) for j in range(X.shape[1]) if keeps_one_sign(X[:, j])}
    rest_logs = [logs[j] for j in rest if j in logs]
    design = np.column_stack([np.ones(n), *(logs[j] for j in factor), _cubic(_standardised(X)[:, rest]), *rest_logs])
    if n < POINTS_PER_TERM * design.shape[1]:
        return None
    residual, coefficients = _sse(design, target, root)
    if residual > (1 - settings.power_factor_min_r2) * total:
        return None
    return _rounded_split(coefficients[1 : 1 + len(factor)], rest, factor, settings.power_factor_exponent_tolerance)


def _rounded_split(exponents: np.ndarray, rest: list[int], factor: list[int], tolerance: float) -> PowerFactor | None:
    """The split with ``exponents`` rounded to multiples of one half, when every one lies
    within ``tolerance`` of its multiple and below ``MAX_EXPONENT``, one not 0."""
    rounded = np.round(2 * exponents) / 2
    if (
        np.any(np.abs(exponents - rounded) > tolerance)
        or np.any(np.abs(rounded) > MAX_EXPONENT)
        or not np.any(rounded != 0)
    ):
        return None
    return PowerFactor({j: float(b) for j, b in zip(factor, rounded) if b != 0}, np.array(rest), 1.0)


def neighbour_split(
    X: np.ndarray,
    y: np.ndarray,
    rest: list[int],
    factor: list[int],
    settings: SearchSettings | None = None,
) -> PowerFactor | None:
    """The split of ``y = x_A**b_A * f(x_B)`` (``A``: ``factor``, ``B``: ``rest``) from
    pairs of nearest neighbours in ``x_B`` (the logs of one-sign columns, standardised):
    between them ``f`` barely changes, so the differences of ``log|y|`` are those of
    ``b_A . log|x_A|``, fitted by least squares with the ``1 - power_factor_neighbour_kept`` largest
    residuals set aside, ``NEIGHBOUR_ROUNDS`` times (they hold the pairs across a zero
    of ``f``). Checked: ``y / x_A**b_A`` must be a function of ``x_B`` alone, its
    nearest neighbour's value leaving at most ``power_factor_neighbour_unexplained`` of
    its variance unexplained; exponents within ``power_factor_exponent_tolerance`` of
    halves (the ``settings``, default :class:`.SearchSettings`)."""
    settings = SearchSettings() if settings is None else settings
    if len(y) < POINTS_PER_TERM * (len(factor) + 1):
        return None
    rest_values = np.column_stack([np.log(np.abs(X[:, j])) if keeps_one_sign(X[:, j]) else X[:, j] for j in rest])
    points = _standardised(rest_values)
    _, neighbours = cKDTree(points).query(points, k=2)
    neighbour = neighbours[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_y = np.log(np.abs(y))
        differences = log_y - log_y[neighbour]
    logs = np.column_stack([np.log(np.abs(X[:, j])) for j in factor])
    steps = logs - logs[neighbour]
    kept = np.isfinite(differences)
    if kept.sum() < POINTS_PER_TERM * len(factor):
        return None
    for _ in range(NEIGHBOUR_ROUNDS):
        exponents = np.linalg.lstsq(steps[kept], differences[kept], rcond=None)[0]
        residuals = np.abs(differences - steps @ exponents)
        kept &= residuals <= np.quantile(residuals[kept], settings.power_factor_neighbour_kept)
    split = _rounded_split(exponents, rest, factor, settings.power_factor_exponent_tolerance)
    if split is None:
        return None
    with np.errstate(all="ignore"):
        divided = y / split.monomial(X)
    if not np.all(np.isfinite(divided)) or np.var(divided) == 0:
        return None
    unexplained = np.mean((divided - divided[neighbour]) ** 2) / 2
    return split if unexplained <= settings.power_factor_neighbour_unexplained * np.var(divided) else None
