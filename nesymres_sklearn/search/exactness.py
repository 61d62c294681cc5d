"""What "exact" means: every tolerance of the search at which a fit counts as exact, one
name and one predicate per meaning.

Each is a fraction of variance unexplained (FVU: a squared error over the variance it
leaves, or a share of a sum of squares). The values differ because the fits they judge
come differently close to their target:

================  =====  ====================================================================
name              FVU    a fit this close or closer ...
================  =====  ====================================================================
``EXACT_FIT``     1e-14  is exact: no more work goes into it (further starts and rounds,
                         the outer scaling, the residual, reciprocal and inverted looks,
                         the variable test, Operon)
``ROUNDING_FIT``  1e-24  is exact to float64's rounding: a law, where an approximation can
                         pass ``EXACT_FIT`` (one of degree 4 of ``exp(x) - 1`` on [0, 0.15]
                         gets to 3e-16); the network's looks stop after one, and the
                         exhaustive look is not taken after one, and keeps its simplest
``FVU_FLOOR``     1e-12  ties every other such fit in the selection's score (below it only
                         rounding differs)
``POLYNOMIAL``    1e-12  is an exact polynomial (linear least squares over its monomials)
``POWER_LAW``     1e-10  is a power law of every column (a line of ``log|y|`` in the
                         ``log|x_j|``)
``SURROGATE``     1e-9   is exact as a Gaussian process's leave-one-out prediction sees it
                         (the reduction's combinations)
``READABLE``      1e-9   has constants that may be re-spelled as named numbers (``pi``,
                         ``sqrt(2)``), not only as plain ones
``NEAR_EXACT``    1e-8   from a compiled runner (float32) is polished in float64
``RESTATEMENT``   1e-12  of another fit's predictions (their mean squared difference over
                         the variance of ``y``) restates it: ``x0*(1.0*sin(x1))`` or
                         ``x0*sin(x1 - 5.06e-8)`` beside ``x0*sin(x1)``; the table keeps
                         the better-scoring one
================  =====  ====================================================================

On data over decades a sum of squares reads the largest values alone: where a typical
point's square is below ``SPREAD_SHARE`` of the variance, ``EXACT_FIT`` and ``FVU_FLOOR``
are scaled by it (:func:`typical_share`; else by 1), so that a fit that misses most
points by their own size is neither exact nor tied with one that does not. And one
tolerance is relative, point by point: a rewriting of an accurate fit (a constant pruned
or spelled as a number) must also keep every point's relative error within
``RELATIVE_RISE`` times what it was, or ``RELATIVE_FLOOR`` (:func:`keeps_every_point`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

EXACT_FIT = 1e-14
ROUNDING_FIT = 1e-24
FVU_FLOOR = 1e-12
POLYNOMIAL = 1e-12
POWER_LAW = 1e-10
SURROGATE = 1e-9
READABLE = 1e-9
NEAR_EXACT = 1e-8
RESTATEMENT = 1e-12
RELATIVE_RISE = 1e3
RELATIVE_FLOOR = 1e-9
SPREAD_SHARE = 1e-3


def is_exact(loss, scale: float = 1.0):
    """Whether a fit with squared error ``loss`` (of variance ``scale``) is exact."""
    return loss <= EXACT_FIT * scale


def typical_share(y: np.ndarray, scale: float, weights: np.ndarray | None = None) -> float:
    """What ``EXACT_FIT`` and ``FVU_FLOOR`` are multiplied by for targets ``y`` of
    (weighted) variance ``scale``: 1 unless a typical point's square (the weighted median
    of ``y**2``) is below ``SPREAD_SHARE`` of the variance, the data spanning decades;
    then that ratio over ``SPREAD_SHARE``. ``x0 + x3 + 3.5 + 1.4*exp(2.4*x1 + x2)`` over
    eight decades, written as its exponential alone, leaves a fraction of variance
    unexplained of 4e-16 while most points are off by a third of their value or more; the
    share keeps it from passing for exact. At least ``ROUNDING_FIT / EXACT_FIT`` (an
    exact fit is at least one exact to rounding) and ``ROUNDING_FIT / FVU_FLOOR`` times
    the mean of ``y**2`` over ``scale`` (float64's rounding of the largest values stays
    below the scaled floor)."""
    with np.errstate(all="ignore"):
        squares = np.asarray(y, dtype=np.float64) ** 2
        if weights is None:
            median, mean = float(np.median(squares)), float(np.mean(squares))
        else:
            median = float(np.quantile(squares, 0.5, weights=weights, method="inverted_cdf"))
            mean = float(np.average(squares, weights=weights))
        share = median / scale / SPREAD_SHARE
        rounding = ROUNDING_FIT / FVU_FLOOR * mean / scale
    share = min(1.0, max(share, rounding, ROUNDING_FIT / EXACT_FIT))
    return share if np.isfinite(share) else 1.0


def fvu_floor(y: np.ndarray, scale: float, weights: np.ndarray | None = None) -> float:
    """The fraction of variance unexplained below which fits of targets ``y`` (of
    variance ``scale``) tie in the selection's score: ``FVU_FLOOR`` times
    :func:`typical_share`."""
    return FVU_FLOOR * typical_share(y, scale, weights)


def is_exact_to_rounding(loss, scale: float = 1.0):
    """Whether a fit with squared error ``loss`` (of variance ``scale``) is exact to float64's rounding."""
    return loss <= ROUNDING_FIT * scale


def is_exact_polynomial(fvu: float) -> bool:
    """Whether a polynomial's least-squares fit with this FVU is exact."""
    return fvu <= POLYNOMIAL


def is_power_law(error: float, total: float) -> bool:
    """Whether a line in logs that leaves ``error`` of the ``total`` sum of squares of
    ``log|y|`` makes ``y`` a power law."""
    return error <= POWER_LAW * total


def is_exact_surrogate(fvu: float) -> bool:
    """Whether a surrogate's leave-one-out fit with this FVU is exact."""
    return fvu <= SURROGATE


def is_readable_exactly(fvu: float) -> bool:
    """Whether a fit with this FVU is exact enough for named numbers in its constants."""
    return fvu <= READABLE


def is_near_exact(fvu: float) -> bool:
    """Whether a compiled runner's fit with this FVU is polished in float64."""
    return fvu <= NEAR_EXACT


def is_restatement(difference: float, scale: float = 1.0) -> bool:
    """Whether two fits whose predictions differ by this mean squared ``difference`` (of
    ``y``'s variance ``scale``) are one law written twice."""
    return difference <= RESTATEMENT * scale


def restatement_reach(scale: float = 1.0) -> float:
    """How far apart the square roots of two restatements' losses can be (the triangle
    inequality of root mean squares): rows farther apart need no comparison."""
    return (RESTATEMENT * scale) ** 0.5


@dataclass(frozen=True, eq=False)
class Tolerance:
    """How closely an identity must hold: exact to float64's rounding (``sd`` is
    ``None``), or to the noise of ``y``, whose standard deviation at each point is ``sd``
    (a chi-square test: a law holds where its errors in units of ``sd`` have a mean
    square of at most ``ratio**2``; a system's null vector where its residual is at most
    ``ratio**2`` times the share of it that the noise of ``y`` makes). Under noise, a law
    of more than ``most_constants`` constants is no identity (it may fit the noise), the
    systems have at most ``most_unknowns`` unknowns (none: as many as the points allow),
    and each rational fit takes ``polish`` Gauss-Newton steps."""

    sd: np.ndarray | None = None
    ratio: float = 1.0
    most_constants: int | None = None
    most_unknowns: int | None = None
    polish: int = 0

    @property
    def exact(self) -> bool:
        return self.sd is None

    def law_holds(
        self, y: np.ndarray, predicted: np.ndarray, loss: float, scale: float, variance: np.ndarray | float = 0.0
    ) -> bool:
        """Whether a law predicting ``predicted`` for ``y`` with mean squared error ``loss``
        (of ``y``'s variance ``scale``) holds; under noise, the prediction's own error of
        ``variance`` at each point (its constants' uncertainty) adds to the noise's."""
        if self.sd is None:
            return bool(is_exact_to_rounding(loss, scale))
        with np.errstate(all="ignore"):
            errors = (y - predicted) ** 2 / (self.sd**2 + variance)
            return bool(np.mean(errors) <= self.ratio**2)

    def null_holds(self, residual: float, share: float = 1.0) -> bool:
        """Whether a null vector of squared ``residual`` holds: exact to rounding, or at
        most ``ratio**2`` times the ``share`` of it that the noise makes."""
        return bool(is_exact_to_rounding(residual) if self.sd is None else residual <= self.ratio**2 * share)

    def unknowns(self, allowed: int) -> int:
        """The unknowns of a system, of the ``allowed`` by the points."""
        return allowed if self.most_unknowns is None else min(allowed, self.most_unknowns)

    def at(self, rows) -> Tolerance:
        """The tolerance on the points ``rows``."""
        return self._of(lambda sd: sd[rows])

    def over(self, divisor: np.ndarray) -> Tolerance:
        """The tolerance of ``y / divisor``."""
        return self._of(lambda sd: sd / np.abs(divisor))

    def of_square(self, y: np.ndarray) -> Tolerance:
        """The tolerance of ``y**2`` (to first order, ``2*|y|*sd``)."""
        return self._of(lambda sd: 2 * np.abs(y) * sd)

    def of_log(self, y: np.ndarray) -> Tolerance:
        """The tolerance of ``log|y|`` (to first order, ``sd/|y|``)."""
        return self._of(lambda sd: sd / np.abs(y))

    def _of(self, noise: Callable[[np.ndarray], np.ndarray]) -> Tolerance:
        """This tolerance with the noise ``noise(sd)``; exact to rounding, itself."""
        return self if self.sd is None else replace(self, sd=noise(self.sd))


#: Identities exact to float64's rounding.
EXACT = Tolerance()


def worst_relative_error(predicted: np.ndarray, y: np.ndarray) -> float:
    """The largest relative error of ``predicted`` at a point where ``y`` is not 0; inf
    where one is not finite, nan where every ``y`` is 0."""
    nonzero = y != 0
    if not np.any(nonzero):
        return float("nan")
    with np.errstate(all="ignore"):
        errors = np.abs(predicted[nonzero] / y[nonzero] - 1)
    return float(np.max(np.where(np.isnan(errors), np.inf, errors)))


def keeps_every_point(rewritten: float, original: float) -> bool:
    """Whether a rewriting whose worst relative error is ``rewritten`` keeps the points of
    a fit whose worst was ``original`` (:func:`worst_relative_error`): at most
    ``RELATIVE_RISE`` times it, or ``RELATIVE_FLOOR``; always where ``original`` is not finite."""
    return not np.isfinite(original) or rewritten <= max(RELATIVE_RISE * original, RELATIVE_FLOOR)
