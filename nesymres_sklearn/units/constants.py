"""Dimensional constants that close the units of a law: ``c``, ``hbar``, ``k_B``, ...

Real laws carry constants with units (``m0/sqrt(1 - v**2/c**2)``, ``exp(hbar*w/(k_B*T))``).
Without them, ``y``'s units may be no product of powers of the features, or a feature
may take part in no dimensionless group (``v`` above, whose length per time nothing else
carries) and so in no law. A constant enters the dimensional analysis as a column of
fixed value: a *known* one (pint's ``speed_of_light``, ``hbar``, ...) with its value in SI
base units and its symbol (``c``), or a *free* one (its units given, its value fitted),
as the free constants with units of PhySO.

:func:`declared_constants` reads the constants a user declares
(``constants={"c": "speed_of_light", "k": "J/K"}``); :func:`closing_constants` finds the
fewest known constants of :data:`KNOWN_CONSTANTS` that let ``y`` and every feature that
``y`` depends on take part in the law (:func:`takes_part`, :func:`depends`). A feature
that ``y`` does not depend on may stay out: the mass of a pendulum takes part in no
group, and no constant should bring it in.
"""

from __future__ import annotations

import importlib.resources
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
from scipy.spatial import cKDTree
from scipy.stats import rankdata

from ..search.settings import SearchSettings
from .groups import dimension_matrix
from .parsing import MAX_DENOMINATOR, Dimensions, parse_unit, unit_registry

#: Known constants tried when the features do not close the units, in the order tried:
#: symbol -> pint's name. Dimensionless ones (``alpha``) close nothing and are left out;
#: ``h`` is ``hbar`` times ``2*pi``, which the fitted constants carry.
KNOWN_CONSTANTS = {
    "c": "speed_of_light",
    "hbar": "hbar",
    "k_B": "boltzmann_constant",
    "epsilon_0": "vacuum_permittivity",
    "G": "gravitational_constant",
    "q_e": "elementary_charge",
    "m_e": "electron_mass",
    "g": "standard_gravity",
}
#: Most known constants that one law is given.
MAX_CONSTANTS = 3


@dataclass(frozen=True)
class DimensionalConstant:
    """A constant of the law: its ``symbol`` (as written in the law), its ``value`` in
    SI base units (1 for a ``free`` constant, whose value the fit finds), its
    ``dimensions`` and its ``source`` (pint's name, or the units given for a free one)."""

    symbol: str
    value: float
    dimensions: Dimensions
    source: str
    free: bool = False

    @classmethod
    def known(cls, symbol: str, name: str) -> DimensionalConstant:
        """The physical constant pint calls ``name`` (``"speed_of_light"``), written ``symbol``."""
        quantity = unit_registry().Quantity(1.0, name).to_base_units()
        dimensions = {
            str(base): Fraction(exponent).limit_denominator(MAX_DENOMINATOR)
            for base, exponent in quantity.dimensionality.items()
        }
        return cls(symbol, float(quantity.magnitude), dimensions, name)


@cache
def known_library() -> tuple[DimensionalConstant, ...]:
    """:data:`KNOWN_CONSTANTS` as constants, read from pint once per process."""
    return tuple(DimensionalConstant.known(symbol, name) for symbol, name in KNOWN_CONSTANTS.items())


def declared_constants(constants: Mapping[str, str] | None, feature_names: Sequence[str]) -> list[DimensionalConstant]:
    """The constants a user declares: symbol -> a physical constant that pint knows
    (``"speed_of_light"``, ``"hbar"``: its value is used) or the units of a constant to
    fit (``"J/K"``). Raises a ``ValueError`` that names a bad entry."""
    if constants is None:
        return []
    if not isinstance(constants, Mapping):
        raise TypeError(
            f"constants must be a dict of symbol -> physical constant or units, such as "
            f"{{'c': 'speed_of_light', 'k': 'J/K'}}, got {type(constants).__name__} {constants!r}."
        )
    found = []
    for symbol, text in constants.items():
        if not (isinstance(symbol, str) and symbol.isidentifier()):
            raise ValueError(f"constants: {symbol!r} is not a name for a constant; use an identifier such as 'c'.")
        if symbol in feature_names:
            raise ValueError(f"constants: {symbol!r} is also a feature's name; give the constant another symbol.")
        if _is_physical_constant(text):
            found.append(DimensionalConstant.known(symbol, text))
        else:
            dimensions = parse_unit(text, f"constants[{symbol!r}]")
            found.append(DimensionalConstant(symbol, 1.0, dimensions, text, free=True))
    return found


def _is_physical_constant(text) -> bool:
    """Whether ``text`` names one of pint's physical constants (not a unit such as ``J/K``)."""
    return isinstance(text, str) and text in _constant_names()


@cache
def _constant_names() -> frozenset[str]:
    """The names and aliases that pint's file of physical constants defines."""
    source = importlib.resources.files("pint").joinpath("constants_en.txt").read_text(encoding="utf-8")
    names = set()
    for line in source.splitlines():
        definition = line.split("#", 1)[0]
        parts = [part.strip() for part in definition.split(" = ")]
        if len(parts) >= 2 and parts[0].isidentifier():
            names.update(name for name in (parts[0], *parts[2:]) if name.isidentifier() and name != "_")
    return frozenset(names)


def takes_part(features: Sequence[Dimensions], target: Dimensions) -> np.ndarray:
    """Whether each feature, then ``y`` (the last entry), can take part in a law that is a
    product of powers of the features times a function of dimensionless groups: whether
    its column of the dimension matrix lies in the span of the others."""
    _, rows = dimension_matrix(features, target)
    n = len(features) + 1
    matrix = np.array([[float(v) for v in row] for row in rows]).reshape(len(rows), n)
    rank = _rank(matrix)
    return np.array([_rank(np.delete(matrix, j, axis=1)) == rank for j in range(n)])


def depends(
    y: np.ndarray,
    column: np.ndarray,
    minimum: float = SearchSettings.units_min_dependence,
    sigmas: float = SearchSettings.units_dependence_sigmas,
) -> bool:
    """Whether ``y`` depends on ``column``: their rank correlation, or that with the
    column's magnitude (for laws even in it), is at least ``minimum`` and ``sigmas``
    standard errors (:attr:`.SearchSettings.units_min_dependence`,
    :attr:`.SearchSettings.units_dependence_sigmas`)."""
    if np.ptp(y) == 0 or np.ptp(column) == 0:
        return False
    threshold = max(minimum, sigmas / np.sqrt(len(y)))
    ranks = rankdata(y)
    for values in (column, np.abs(column)):
        if np.ptp(values) > 0 and abs(np.corrcoef(ranks, rankdata(values))[0, 1]) >= threshold:
            return True
    return False


def closing_constants(
    features: Sequence[Dimensions], target: Dimensions, needed: np.ndarray, taken: Sequence[str] = ()
) -> list[list[DimensionalConstant]]:
    """The fewest known constants (up to :data:`MAX_CONSTANTS`; none with a symbol in
    ``taken``) with which ``y`` and every ``needed`` feature (a mask) take part, else
    the fewest with which ``y`` does: every such set, in :data:`KNOWN_CONSTANTS`' order
    (``c`` and ``G`` both close ``m*c**2/r`` and ``G*m**2/r``; the data choose,
    :func:`best_explained`). ``[[]]`` when the features need none, ``[]`` when no set
    lets ``y`` take part."""
    needed = np.asarray(needed, dtype=bool)
    part = takes_part(features, target)
    if part[-1] and part[:-1][needed].all():
        return [[]]
    library = [constant for constant in known_library() if constant.symbol not in taken]
    closing_target: list[list[DimensionalConstant]] = [[]] if part[-1] else []
    for size in range(1, MAX_CONSTANTS + 1):
        closing_all = []
        for chosen in itertools.combinations(library, size):
            part = takes_part([*features, *(constant.dimensions for constant in chosen)], target)
            if part[-1] and part[: len(features)][needed].all():
                closing_all.append(list(chosen))
            elif not closing_target and part[-1]:
                closing_target.append(list(chosen))
        if closing_all:
            return closing_all
    return closing_target


def best_explained(
    candidates: list, y: np.ndarray, explained, neighbours: int = SearchSettings.units_neighbours
) -> int:
    """The index of the candidate whose ``explained(candidate)`` -- ``(m, Z)``, the
    monomial with ``y``'s units and the groups on the points -- leaves the least of
    ``log|y/m|`` unexplained by its nearest neighbours in the groups' logs (the law
    ``y = m * f(Z)`` holds for the right constants, and not for the others); the mean of
    ``neighbours`` predicts a point (:attr:`.SearchSettings.units_neighbours`)."""
    return int(np.argmin(unexplained(candidates, y, explained, neighbours=neighbours)))


def unexplained(
    candidates: list,
    y: np.ndarray,
    explained,
    relative: bool = False,
    neighbours: int = SearchSettings.units_neighbours,
) -> np.ndarray:
    """For each candidate, what its groups leave unexplained of ``log|y/m|`` (see
    :func:`best_explained`): the mean squared difference from its nearest neighbours',
    ``relative`` to the variance of ``log|y/m|`` (for candidates of different monomials)."""
    scores = []
    for candidate in candidates:
        monomial, groups = explained(candidate)
        with np.errstate(all="ignore"):
            rest = np.log(np.abs(y / monomial))
            logs = np.log(np.abs(groups))
        usable = np.isfinite(rest) & np.all(np.isfinite(logs), axis=1)
        signs = np.sign(groups[usable])
        if usable.sum() <= neighbours:
            scores.append(np.inf)
            continue
        score = _unexplained(rest[usable], logs[usable], signs, neighbours)
        scores.append(score / max(float(np.var(rest[usable])), np.finfo(float).tiny) if relative else score)
    return np.array(scores)


def joining_constants(features: Sequence[Dimensions], target: Dimensions, taken: Sequence[str] = ()) -> list:
    """The known constants (none with a symbol in ``taken``) that, alone, would join a
    group with the features: ``c`` beside two speeds (``(u + v)/(1 + u*v/c**2)``), where
    the features close the units without it."""
    joining = []
    for constant in known_library():
        if constant.symbol in taken:
            continue
        part = takes_part([*features, constant.dimensions], target)
        if part[-2] and part[-1]:
            joining.append(constant)
    return joining


#: The distance between points of groups of opposite signs (in standard deviations): no
#: point's neighbours have other signs.
SIGN_WEIGHT = 100.0
#: Points below which :func:`depends_beyond` says no.
MIN_BEYOND_POINTS = 100


#: A column whose log the groups' logs leave less than this share of is their product
#: (the rest is rounding, whose ranks mean nothing).
OWN_GROUPS = 1e-9


def _unexplained(rest: np.ndarray, logs: np.ndarray, signs: np.ndarray, neighbours: int) -> float:
    """Mean squared difference of ``rest`` from the mean of its ``neighbours`` nearest in
    ``logs`` (standardised; the point itself left out) of the same ``signs``; its
    variance without groups."""
    return float(np.mean(_residuals(rest, logs, signs, neighbours) ** 2))


def _residuals(rest: np.ndarray, logs: np.ndarray, signs: np.ndarray, neighbours: int) -> np.ndarray:
    """``rest`` less the mean of its nearest neighbours (see :func:`_unexplained`)."""
    if logs.shape[1] == 0:
        return rest - rest.mean()
    spread = logs.std(axis=0)
    points = (logs - logs.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    points = np.hstack([points, SIGN_WEIGHT * signs])  # neighbours share the groups' signs
    _, nearest = cKDTree(points).query(points, k=neighbours + 1)
    return rest - rest[nearest[:, 1:]].mean(axis=1)


def depends_beyond(
    y: np.ndarray, monomial: np.ndarray, groups: np.ndarray, others: np.ndarray, settings: SearchSettings | None = None
) -> bool:
    """Whether ``log|y/m|``, less what its nearest neighbours in the ``groups`` explain,
    still depends (:func:`depends`) on one of the ``others`` (columns on the same points),
    or on a product of two of them (their ratios are the features' groups):
    ``(u + v)/(1 + u*v/c**2)`` over ``u`` is no function of ``v/u`` alone, and what
    ``v/u`` leaves follows ``u*v/c**2``. Only the ``settings``' ``units_typical_share``
    of the smallest residuals is read: the largest lie where the law crosses zero
    between neighbours, and hide a dependence (``settings``: default :class:`.SearchSettings`)."""
    settings = SearchSettings() if settings is None else settings
    with np.errstate(all="ignore"):
        rest = np.log(np.abs(y / monomial))
        logs = np.log(np.abs(groups))
    usable = np.isfinite(rest) & np.all(np.isfinite(logs), axis=1) & np.all(np.isfinite(others), axis=1)
    if usable.sum() < MIN_BEYOND_POINTS:  # neighbours too far apart to tell a law from its groups' sampling
        return False
    residuals = _residuals(rest[usable], logs[usable], np.sign(groups[usable]), settings.units_neighbours)
    typical = np.abs(residuals) <= np.quantile(np.abs(residuals), settings.units_typical_share)
    columns = others[usable][typical]
    pairs = [columns[:, i] * columns[:, j] for i, j in itertools.combinations(range(columns.shape[1]), 2)]
    own = logs[usable][typical]
    minimum, sigmas = settings.units_min_dependence, settings.units_dependence_sigmas
    return any(depends(residuals[typical], _beyond(column, own), minimum, sigmas) for column in [*columns.T, *pairs])


def _beyond(column: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """``column`` divided by its least-squares power law in the groups whose logs are
    ``logs`` (its sign kept): what of it the features' groups do not carry. What their
    neighbours leave of ``y`` can follow the groups themselves where the neighbours fail
    to follow ``f`` (``cos(x1*x2)`` over many periods); then a constant's groups that
    recombine them (``(x0*x1/c)*(c*x2/x0)`` is ``x1*x2``) explain nothing new."""
    with np.errstate(all="ignore"):
        target = np.log(np.abs(column))
    if logs.shape[1] == 0 or not np.all(np.isfinite(target)):
        return column
    design = np.column_stack([np.ones(len(target)), logs])
    rest = target - design @ np.linalg.lstsq(design, target, rcond=None)[0]
    if np.ptp(rest) <= OWN_GROUPS * max(float(np.ptp(target)), 1.0):  # the groups' own product: its sign is all
        return np.sign(column)
    return np.sign(column) * np.exp(rest)


def _rank(matrix: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(matrix)) if matrix.size else 0


def as_known_constants(expression, bases: Sequence[str]):
    """``expression`` with each float that is a simple number times a power of one of
    :data:`KNOWN_CONSTANTS` written so (:func:`.readable.named_constants`, one constant
    at a time), over a new symbol per constant, and those symbols -> their dimensions
    over ``bases`` (constants with other base dimensions are not tried)."""
    import sympy

    from ..writing.readable import named_constants

    known = {}
    for constant in known_library():
        if not set(constant.dimensions) <= set(bases):
            continue
        symbol = sympy.Dummy(constant.symbol, positive=True)
        expression = named_constants(expression, {symbol: constant.value})
        if expression.has(symbol):
            known[symbol] = np.array([float(constant.dimensions.get(base, 0)) for base in bases])
    return expression, known
