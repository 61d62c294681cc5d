"""Dimensionless groups of the features (the Buckingham pi theorem) and a product of
powers of them with the units of ``y``.

With the features' dimensions as the columns of a matrix ``D`` (one row per base
dimension) of rank ``r``, every dimensionless product of powers of the features has
its exponents in the null space of ``D``, of dimension ``n - r``. A basis that a
physicist would write comes from ``r`` "repeating" features whose dimensions are
independent: every other feature ``x_j``, divided by the product of powers of the
repeating ones that has its units, is a group (``v*t/x``: exponent 1 on ``x_j``), with
its exponents scaled to the smallest integers. Each choice of repeating features gives
a basis, and the same repeating features give the monomial ``m(x)`` that carries ``y``'s
units. Of all choices, the one with whole (then half) exponents in ``m``, then the
fewest features that take part only through even powers (in which the law could not
be odd: ``x/d`` rather than ``x**2/A`` and ``d**2/A``), then the smallest sum of
exponents' magnitudes wins, the first in column order on a tie. Dimensional constants
(:mod:`.constants`), the last columns, are repeating where they can be, so that each
group is a feature over constants (``v/c``, not ``c/v``). Then
``y = m(x) * f(pi_1, ..., pi_k)`` for some function ``f`` of the groups alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy

from .parsing import MAX_DENOMINATOR, Dimensions


@dataclass(frozen=True)
class PiGroups:
    """Row ``k`` of ``exponents`` holds the (integer) powers of the features in the group
    ``pi_k``; ``monomial`` the (rational) powers in the product with ``y``'s units."""

    exponents: np.ndarray
    monomial: tuple[Fraction, ...]

    @property
    def n_groups(self) -> int:
        return len(self.exponents)

    def groups(self, X: np.ndarray) -> np.ndarray:
        """The groups on the points of ``X``, one column each."""
        with np.errstate(all="ignore"):
            return np.prod(X[:, None, :] ** self.exponents[None, :, :].astype(np.float64), axis=2)

    def monomial_values(self, X: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.prod(X ** np.array([float(b) for b in self.monomial]), axis=1)

    def describe(self, symbols: Sequence[sympy.Symbol]) -> list[str]:
        """Each group written with the features' ``symbols``."""
        return [str(_product(symbols, row)) for row in self.exponents]

    def describe_monomial(self, symbols: Sequence[sympy.Symbol]) -> str:
        return str(_product(symbols, self.monomial))


def _product(symbols: Sequence[sympy.Symbol], exponents) -> sympy.Expr:
    return sympy.Mul(*(symbol ** sympy.Rational(b) for symbol, b in zip(symbols, exponents) if b != 0))


def dimension_matrix(features: Sequence[Dimensions], target: Dimensions) -> tuple[list[str], list[list[Fraction]]]:
    """The base dimensions that occur (sorted) and the matrix of the features'
    exponents with ``y``'s as its last column, one row per base dimension."""
    bases = sorted({base for dimensions in (*features, target) for base in dimensions})
    rows = [[dimensions.get(base, Fraction(0)) for dimensions in (*features, target)] for base in bases]
    return bases, rows


def written(dimensions: Dimensions) -> str:
    """Dimensions as a readable product, e.g. ``[length] * [time]^-1`` (``dimensionless``)."""
    factors = [base if b == 1 else f"{base}^{b}" for base, b in sorted(dimensions.items()) if b != 0]
    return " * ".join(factors) or "dimensionless"


def pi_groups(features: Sequence[Dimensions], target: Dimensions, n_constants: int = 0) -> PiGroups:
    """The groups and the monomial (see the module docstring) of ``features``, whose last
    ``n_constants`` are dimensional constants; a ``ValueError`` when no product of powers
    of the features has ``y``'s units."""
    n = len(features)
    _, rows = dimension_matrix(features, target)
    matrix = np.array([[float(v) for v in row] for row in rows]).reshape(len(rows), n + 1)
    D, d = matrix[:, :n], matrix[:, n]
    rank = int(np.linalg.matrix_rank(D)) if D.size else 0
    best, best_cost = None, None
    for repeating in itertools.combinations(range(n), rank):
        monomial = np.zeros(n)
        if rank:
            block = D[:, list(repeating)]
            solution, _, block_rank, _ = np.linalg.lstsq(block, matrix, rcond=None)
            if block_rank < rank:
                continue
            if not np.allclose(block @ solution[:, n], d, atol=1e-9):
                raise ValueError(_no_monomial(features, target))
            monomial[list(repeating)] = solution[:, n]
        elif np.any(d != 0):
            raise ValueError(_no_monomial(features, target))
        rest = [j for j in range(n) if j not in repeating]
        rows = np.zeros((len(rest), n))
        rows[np.arange(len(rest)), rest] = 1.0
        if rank:
            rows[:, list(repeating)] = -solution[:, rest].T
        groups = _integers(rows)
        denominators = _denominators(monomial)
        cost = (
            int(np.sum(denominators > 2)),
            int(np.sum(denominators > 1)),
            _squared_only(groups, monomial),
            -sum(j >= n - n_constants for j in repeating),
            float(np.abs(monomial).sum()) + int(np.abs(groups).sum()),
        )
        if best_cost is None or cost < best_cost:
            best_cost, best = cost, (groups, monomial)
    groups, monomial = best
    exact = tuple(Fraction(float(b)).limit_denominator(MAX_DENOMINATOR) for b in monomial)
    return PiGroups(groups, exact)


def _squared_only(groups: np.ndarray, monomial: np.ndarray) -> int:
    """How many features take part only through even powers (``d**2/A``, ``x**2/A``): a
    law in such groups is even in them, and one odd in them (``x/d``) can only be
    written with ``sqrt(x**2)``, which is ``Abs(x)``, not ``x``."""
    exponents = np.vstack([groups, monomial[None, :]])
    used = np.any(exponents != 0, axis=0)
    return int(np.sum(used & np.all(np.mod(exponents, 2) == 0, axis=0)))


def _denominators(values: np.ndarray) -> np.ndarray:
    """The denominator of each of ``values`` (fractions with denominators up to ``MAX_DENOMINATOR``)."""
    multiples = np.arange(1, MAX_DENOMINATOR + 1).reshape(-1, *([1] * values.ndim)) * values
    whole = np.abs(multiples - np.round(multiples)) < 1e-9
    if not whole.any(axis=0).all():
        raise ValueError(f"exponents {values} are not fractions with denominators up to {MAX_DENOMINATOR}")
    return whole.argmax(axis=0) + 1


def _integers(rows: np.ndarray) -> np.ndarray:
    """Each of ``rows`` (rational entries) times its least common denominator, divided by
    the greatest common divisor: the smallest integers."""
    whole = np.round(rows * np.lcm.reduce(_denominators(rows), axis=1)[:, None]).astype(np.int64)
    divisors = np.gcd.reduce(whole, axis=1)
    return whole // np.where(divisors == 0, 1, divisors)[:, None]


def _no_monomial(features: Sequence[Dimensions], target: Dimensions) -> str:
    units = ", ".join(written(f) for f in features)
    return (
        f"No product of powers of the features has the units of y ({written(target)}; the features: {units}), so "
        "no law in them can. Check X_units and y_units, or add the missing dimensional constant (such as G, c or "
        "k_B) as a column of X."
    )
