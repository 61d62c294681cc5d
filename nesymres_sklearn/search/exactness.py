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
"""

from __future__ import annotations

EXACT_FIT = 1e-14
ROUNDING_FIT = 1e-24
FVU_FLOOR = 1e-12
POLYNOMIAL = 1e-12
POWER_LAW = 1e-10
SURROGATE = 1e-9
READABLE = 1e-9
NEAR_EXACT = 1e-8
RESTATEMENT = 1e-12


def is_exact(loss, scale: float = 1.0):
    """Whether a fit with squared error ``loss`` (of variance ``scale``) is exact."""
    return loss <= EXACT_FIT * scale


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
