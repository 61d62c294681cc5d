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
   that depart more than ``MIN_DEPARTURE`` of that error, the largest first, up to the
   network's variables.
3. The exponents of ``A`` come from one least-squares fit of ``log|y|`` on the
   ``log|x_a|`` and a cubic polynomial in the standardised ``x_B``. Columns that are
   independent in the data leave the exponents unbiased whatever ``f`` is. The fit
   must explain ``MIN_R2`` of the variance of ``log|y|``, and every exponent must lie
   within ``EXPONENT_TOLERANCE`` of a multiple of one half (the signature of a power
   law; an arbitrary dependence rarely gives that for every column).

The network then works on ``X[:, B]`` and ``y / x_A**b_A`` (divided by a power of ten
that keeps it in the network's range), and each of its skeletons ``f`` comes back as
``c * x_A**b_A * f``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from ...expression.monomial import monomial_tokens
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..scaling import TARGET_BAND, power_of_ten
from .power_law import MAX_EXPONENT, keeps_one_sign

MIN_DEPARTURE = 0.05
MIN_R2 = 0.99
EXPONENT_TOLERANCE = 0.05
# Points per coefficient of the exponents' fit, at least.
POINTS_PER_TERM = 3
# A line in logs that leaves less than this share of the variance of log|y| is a power law.
EXACT_SHARE = 1e-10


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


def power_factor(
    X: np.ndarray, y: np.ndarray, n_variables: int, weights: np.ndarray | None = None
) -> PowerFactor | None:
    """The split of ``(X, y)`` into a power-law factor and at most ``n_variables``
    columns for the network (``weights``: sample weights, mean 1), or ``None`` when
    the data show no such split."""
    n, d = X.shape
    if d <= n_variables or not keeps_one_sign(y):
        return None
    usable = [j for j in range(d) if keeps_one_sign(X[:, j])]
    forced = [j for j in range(d) if j not in usable]
    if len(forced) > n_variables:
        return None
    root = np.ones(n) if weights is None else np.sqrt(weights)
    target = np.log(np.abs(y))
    logs = {j: np.log(np.abs(X[:, j])) for j in usable}
    spread = X.std(axis=0)
    standard = (X - X.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    base = np.column_stack([np.ones(n), *logs.values(), _cubic(standard[:, forced])])
    error, _ = _sse(base, target, root)
    total = float(np.sum((root * (target - np.average(target, weights=weights))) ** 2))
    if error <= EXACT_SHARE * total:  # a power law of every column: the power-law candidate's case
        return None
    departures = {}
    for j in usable:
        extra = np.column_stack([standard[:, j], standard[:, j] ** 2, logs[j] ** 2])
        departures[j] = error - _sse(np.column_stack([base, extra]), target, root)[0]
    ranked = sorted((j for j in usable if departures[j] > MIN_DEPARTURE * error), key=lambda j: -departures[j])
    rest = sorted(forced + ranked[: n_variables - len(forced)])
    factor = [j for j in usable if j not in rest]
    if not rest or not factor:
        return None
    rest_logs = [logs[j] for j in rest if j in logs]
    design = np.column_stack([np.ones(n), *(logs[j] for j in factor), _cubic(standard[:, rest]), *rest_logs])
    if n < POINTS_PER_TERM * design.shape[1]:
        return None
    residual, coefficients = _sse(design, target, root)
    exponents = coefficients[1 : 1 + len(factor)]
    rounded = np.round(2 * exponents) / 2
    if (
        residual > (1 - MIN_R2) * total
        or np.any(np.abs(exponents - rounded) > EXPONENT_TOLERANCE)
        or np.any(np.abs(rounded) > MAX_EXPONENT)
        or not np.any(rounded != 0)
    ):
        return None
    split = PowerFactor({j: float(b) for j, b in zip(factor, rounded) if b != 0}, np.array(rest), 1.0)
    with np.errstate(all="ignore"):
        divided = split.target(X, y)
    if not np.all(np.isfinite(divided)):
        return None
    return replace(split, scale=power_of_ten(divided, TARGET_BAND))
