"""The units stage of ``fit``: the problem in dimensionless groups, and its candidates
back over the features.

Given the units of the features and of ``y`` (:mod:`.parsing`), ``y = m(x) *
f(pi_1, ..., pi_k)`` (:mod:`.groups`). The network's problem is the groups, each
divided by the power of ten that keeps it in the network's range, and ``y / m(x)``,
divided by another; dimensional constants that the law needs
(:mod:`.constants`: declared, or found when the features alone cannot close the units)
take part in the groups and the monomial as features of fixed value, and come back
folded into the candidates' constants; the routing of many variables (:mod:`..search.variables.routing`)
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
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import sympy

from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT, variable_token
from ..search.budget import Deadline
from ..search.fitted import CandidateRows, Fitted, mse
from ..search.identities import identity_with_angles
from ..search.problem import Problem
from ..search.scaling import FEATURE_BAND, TARGET_BAND, power_of_ten
from ..search.settings import SearchSettings
from ..search.views import Identity, View, back_rows
from ..shared_setting import one_blas_thread
from .consistency import TOLERANCE, InconsistentError, is_consistent, sympy_dimension
from .constants import (
    DimensionalConstant,
    as_known_constants,
    best_explained,
    closing_constants,
    declared_constants,
    depends,
    depends_beyond,
    joining_constants,
    takes_part,
    unexplained,
)
from .groups import PiGroups, dimension_matrix, pi_groups, written
from .parsing import MAX_DENOMINATOR, parse_units, units_by_column


@dataclass(frozen=True)
class Units:
    """The units of the features (``X_units``) and of ``y`` (``y_units``) as given,
    their exponents over the ``bases`` (rows of ``features``: one per feature;
    ``target``: y's), the dimensional ``constants`` of the law, and the groups and
    monomial of the problem, over the features and then the constants (the first
    ``n_declared`` of them declared by the user, the rest found to close the units)."""

    X_units: tuple[str, ...]
    y_units: str
    bases: tuple[str, ...]
    features: np.ndarray
    target: np.ndarray
    groups: PiGroups
    constants: tuple[DimensionalConstant, ...] = ()
    n_declared: int = 0

    @classmethod
    def parse(
        cls,
        X_units,
        y_units,
        n_features: int,
        constants=None,
        feature_names=(),
        X=None,
        y=None,
        settings: SearchSettings | None = None,
    ) -> Units | None:
        """The units of a problem with ``n_features`` features, with the ``constants`` a
        user declares (:func:`.declared_constants`) and the known ones that close the
        rest (:func:`.closing_constants`: ``y``'s units, and the features that the data
        ``X``, ``y`` say ``y`` depends on); ``None`` when no units are given, or, with a
        warning, when no constant closes ``y``'s. Raises a ``ValueError`` that names
        the problem with bad units; ``X_units`` may map ``feature_names`` to units. The
        ``settings`` (default :class:`.SearchSettings`) give the knobs of the tests on
        the data (``units_min_dependence``, ``units_dependence_sigmas``,
        ``units_typical_share``, ``units_joined_score_rise``)."""
        settings = SearchSettings() if settings is None else settings
        X_units = units_by_column(X_units, feature_names)
        parsed = parse_units(X_units, y_units, n_features)
        if parsed is None:
            if constants:
                raise ValueError(
                    "constants are given without units: a dimensional constant enters the law through its units. "
                    "Pass X_units and y_units too, or leave constants out."
                )
            return None
        features, target = parsed
        declared = declared_constants(constants, [str(name) for name in feature_names])
        columns = [*features, *(constant.dimensions for constant in declared)]
        taken = {*map(str, feature_names), *(constant.symbol for constant in declared)}
        needed = _needed(columns, target, n_features, X, y, settings)
        candidates = []  # (constants found, the groups and monomial with them)
        for found in closing_constants(columns, target, needed, taken):
            groups = _groups(columns, found, target, n_features, len(declared))
            if groups is not None:
                candidates.append((tuple(found), groups))
        if not candidates:
            warnings.warn(
                f"No product of powers of the features, the declared constants and up to three known physical "
                f"constants has the units of y ({written(target)}; the features: "
                f"{', '.join(written(f) for f in features)}) with exponents of small fractions, so the fit goes on "
                "without units. Check X_units and y_units, or declare the missing constant with its units: "
                "constants={'k': 'J/K'}.",
                UserWarning,
                stacklevel=6,
            )
            return None
        if candidates == [((), candidates[0][1])] and X is not None:  # the features close the units alone
            found, groups = _joined(candidates[0], columns, target, n_features, declared, taken, X, y, settings)
        else:
            found, groups = (
                candidates[0]
                if len(candidates) == 1 or X is None
                else _best(candidates, declared, X, y, settings.units_neighbours)
            )
        law_constants = (*declared, *found)
        columns = [*columns, *(constant.dimensions for constant in found)]
        bases, rows = dimension_matrix(columns, target)
        matrix = np.array([[float(v) for v in row] for row in rows]).reshape(len(bases), len(columns) + 1)
        return cls(
            tuple(X_units),
            y_units,
            tuple(bases),
            matrix[:, :n_features].T.copy(),
            matrix[:, len(columns)].copy(),
            groups,
            law_constants,
            len(declared),
        )

    @property
    def n_features(self) -> int:
        return len(self.X_units)

    def values(self, X: np.ndarray) -> np.ndarray:
        """``X`` with a column of each constant's value after the features."""
        values = np.array([constant.value for constant in self.constants], dtype=np.float64)
        return np.hstack([X, np.broadcast_to(values, (len(X), len(values)))]) if len(values) else X

    def symbols(self, feature_symbols) -> list[sympy.Symbol]:
        """The symbols of the features, then of the constants."""
        return [*feature_symbols, *(sympy.Symbol(constant.symbol, positive=True) for constant in self.constants)]

    def named(self) -> tuple[tuple[sympy.Symbol, float], ...]:
        """The constants of known value as ``(symbol, value)``, for the law's writer."""
        return tuple(
            (sympy.Symbol(constant.symbol, positive=True), constant.value)
            for constant in self.constants
            if not constant.free
        )

    def dimensionless(self, problem: Problem) -> Dimensionless | Identity:
        """The view of ``problem`` over the features in the groups (:class:`Dimensionless`);
        without groups, the features as they are (:class:`.views.Identity`)."""
        if not self.groups.n_groups:
            return Identity()
        columns = self.values(problem.X)
        Z = self.groups.groups(columns)
        scales = np.array([power_of_ten(Z[:, k], FEATURE_BAND) for k in range(Z.shape[1])])
        monomial = self.groups.monomial_values(columns)
        target = problem.y / monomial
        target_scale = power_of_ten(target, TARGET_BAND)
        seen = Problem(Z / scales, target / target_scale, problem.weights)
        return Dimensionless(seen, self.groups, scales, target_scale, target_scale * monomial, self)

    def rows(self, found: CandidateRows, whole: Problem, groups: View) -> CandidateRows:
        """The network's rows over the features of ``whole`` (``found`` on the problem
        of the view ``groups``: :meth:`dimensionless`), with ``c * m(x)``."""
        rows = back_rows(groups, found, whole)
        monomial = _power_tokens(self.groups.monomial[: self.n_features])
        skeleton = Skeleton(("mul", CONSTANT, *monomial) if monomial else (CONSTANT,))
        m = PiGroups(self.groups.exponents, self.groups.monomial[: self.n_features]).monomial_values(whole.X)
        weights = np.ones_like(m) if whole.weights is None else whole.weights
        with np.errstate(all="ignore"):
            c = np.sum(weights * whole.y * m) / np.sum(weights * m * m)
        constants = np.array([c if np.isfinite(c) else 1.0])
        loss = mse(skeleton.program, whole.X, whole.y, constants, whole.weights)
        rows.add(Fitted(skeleton, constants, loss), origin="units")
        return rows

    def keep(self, problem: Problem, min_r2: float, writer=None):
        """The selection's filter of the rows of ``problem`` (:meth:`consistent`)."""
        return lambda rows: self.consistent(rows, problem, min_r2, writer)

    def consistent(self, rows: CandidateRows, problem: Problem, min_r2: float, writer=None) -> CandidateRows:
        """The rows that are dimensionally consistent with the units, when the best of
        them explains at least ``min_r2`` of the variance of ``problem.y``; else all
        rows, with a warning (when some are inconsistent). Without constants of the
        law, an exact row is consistent too where its numbers, written over the raw
        features by ``writer`` (a :class:`..writing.writer.Writer`), are known physical
        constants that give it y's units (:meth:`carries_known_constants`)."""
        free = bool(self.constants)

        def holds(skeleton: Skeleton, constants: np.ndarray, loss: float) -> bool:
            if is_consistent(skeleton.tokens, self.features, self.target, constants, free):
                return True
            if free or writer is None or not problem.is_exact(loss):
                return False
            return self.carries_known_constants(writer.raw(skeleton, constants), writer.symbols)

        consistent = rows.where(holds)
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

    def carries_known_constants(self, expression: sympy.Expr, symbols) -> bool:
        """Whether ``expression`` over the features' ``symbols`` has y's units once each
        number that is a known physical constant's power (:func:`.constants.as_known_constants`,
        ``1.11265e-17`` is ``1/c**2``) carries that power's units."""
        written, known = as_known_constants(expression, self.bases)
        if not known:
            return False
        dimensions = np.vstack([self.features, *known.values()])
        try:
            found = sympy_dimension(written, [*symbols, *known], dimensions)
        except InconsistentError:
            return False
        return not np.any(np.abs(found - self.target) >= TOLERANCE)

    def checked(self, law: sympy.Expr, symbols) -> Units:
        """These units, when the selected ``law`` over the features' ``symbols`` has
        ``y``'s units (its numbers dimensionless, or powers of the law's constants, or
        known constants' powers: :meth:`carries_known_constants`), or may have them (a
        float among its numbers may be a product of constants that the units stage did
        not look for, ``-5.24e-83`` a power of ``G`` times one of ``c``; a law that is a
        number, ``0`` among them, has any units); else a
        warning that names the units of ``y`` and of the law, and these units without the
        constants found to close them (the law does not carry them)."""
        dimensions = self._law_dimensions(law, symbols)
        if dimensions is None or law.atoms(sympy.Float) or law.is_number:  # a number has any units
            return self
        rest = self.target - dimensions
        if not np.any(np.abs(rest) >= TOLERANCE) or self.carries_known_constants(law, symbols):
            return self
        if self.constants:  # a number of the law may carry a product of powers of the constants
            spans = np.array([[float(c.dimensions.get(b, 0)) for b in self.bases] for c in self.constants]).T
            powers = np.linalg.lstsq(spans, rest, rcond=None)[0]
            if not np.any(np.abs(spans @ powers - rest) >= TOLERANCE):
                return self
        found = [c.symbol for c in self.constants[self.n_declared :]]
        warnings.warn(
            f"The units do not match the law: y_units={self.y_units!r} is {self._written(self.target)}, but the "
            f"selected law {law} has {self._written(dimensions)} in X_units={list(self.X_units)}"
            + (f" (and the constants {found} found to close y's units cannot make up the difference)" if found else "")
            + ". Check y_units and X_units, or whether y depends on a quantity that is not a column of X"
            + ("; physical_constants_ leaves the found constants out." if found else "."),
            UserWarning,
            stacklevel=5,
        )
        return replace(self, constants=self.constants[: self.n_declared])

    def _law_dimensions(self, law: sympy.Expr, symbols) -> np.ndarray | None:
        """The dimensions of ``law`` with its numbers dimensionless; ``None`` when it is
        inconsistent as written (then the selection's consistency filter has spoken)."""
        constant_rows = [[float(c.dimensions.get(b, 0)) for b in self.bases] for c in self.constants]
        rows = np.vstack([self.features, *constant_rows]) if constant_rows else self.features
        try:
            return sympy_dimension(law, self.symbols(symbols), rows)
        except InconsistentError:
            return None

    def _written(self, dimensions: np.ndarray) -> str:
        return written(
            {b: Fraction(float(v)).limit_denominator(MAX_DENOMINATOR) for b, v in zip(self.bases, dimensions)}
        )


def fitted_attributes(units: Units | None, symbols) -> tuple[list[str] | None, str | None, list[str] | None, dict]:
    """``X_units_``, ``y_units_`` and ``pi_groups_`` (written with the features'
    ``symbols``), ``None`` each without ``units``; and ``physical_constants_``: each
    constant's symbol -> its value in SI base units and what it is (``{}`` without)."""
    if units is None:
        return None, None, None, {}
    constants = {
        constant.symbol: {"value": None if constant.free else constant.value, "source": constant.source}
        for constant in units.constants
    }
    return list(units.X_units), units.y_units, units.groups.describe(units.symbols(symbols)), constants


def _needed(columns, target, n_features: int, X, y, settings: SearchSettings) -> np.ndarray:
    """Which features must take part in the law: none without data; those that take no
    part in the groups of ``columns`` but that ``y`` depends on beyond a power law of
    the features that do (``log|y|`` less its least-squares fit in their logs)."""
    needed = np.zeros(len(columns), dtype=bool)
    if X is None or y is None:
        return needed
    part = takes_part(columns, target)[:n_features]
    with np.errstate(all="ignore"):
        logs = np.log(np.abs(np.column_stack([y, X[:, part]])))
    usable = np.all(np.isfinite(logs), axis=1)
    if usable.sum() < 3:
        return needed
    design = np.column_stack([np.ones(usable.sum()), logs[usable, 1:]])
    rest = logs[usable, 0] - design @ np.linalg.lstsq(design, logs[usable, 0], rcond=None)[0]
    for j in np.flatnonzero(~part):
        needed[j] = depends(rest, X[usable, j], settings.units_min_dependence, settings.units_dependence_sigmas)
    return needed


def _groups(columns, found, target, n_features: int, n_declared: int) -> PiGroups | None:
    """The groups and monomial over the features, the declared constants and those
    ``found``, without groups of constants alone; ``None`` where their exponents are
    no small fractions."""
    try:
        groups = pi_groups([*columns, *(c.dimensions for c in found)], target, n_declared + len(found))
    except ValueError:
        return None
    return _with_features(groups, n_features)


def _joined(alone: tuple, columns, target, n_features: int, declared, taken, X, y, settings: SearchSettings) -> tuple:
    """``alone`` (no constant and the groups of the features), or the first known
    constant that joins a group with them, with its groups, when what the features'
    groups leave unexplained of ``y`` depends on its groups (:func:`.depends_beyond`:
    ``(u + v)/(1 + u*v/c**2)`` is no function of ``v/u`` alone) and its groups leave at
    most ``settings.units_joined_score_rise`` times the share unexplained (:func:`.unexplained`)."""
    explained = _explainer(declared, X)
    monomial, groups = explained(alone)
    for constant in joining_constants(columns, target, taken):
        joined = _groups(columns, [constant], target, n_features, len(declared))
        if joined is None:
            continue
        _, others = explained(((constant,), joined))
        if depends_beyond(y, monomial, groups, others, settings):
            scores = unexplained([alone, ((constant,), joined)], y, explained, True, settings.units_neighbours)
            if scores[1] <= settings.units_joined_score_rise * scores[0]:
                return (constant,), joined
    return alone


def _explainer(declared, X):
    """``(m, Z)`` of a candidate ``(constants found, groups)`` on the points of ``X``."""

    def explained(candidate):
        found, groups = candidate
        values = _padded(X, X.shape[1] + len(declared))
        values = np.hstack([values, np.broadcast_to([c.value for c in found], (len(X), len(found)))])
        return groups.monomial_values(values), groups.groups(values)

    return explained


def _best(candidates: list, declared, X, y, neighbours: int) -> tuple:
    """Which of ``candidates`` (constants and their groups) the data ``X``, ``y`` support
    (:func:`.best_explained`, by ``neighbours``)."""
    return candidates[best_explained(candidates, y, _explainer(declared, X), neighbours)]


def _padded(X: np.ndarray, n_columns: int) -> np.ndarray:
    """``X`` with columns of ones for the declared constants after the features (their
    values do not change which features ``y`` depends on)."""
    return np.hstack([X, np.ones((len(X), n_columns - X.shape[1]))])


def _with_features(groups: PiGroups, n_features: int) -> PiGroups:
    """``groups`` without those of the constants alone (a constant, not a variable)."""
    kept = np.any(groups.exponents[:, :n_features] != 0, axis=1)
    return groups if kept.all() else PiGroups(groups.exponents[kept], groups.monomial)


@dataclass(frozen=True)
class Dimensionless:
    """A problem over the features seen in its groups (a :class:`.views.View`): the
    network's ``problem`` is the ``groups`` divided by ``scales`` and ``y`` divided by
    the monomial and by ``target_scale``; ``factor`` is their product on the points,
    which turns the network's predictions into predictions of ``y``; ``units``: the
    features' and the constants'."""

    problem: Problem
    groups: PiGroups
    scales: np.ndarray
    target_scale: float
    factor: np.ndarray
    units: Units

    def symbols(self, symbols) -> list[sympy.Symbol]:
        """One symbol per group, named as the group is written with the features' ``symbols``."""
        return [sympy.Symbol(name) for name in self.groups.describe(self.units.symbols(symbols))]

    def forward(self, whole: Problem) -> Problem:
        """The groups' problem of ``whole`` (the problem this one was made from)."""
        return self.problem

    def back_values(self, values: np.ndarray, whole: Problem) -> np.ndarray:
        """Predictions over the groups as predictions of ``whole.y`` (times :attr:`factor`)."""
        return self.factor * values

    def back_columns(self, columns: np.ndarray) -> np.ndarray:
        """The features that take part in the groups ``columns`` (indices)."""
        return np.flatnonzero(np.any(self.groups.exponents[columns][:, : self.units.n_features] != 0, axis=0))

    def back(self, fitted: Fitted, whole: Problem) -> Fitted:
        """A candidate ``fitted`` over the groups as one over the features of ``whole``
        (the problem this one was made from): ``c * m(x) * skeleton(pi(x))``, with its
        mean squared error there (from the candidate's values on the groups: its program,
        compiled to fit it, is not compiled again)."""
        skeleton, constants = fitted.skeleton, fitted.constants
        monomial = _power_tokens(self.groups.monomial[: self.units.n_features])
        inner, values = skeleton.substituted(constants, self._group_tokens)
        tokens = ["mul", CONSTANT, *(["mul", *monomial] if monomial else []), *inner.tokens]
        predictions = self.back_values(skeleton.program(self.problem.X, constants), whole)
        with np.errstate(all="ignore"):
            loss = float(np.average((whole.y - predictions) ** 2, weights=whole.weights))
        scale = self.target_scale * self._constants_part(self.groups.monomial)
        return Fitted(Skeleton(tuple(tokens)), np.append(scale, values), loss if np.isfinite(loss) else np.inf)

    def _group_tokens(self, k: int) -> tuple[list[str], list[float]]:
        """Tokens of the network's ``x_{k+1}`` (group ``k`` over its scale) over the
        features, and the constant they hold (the scale, and the dimensional constants)."""
        exponents = self.groups.exponents[k]
        powers = _power_tokens(exponents[: self.units.n_features])
        factor = self._constants_part(exponents) / float(self.scales[k])
        if factor == 1:
            return powers, []
        return ["mul", CONSTANT, *powers], [factor]

    def _constants_part(self, exponents) -> float:
        """The product of the dimensional constants' values to their ``exponents`` (those after the features')."""
        powers = [float(b) for b in exponents[self.units.n_features :]]
        return float(np.prod([c.value**b for c, b in zip(self.units.constants, powers)]))

    def identity_rows(
        self, whole: Problem, deadline: Deadline | None = None, x_scales=None, settings: SearchSettings | None = None
    ) -> CandidateRows:
        """The law of an exact identity of ``y / m(x)`` over the groups, or else over the
        groups with those that take the values of angles read by their cosine and sine
        (:func:`.identities.identity_with_angles`: ``q*(E + B*v*sin(t))`` is ``1 + g*sin(t)``
        over ``g = B*v/E`` and ``t``), those within one turn first and then within
        ``settings.identity_wide_turns`` (default :class:`.SearchSettings`), as a row of
        ``whole`` (the problem this one was made from) of origin ``"identity"``; no row
        where none holds. ``x_scales``: what the features of ``whole`` were divided by
        (:class:`.scaling.Scaling`), so that an angle is read in radians."""
        n_features = self.units.n_features
        features = np.ones(n_features) if x_scales is None else np.asarray(x_scales, dtype=np.float64)
        radians = self.scales * np.prod(features ** self.groups.exponents[:, :n_features], axis=1)
        rows = CandidateRows()
        with one_blas_thread():
            found = identity_with_angles(self.problem, radians, deadline, settings)
        if found is not None:
            rows.add(self.back(found.fitted, whole), origin="identity")
        return rows


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
