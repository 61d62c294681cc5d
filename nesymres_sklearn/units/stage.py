"""The units stage of ``fit``: the problem in dimensionless groups, and its candidates
back over the features.

Given the units of the features and of ``y`` (:mod:`.parsing`), ``y = m(x) *
f(pi_1, ..., pi_k)`` (:mod:`.groups`). The network's problem is the groups, each
divided by the power of ten that keeps it in the network's range, and ``y / m(x)``,
divided by another; the routing of many variables (:mod:`..search.variables.routing`)
applies to the groups as to features, and the candidates come back with the groups
substituted, times ``c * m(x)``. With no group (``y`` is ``m(x)`` times a constant),
the network reads the features as they are; the candidate ``c * m(x)`` joins the
candidates in every case. Candidates
over the features that are not dimensionally consistent (:mod:`.consistency`) are set
aside, unless none of the rest explains enough of ``y``'s variance
(``SearchSettings.units_min_r2``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy

from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT, variable_token
from ..search.fitting.constants import mse
from ..search.problem import Problem
from ..search.scaling import FEATURE_BAND, TARGET_BAND, power_of_ten
from ..search.selection.table import CandidateRows
from .consistency import is_consistent
from .groups import PiGroups, dimension_matrix, pi_groups
from .parsing import parse_units

Fitted = tuple[Skeleton, np.ndarray, float]


@dataclass(frozen=True)
class Units:
    """The units of the features (``X_units``) and of ``y`` (``y_units``) as given,
    their exponents over the ``bases`` (rows of ``features``: one per feature;
    ``target``: y's), and the groups and monomial of the problem."""

    X_units: tuple[str, ...]
    y_units: str
    bases: tuple[str, ...]
    features: np.ndarray
    target: np.ndarray
    groups: PiGroups

    @classmethod
    def parse(cls, X_units, y_units, n_features: int) -> Units | None:
        """The units of a problem with ``n_features`` features; ``None`` when neither is
        given. Raises a ``ValueError`` that names the problem with bad units."""
        parsed = parse_units(X_units, y_units, n_features)
        if parsed is None:
            return None
        features, target = parsed
        bases, rows = dimension_matrix(features, target)
        matrix = np.array([[float(v) for v in row] for row in rows]).reshape(len(bases), n_features + 1)
        return cls(
            tuple(X_units),
            y_units,
            tuple(bases),
            matrix[:, :n_features].T.copy(),
            matrix[:, n_features].copy(),
            pi_groups(features, target),
        )

    def dimensionless(self, problem: Problem) -> Dimensionless | None:
        """The network's problem in the groups, for ``problem`` over the features;
        ``None`` without groups."""
        if not self.groups.n_groups:
            return None
        Z = self.groups.groups(problem.X)
        scales = np.array([power_of_ten(Z[:, k], FEATURE_BAND) for k in range(Z.shape[1])])
        monomial = self.groups.monomial_values(problem.X)
        target = problem.y / monomial
        target_scale = power_of_ten(target, TARGET_BAND)
        seen = Problem(Z / scales, target / target_scale, problem.weights)
        return Dimensionless(seen, self.groups, scales, target_scale, target_scale * monomial)

    def rows(self, found: CandidateRows, whole: Problem, dimensionless: Dimensionless | None) -> CandidateRows:
        """The network's rows over the features of ``whole`` (``found`` over the groups
        of ``dimensionless``, or over the features when there is none), with ``c * m(x)``."""
        rows = found if dimensionless is None else dimensionless.back_rows(found, whole)
        monomial = _power_tokens(self.groups.monomial)
        skeleton = Skeleton(("mul", CONSTANT, *monomial) if monomial else (CONSTANT,))
        m = self.groups.monomial_values(whole.X)
        weights = np.ones_like(m) if whole.weights is None else whole.weights
        with np.errstate(all="ignore"):
            c = np.sum(weights * whole.y * m) / np.sum(weights * m * m)
        constants = np.array([c if np.isfinite(c) else 1.0])
        loss = mse(skeleton.program, whole.X, whole.y, constants, whole.weights)
        rows.add(skeleton, constants, loss, float("-inf"), "units")
        return rows

    def keep(self, problem: Problem, min_r2: float):
        """The selection's filter of the rows of ``problem`` (:meth:`consistent`)."""
        return lambda rows: self.consistent(rows, problem, min_r2)

    def consistent(self, rows: CandidateRows, problem: Problem, min_r2: float) -> CandidateRows:
        """The rows that are dimensionally consistent with the units, when the best of
        them explains at least ``min_r2`` of the variance of ``problem.y``; else all
        rows, with a warning (when some are inconsistent)."""
        consistent = rows.where(
            lambda skeleton, constants: is_consistent(skeleton.tokens, self.features, self.target, constants)
        )
        if len(consistent) == len(rows):
            return rows
        if (
            not np.nanmin(np.asarray(consistent.losses, dtype=np.float64), initial=np.inf)
            <= (1 - min_r2) * problem.scale
        ):
            warnings.warn(
                f"No dimensionally consistent candidate explains {min_r2:.0%} of y's variance (in the units "
                f"X_units={list(self.X_units)}, y_units={self.y_units!r}); the selection considers every "
                "candidate. Check the units, or whether y depends on a quantity that is not a column of X.",
                UserWarning,
                stacklevel=5,
            )
            return rows
        return consistent


def fitted_attributes(units: Units | None, symbols) -> tuple[list[str] | None, str | None, list[str] | None]:
    """``X_units_``, ``y_units_`` and ``pi_groups_`` (written with the features'
    ``symbols``); ``None`` each without ``units``."""
    if units is None:
        return None, None, None
    return list(units.X_units), units.y_units, units.groups.describe(symbols)


@dataclass(frozen=True)
class Dimensionless:
    """The network's ``problem``: the ``groups`` divided by ``scales`` and ``y`` divided
    by the monomial and by ``target_scale``; ``factor`` is their product on the points,
    which turns the network's predictions into predictions of ``y``."""

    problem: Problem
    groups: PiGroups
    scales: np.ndarray
    target_scale: float
    factor: np.ndarray

    def symbols(self, feature_symbols) -> list[sympy.Symbol]:
        """One symbol per group, named as the group is written with ``feature_symbols``."""
        return [sympy.Symbol(name) for name in self.groups.describe(feature_symbols)]

    def columns(self, groups: np.ndarray) -> np.ndarray:
        """The features that take part in the ``groups`` (indices)."""
        return np.flatnonzero(np.any(self.groups.exponents[groups] != 0, axis=0))

    def back(self, skeleton: Skeleton, constants: np.ndarray, whole: Problem) -> Fitted:
        """A candidate over the groups as one over the features of ``whole`` (the
        problem this one was made from): ``c * m(x) * skeleton(pi(x))``, with its mean
        squared error there (from the candidate's values on the groups: its program,
        compiled to fit it, is not compiled again)."""
        monomial = _power_tokens(self.groups.monomial)
        inner, values = skeleton.substituted(constants, self._group_tokens)
        tokens = ["mul", CONSTANT, *(["mul", *monomial] if monomial else []), *inner.tokens]
        predictions = self.factor * skeleton.program(self.problem.X, constants)
        with np.errstate(all="ignore"):
            loss = float(np.average((whole.y - predictions) ** 2, weights=whole.weights))
        return Skeleton(tuple(tokens)), np.append(self.target_scale, values), loss if np.isfinite(loss) else np.inf

    def _group_tokens(self, k: int) -> tuple[list[str], list[float]]:
        """Tokens of the network's ``x_{k+1}`` (group ``k`` over its scale) over the
        features, and the constant they hold."""
        powers = _power_tokens(self.groups.exponents[k])
        if self.scales[k] == 1:
            return powers, []
        return ["mul", CONSTANT, *powers], [1 / float(self.scales[k])]

    def back_rows(self, rows: CandidateRows, whole: Problem) -> CandidateRows:
        """Every row of ``rows`` (over the groups) over the features of ``whole``."""
        found = CandidateRows()
        for skeleton, constants, log_prob, origin, fixed in zip(
            rows.skeletons, rows.constants, rows.log_probs, rows.origins, rows.fixed_work
        ):
            found.add(*self.back(skeleton, constants, whole), log_prob, origin, fixed)
        return found


def _power_tokens(exponents) -> list[str]:
    """Tokens of the product of each feature to its (rational) exponent; none when all are 0."""
    factors = []
    for j, exponent in enumerate(exponents):
        b, x = Fraction(exponent), variable_token(j)
        if b == 1:
            factors.append([x])
        elif b.denominator == 1 and b != 0:
            factors.append(["pow", x, str(b.numerator)])
        elif b != 0:
            factors.append(["pow", x, "div", str(b.numerator), str(b.denominator)])
    tokens: list[str] = []
    for factor in factors[:-1]:
        tokens += ["mul", *factor]
    return tokens + factors[-1] if factors else []
