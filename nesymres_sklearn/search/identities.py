"""Polynomial identities: laws that are rational functions of the features, or square
roots of such, found exactly by linear algebra (AI Feynman's polynomial fit, generalised
to quotients), in milliseconds and for many variables at once. Here, the exact readings
of the features (as they are, over a power-law monomial, by their angles' cosines and
sines, through the logarithm of ``y``) and their order; the systems ``t*Q - P = 0``
(``t = y`` or ``t = y**2``) and the laws read from their null vectors are
:mod:`.identity_systems`'s.

The systems are tried smallest first (``t = y`` before ``t = y**2`` at equal size;
where ``y`` changes sign, a root's law holds only when the monomial outside the root
carries the sign, ``y = x0*sqrt(x1**2 + x2**2)``, or on exact data a polynomial,
``y = (x0 - x1*x2)/sqrt(1 - x1**2/c**2)``), on at most
:data:`.identity_systems.SVD_POINTS` points spread over the data, with at most
``1/identity_overdetermined`` as many unknowns as points (a
:class:`.settings.SearchSettings` field, as are the identities' other knobs), so no null
vector comes from interpolation. An identity of degrees ``(d_P, d_Q)`` holds at every
larger pair too: the largest pairs are decomposed first, and only the pairs below one
that holds are searched. A pair where more than one identity holds (a common factor of
``P`` and ``Q``, or features bound by a polynomial relation) is passed over. The null
vector is made sparse (the terms of the smallest shares dropped while the rest holds)
and refitted on every point. Its law is a candidate only when it is exact to rounding on
every point, also when fitted on the points where any one feature is at most its median:
no rational function that approximates a smooth one to rounding on a narrow range and
only there. The decompositions run on one BLAS thread
(:func:`..shared_setting.one_blas_thread`).

With a :class:`.exactness.Tolerance` of the noise, every reading holds to the noise
instead of to rounding (:mod:`.identities_under_noise`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations, product
from typing import NamedTuple

import numpy as np
import sympy

from ..expression.monomial import monomial_tokens
from ..expression.prefix import prefix_to_sympy, skeletonize_with_numbers
from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT, variable_token
from ..shared_setting import one_blas_thread
from .budget import Deadline
from .exactness import EXACT, Tolerance, is_exact_to_rounding
from .fitted import CandidateRows, Fitted, mse
from .fitting.constants import least_squares_run
from .identity_systems import (
    Nulls,
    System,
    Terms,
    basis_and_counts,
    changes_sign,
    degree_pairs,
    extrapolates,
    fitted_coefficients,
    largest_pairs,
    law_holds,
    law_of,
    monomial_term,
    monomial_values,
    scaled_matrix,
    sign_carried,
    spread_points,
    sum_of_terms,
    terms_law,
)
from .offset_exponential import offset_exponential_law
from .offset_power import offset_power_law
from .problem import Problem
from .settings import SearchSettings
from .variables.features import relevance
from .variables.power_law import log_line

#: The identity of ``y`` over its power-law monomial has exponents of magnitude up to
#: this (the tokens' integer powers).
MAX_POWER = 5
#: An exponent of :func:`exponential_identity`'s monomial is rounded to the nearest half
#: where it lies this close to it (an exact identity gives it to about 1e-15).
POWER_TOLERANCE = 1e-6
#: :func:`over_monomial` also tries the power law's slopes within this of a half rounded
#: towards 0: ``1/sqrt(x0**2 + x1**2)`` gives each feature a slope near -1/2, on either
#: side of it (not tuned: a fifth of the way to either integer).
HALVES = 0.1
#: The monomials that :func:`least_squares_monomial` compares, at most (exponents up to
#: 5 in magnitude for 3 features, 2 for 4, 1 for 5 and 6).
MONOMIAL_CANDIDATES = 1500
#: Under noise, :func:`exponential_identity` reads the points where ``|y|`` is at least
#: this many times the noise (its logarithm's noise, ``sd/|y|``, is then at most a tenth),
#: and ``y``'s sign there.
LOG_NOISE = 10.0


class Identity(NamedTuple):
    """An exact identity's law (``fitted``) and the highest power of any one feature in
    its ``P`` and ``Q`` (``degree``)."""

    fitted: Fitted
    degree: int

    def ends_search(self, max_degree: int) -> bool:
        """Whether the law is at most ``max_degree`` in each feature
        (:attr:`.settings.SearchSettings.identity_ending_degree`)."""
        return self.degree <= max_degree


def identity_rows(
    problem: Problem,
    settings: SearchSettings,
    deadline: Deadline | None = None,
    seed: int = 0,
    tolerance: Tolerance = EXACT,
) -> tuple[CandidateRows, bool]:
    """The law of ``problem`` that an identity gives (:func:`exact_identity`; where none
    holds, with the columns within ``settings.identity_wide_turns`` turns also read by
    their cosine and sine, :func:`angle_identity`, in the search's units as the network
    reads them, so that the features' units change no skeleton) as a row of origin
    ``"identity"`` (no row when there is none), and whether it ends the search
    (:meth:`Identity.ends_search` at ``settings.identity_ending_degree``). Where none
    holds over every column, the same without the least relevant column, then without
    the two least (:func:`.variables.features.relevance`, seeded by ``seed``), up to
    ``settings.identity_dropped_columns``: columns that no exact law needs cost the
    others their monomials. Each such search starts only where the time left before
    halfway to ``deadline`` holds what the search over every column took (the network
    keeps at least half its time), and stops there. Where none holds exactly, the law
    ``c*m*(exp(k*n) ± 1)**±1`` (:func:`.offset_exponential.offset_exponential_law`) is
    searched over every column until then (to the noise:
    :func:`.identities_under_noise.identities_to_the_noise`), then the law
    ``(a + c*m)**(1/p)`` (:func:`.offset_power.offset_power_law`, exact only). With a
    ``tolerance`` to the noise, every identity holds to the noise instead of to
    rounding, and none ends the search."""
    rows = CandidateRows()
    with one_blas_thread():
        started = None if deadline is None else deadline.clock()
        found = _identity_of(problem, settings, deadline, tolerance)
        dropped = min(settings.identity_dropped_columns, problem.X.shape[1] - 2)
        half = None if deadline is None else deadline.halfway()  # the network keeps at least half its time
        # what one more search over fewer columns takes at most, about
        seconds = 0.0 if deadline is None else deadline.clock() - started
        if found is None and dropped > 0 and (half is None or half.holds(seconds)):
            order = np.argsort(relevance(problem.X, problem.y, seed)[0], kind="stable")
            for k in range(1, dropped + 1):
                if found is not None or (half is not None and not half.holds(seconds)):
                    break
                found = _identity_without(problem, np.sort(order[k:]), settings, half, tolerance)
        if found is None and tolerance.exact:  # over every column, once (to the noise: in its readings)
            # two constants exact on every point: no rational function approximating a
            # transcendental one, an identity of degree 0
            law = offset_exponential_law(problem, half) or offset_power_law(problem, half)
            found = None if law is None else Identity(law, 0)
    if found is not None:
        rows.add(found.fitted, origin="identity")
    return rows, found is not None and tolerance.exact and found.ends_search(settings.identity_ending_degree)


def _identity_without(
    problem: Problem, kept: np.ndarray, settings: SearchSettings, deadline: Deadline | None, tolerance: Tolerance
) -> Identity | None:
    """:func:`_identity_of` on the columns ``kept`` of ``problem``, written over all of them."""
    within = _identity_of(Problem(problem.X[:, kept], problem.y, problem.weights), settings, deadline, tolerance)
    if within is None:
        return None
    skeleton, constants = within.fitted.skeleton.substituted(
        within.fitted.constants, lambda j: ([variable_token(int(kept[j]))], [])
    )
    return Identity(Fitted(skeleton, constants, within.fitted.loss), within.degree)


def _identity_of(
    problem: Problem, settings: SearchSettings, deadline: Deadline | None, tolerance: Tolerance
) -> Identity | None:
    """:func:`identity_with_angles` as :func:`identity_rows` reads the columns."""
    ones = np.ones(problem.X.shape[1])
    turns = (settings.identity_wide_turns,)
    return identity_with_angles(problem, ones, deadline, settings, turns, replaced=False, tolerance=tolerance)


def exact_identity(
    problem: Problem,
    deadline: Deadline | None = None,
    settings: SearchSettings | None = None,
    tolerance: Tolerance = EXACT,
) -> Identity | None:
    """The law ``P/Q`` or ``±sqrt(P/Q)`` of the smallest identity that is exact to rounding
    on every point of ``problem`` and beyond the points it is fitted on (see the module
    docstring), or ``None``; no further system is decomposed once ``deadline`` has passed.
    Where there is none and ``y`` is mostly a power law of the features, the identity of
    ``y / m`` for its monomial ``m`` (:func:`monomial_ratios`), times ``m``.
    ``settings`` (default :class:`.SearchSettings`) give the knobs; with a ``tolerance``
    to the noise, "exact" is "to the noise"."""
    settings = SearchSettings() if settings is None else settings
    return _rational_or_over_monomial(problem, deadline, settings, tolerance)[0]


def _rational_or_over_monomial(
    problem: Problem, deadline: Deadline | None, settings: SearchSettings, tolerance: Tolerance
) -> tuple[Identity | None, list[tuple[list[int], np.ndarray, Problem]] | None]:
    """:func:`exact_identity`, and the :func:`monomial_ratios` it read (``None`` where it
    read none), for the readings that follow it."""
    overdetermined, exact = settings.identity_overdetermined, tolerance.exact
    found = _exact_identity(problem, overdetermined, deadline, tolerance=tolerance, signed_root=exact)
    if found is not None or (deadline is not None and deadline.passed()):
        return found, None

    def divided(part: Problem, within: Tolerance) -> Identity | None:
        return _exact_identity(part, settings.identity_overdetermined, deadline, tolerance=within)

    ratios = monomial_ratios(problem, settings, not tolerance.exact)
    return over_monomial(problem, divided, ratios, tolerance), ratios


def monomial_ratios(
    problem: Problem, settings: SearchSettings, noisy: bool = False
) -> list[tuple[list[int], np.ndarray, Problem]]:
    """``y / m`` (as a problem) for each monomial ``m`` that ``y`` is mostly a power law of
    (:func:`power_law_monomial`, then with the slopes within ``HALVES`` of a half
    rounded towards 0; ``noisy``, as :func:`.identities_under_noise.noisy_identity` also
    reads them: on the points of the largest ``|y|``, and by
    :func:`least_squares_monomial`), with its exponents and values, where ``m`` is
    finite and not 0 at every point."""
    X, y, r2 = problem.X, problem.y, settings.identity_power_law_r2
    monomials = [power_law_monomial(X, y, r2, within) for within in (0.0, HALVES)]
    if noisy:
        loud = np.abs(y) >= np.quantile(np.abs(y), settings.noisy_power_quantile)
        read = spread_points(len(y))
        weights = None if problem.weights is None else problem.weights[read]
        monomials += [power_law_monomial(X[loud], y[loud], r2), least_squares_monomial(X[read], y[read], r2, weights)]
    ratios = []
    for powers in dict.fromkeys(tuple(powers) for powers in monomials if powers is not None):
        with np.errstate(all="ignore"):
            monomial = np.prod(problem.X ** np.array(powers, dtype=np.float64), axis=1)
        if np.all(np.isfinite(monomial)) and not np.any(monomial == 0):
            ratios.append((list(powers), monomial, Problem(problem.X, problem.y / monomial, problem.weights)))
    return ratios


Find = Callable[[Problem, Tolerance], "Identity | None"]


def over_monomial(
    problem: Problem,
    find: Find,
    ratios: list[tuple[list[int], np.ndarray, Problem]],
    tolerance: Tolerance = EXACT,
) -> Identity | None:
    """The identity that ``find`` gives for ``y / m`` (or ``y / m`` constant to rounding)
    times ``m``, for the first of ``ratios`` (:func:`monomial_ratios`) where the product
    holds (to ``tolerance``); else ``None``."""
    for powers, monomial, ratio in ratios:
        found = _times_monomial(problem, powers, ratio, find, tolerance, tolerance.over(monomial))
        if found is not None:
            return found
    return None


def _times_monomial(
    problem: Problem, powers: list[int], ratio: Problem, find: Find, tolerance: Tolerance, within: Tolerance
) -> Identity | None:
    """:func:`over_monomial` for the monomial of exponents ``powers``, ``ratio`` being ``y``
    over it (``within``: its tolerance)."""
    divided = _constant(ratio, within) or find(ratio, within)
    if divided is None:
        return None
    tokens = ("mul", *monomial_tokens({j: b for j, b in enumerate(powers) if b}), *divided.fitted.skeleton.tokens)
    skeleton, constants = Skeleton(tokens), divided.fitted.constants
    found = holding(problem, skeleton, constants, tolerance)
    return None if found is None else Identity(found, divided.degree + max(abs(b) for b in powers))


def _constant(problem: Problem, tolerance: Tolerance = EXACT) -> Identity | None:
    """The constant law of ``problem`` where ``y`` is constant to rounding (a monomial's
    ratio: no system of degrees (0, 0) is searched), or to the noise, else ``None``."""
    if tolerance.exact:
        value = np.average(problem.y, weights=problem.weights)
        loss = float(np.average((problem.y - value) ** 2, weights=problem.weights))
        holds = is_exact_to_rounding(loss, value * value)
    else:
        value = np.average(problem.y, weights=tolerance.sd**-2)  # the noise's weights
        loss = float(np.average((problem.y - value) ** 2, weights=problem.weights))
        holds = tolerance.law_holds(problem.y, value, loss, problem.scale)
    return Identity(Fitted(Skeleton((CONSTANT,)), np.array([value]), loss), 0) if holds else None


def holding(
    problem: Problem, skeleton: Skeleton, constants: np.ndarray, tolerance: Tolerance, deadline: Deadline | None = None
) -> Fitted | None:
    """The law of ``skeleton`` and ``constants`` (its loss on ``problem``'s points) where
    it holds to ``tolerance``; under noise, else with its constants refitted by least
    squares weighted by the noise where that makes it hold; ``None`` otherwise."""
    program, X, y, weights = skeleton.program, problem.X, problem.y, problem.weights
    law = Fitted(skeleton, constants, mse(program, X, y, constants, weights))
    if law_holds(problem, law, tolerance):
        return law
    if tolerance.exact:
        return None
    constants = least_squares_run(program, X, y, constants, deadline=deadline, weights=tolerance.sd**-2.0)
    if constants is None:
        return None
    law = Fitted(skeleton, constants, mse(program, X, y, constants, weights))
    return law if law_holds(problem, law, tolerance) else None


def identity_with_angles(
    problem: Problem,
    multipliers: np.ndarray,
    deadline: Deadline | None = None,
    settings: SearchSettings | None = None,
    turns: tuple[float, ...] | None = None,
    replaced: bool = True,
    tolerance: Tolerance = EXACT,
) -> Identity | None:
    """:func:`exact_identity`, or else (under noise, each reading's monomial first,
    :func:`angle_monomial_identity`) :func:`angle_identity` with the columns that may be
    angles (:func:`angle_columns`, in radians once times ``multipliers``) within each of
    ``turns`` turns in turn (default: 1, then ``settings.identity_wide_turns``), then
    with those within one turn entering by their cosine and sine alone (a set of
    columns already tried not tried again), then so and the other positive columns by
    their square roots, then with the difference of each pair of
    the columns within one turn (:func:`angle_differences`; the other columns as
    themselves), then :func:`exponential_identity`, then each angle identity over the
    power-law monomial (:func:`over_monomial`), then (on exact data) each reading's
    monomial, then each reading's monomial with the angles halved (``sin(t/2)**-4``);
    none once ``deadline`` has passed. The
    readings after :func:`exact_identity` stop halfway from then to ``deadline``, so that
    the network keeps at least half its time. Each holds to ``tolerance``."""
    settings = SearchSettings() if settings is None else settings
    found, ratios = _rational_or_over_monomial(problem, deadline, settings, tolerance)
    if found is not None or ratios is None:  # found, or the deadline passed
        return found
    half = None if deadline is None else deadline.halfway()
    return _other_readings(problem, multipliers, half, settings, turns, replaced, tolerance, ratios)


def _other_readings(
    problem: Problem,
    multipliers: np.ndarray,
    deadline: Deadline | None,
    settings: SearchSettings,
    turns: tuple[float, ...] | None,
    replaced: bool,
    tolerance: Tolerance,
    ratios: list[tuple[list[int], np.ndarray, Problem]],
) -> Identity | None:
    """:func:`identity_with_angles` after :func:`exact_identity`, until ``deadline``
    (``ratios``: the :func:`monomial_ratios` that it read)."""
    overdetermined = settings.identity_overdetermined
    readings, within_a_turn, differences = angle_readings(problem.X, multipliers, settings, turns, replaced)
    attempts: list[Find] = [
        lambda part, within, a=angles, r=instead: angle_identity(part, a, deadline, r, overdetermined, tolerance=within)
        for angles, instead, _ in readings
    ]
    attempts.append(
        lambda part, within: angle_identity(
            part, within_a_turn, deadline, True, overdetermined, roots=True, tolerance=within
        )
    )
    attempts += [
        lambda part, within, a=angles, pair=pair: angle_identity(
            part, a, deadline, True, overdetermined, pair, tolerance=within
        )
        for angles, _, pair in differences
    ]

    def monomial_readings(divisor: float) -> list[Callable[[], Identity | None]]:
        return [
            lambda a=angles, r=instead: angle_monomial_identity(
                problem, {j: m / divisor for j, m in a.items()}, settings, deadline, r, tolerance
            )
            for angles, instead, _ in readings
        ]

    steps = [
        *([] if tolerance.exact else monomial_readings(1)),
        *(lambda attempt=attempt: attempt(problem, tolerance) for attempt in attempts),
        lambda: exponential_identity(problem, deadline, overdetermined, tolerance),
        *(lambda attempt=attempt: over_monomial(problem, attempt, ratios, tolerance) for attempt in attempts),
        *(monomial_readings(1) if tolerance.exact else []),
        *monomial_readings(2),
    ]
    for step in steps:
        if deadline is not None and deadline.passed():
            return None
        found = step()
        if found is not None:
            return found
    return None


def angle_readings(
    X: np.ndarray,
    multipliers: np.ndarray,
    settings: SearchSettings,
    turns: tuple[float, ...] | None = None,
    replaced: bool = True,
) -> tuple[list[tuple[dict[int, float], bool, None]], dict[int, float], list[tuple[dict[int, float], bool, tuple]]]:
    """How the angle identities read the columns that may be angles (:func:`angle_columns`,
    in radians once times ``multipliers``): ``(angles, replaced, None)`` for those within
    each of ``turns`` turns (default: 1, then ``settings.identity_wide_turns``), then
    for those within one turn by their cosine and sine alone, each set once; the columns
    within one turn; and ``(pair's angles, True, pair)`` for each pair of those of one
    multiplier, read by their difference (:func:`angle_differences`)."""
    span = settings.identity_angle_span
    within_a_turn = angle_columns(X, multipliers, 1, span)
    sets = [
        (tuple(angle_columns(X, multipliers, within, span).items()), replaced)
        for within in turns or (1, settings.identity_wide_turns)
    ]
    readings = [
        (dict(angles), instead, None)
        for angles, instead in dict.fromkeys([*sets, (tuple(within_a_turn.items()), True)])
        if angles
    ]
    differences = [
        ({i: within_a_turn[i], j: within_a_turn[j]}, True, (i, j)) for i, j in angle_differences(within_a_turn)
    ]
    return readings, within_a_turn, differences


def angle_columns(
    X: np.ndarray, multipliers: np.ndarray, turns: float = 1.0, min_span: float = SearchSettings.identity_angle_span
) -> dict[int, float]:
    """The columns ``j`` of ``X`` whose values times ``multipliers[j]`` may be angles:
    within ``turns`` turns of 0 either way, and spanning at least ``min_span`` radians;
    each with its multiplier."""
    found = {}
    for j in range(X.shape[1]):
        values = X[:, j] * multipliers[j]
        if np.max(np.abs(values)) <= 2 * np.pi * turns * (1 + 1e-12) and np.ptp(values) >= min_span:
            found[j] = float(multipliers[j])
    return found


def angle_identity(
    problem: Problem,
    angles: dict[int, float],
    deadline: Deadline | None = None,
    replaced: bool = True,
    overdetermined: int = SearchSettings.identity_overdetermined,
    difference: tuple[int, int] | None = None,
    roots: bool = False,
    tolerance: Tolerance = EXACT,
) -> Identity | None:
    """The law of the smallest identity (:func:`exact_identity`, without the power-law
    monomial) in which each column ``j`` of ``angles`` enters only by ``cos(a*x_j)`` and
    ``sin(a*x_j)``, ``a = angles[j]``: ``(cos(t) - b)/(1 - b*cos(t))``, or
    ``1 + g*sin(t)``; the sine to a power of at most 1, so that ``sin**2 + cos**2 = 1``
    makes no second identity; with ``replaced=False`` the angles also enter as
    themselves (``x + sin(x) + sin(2*x)``). With a ``difference`` ``(i, j)`` (two angles
    of one multiplier), those two enter only by the cosine and sine of ``a*(x_i - x_j)``
    (the angle between two directions), not as themselves. With ``roots``, the other
    columns that are positive enter by their square roots (``x0 + 2*sqrt(x0*x1)*cos(t)``).
    ``None`` without angles or roots, or where none holds (to ``tolerance``). ``overdetermined``:
    :attr:`.SearchSettings.identity_overdetermined`."""
    if not angles and not roots:
        return None
    turned, sines, written = turned_columns(problem, angles, replaced, difference, roots)
    found = _exact_identity(turned, overdetermined, deadline, sines, tolerance)
    return _written_back(problem, found, written, tolerance, deadline)


def angle_monomial_identity(
    problem: Problem,
    angles: dict[int, float],
    settings: SearchSettings,
    deadline: Deadline | None = None,
    replaced: bool = True,
    tolerance: Tolerance = EXACT,
) -> Identity | None:
    """The law ``m * R``, ``m`` a monomial (:func:`monomial_ratios`) of the columns as
    :func:`angle_identity` reads them and ``R`` the constant ``y / m`` or (under noise)
    its identity over them, written over the features, where it holds to ``tolerance``;
    ``None`` without angles or such a law. Under noise where ``y`` spans decades, many
    mixtures of null vectors pass a system's first-order test, and the sparse terms of
    ``x*cos(t)*sin(t)/r**3`` can follow one; a line in the logarithms reads its monomial.
    On exact data, a monomial of a half angle's sine (``sin(t/2)**-4``) is none of the
    rational readings' laws, and ``1 - cos(t)`` loses digits near ``t = 0``."""
    if not angles:
        return None
    turned, sines, written = turned_columns(problem, angles, replaced)

    def find(part: Problem, within: Tolerance) -> Identity | None:
        if tolerance.exact:  # the rational readings search these ratios' identities
            return None
        return _exact_identity(part, settings.identity_overdetermined, deadline, sines, within)

    found = over_monomial(turned, find, monomial_ratios(turned, settings, not tolerance.exact), tolerance)
    return _written_back(problem, found, written, tolerance, deadline)


def _written_back(
    problem: Problem, found: Identity | None, written, tolerance: Tolerance, deadline: Deadline | None
) -> Identity | None:
    """``found`` (an identity over the columns as the angle readings read them) written over
    the features by ``written``, where it holds on ``problem`` to ``tolerance``."""
    if found is None:
        return None
    skeleton, constants = found.fitted.skeleton.substituted(found.fitted.constants, written)
    law = holding(problem, skeleton, constants, tolerance, deadline)
    return None if law is None else Identity(law, found.degree)


def angle_differences(angles: dict[int, float]) -> list[tuple[int, int]]:
    """The pairs of columns of ``angles`` of one multiplier (their differences may be angles too)."""
    return [(i, j) for i, j in combinations(sorted(angles), 2) if angles[i] == angles[j]]


def turned_columns(problem: Problem, angles: dict[int, float], replaced: bool, difference=None, roots=False):
    """``problem`` with each column ``j`` of ``angles`` read by ``cos(a*x_j)`` and
    ``sin(a*x_j)`` (``a = angles[j]``; with ``replaced``, not also as itself), the two
    columns of a ``difference`` by the cosine and sine of ``a*(x_i - x_j)`` alone, with
    ``roots`` the other positive columns by their square roots, the
    indices of the sines' columns, and the substitution (for
    :meth:`.Skeleton.substituted`) that writes a law over those columns over the features."""
    paired = set(difference or ())
    kept = [j for j in range(problem.X.shape[1]) if not ((replaced or j in paired) and j in angles)]
    rooted = {j for j in kept if roots and np.all(problem.X[:, j] > 0)}
    phases = [((j,), a) for j, a in angles.items() if j not in paired]
    if difference is not None:
        phases.insert(0, (difference, angles[difference[0]]))
    turned = [(columns, a, function) for columns, a in phases for function in ("cos", "sin")]
    with np.errstate(all="ignore"):
        values = [problem.X[:, c[0]] - (problem.X[:, c[1]] if len(c) == 2 else 0.0) for c, _, _ in turned]
        own = np.where([j in rooted for j in kept], np.sqrt(np.abs(problem.X[:, kept])), problem.X[:, kept])
        columns = [own, *(getattr(np, f)(a * v)[:, None] for (_, a, f), v in zip(turned, values))]
    sines = frozenset(len(kept) + k for k, (_, _, function) in enumerate(turned) if function == "sin")

    def written(k: int) -> tuple[list[str], list[float]]:
        if k < len(kept):
            return ["sqrt", variable_token(kept[k])] if kept[k] in rooted else [variable_token(kept[k])], []
        columns, a, function = turned[k - len(kept)]
        phase = [variable_token(columns[0])]
        if len(columns) == 2:
            phase = ["add", *phase, "mul", "-1", variable_token(columns[1])]
        return ([function, *phase], []) if a == 1 else ([function, "mul", CONSTANT, *phase], [a])

    return Problem(np.hstack(columns), problem.y, problem.weights), sines, written


def exponential_identity(
    problem: Problem,
    deadline: Deadline | None = None,
    overdetermined: int = SearchSettings.identity_overdetermined,
    tolerance: Tolerance = EXACT,
) -> Identity | None:
    """The law ``±m(x)*exp(P/Q)`` (``m`` a monomial of exponents that are multiples of one
    half, ``P/Q`` a rational law: a Gaussian, a Boltzmann factor) where it is exact to
    rounding on every point of ``problem``, or ``None``.

    On the points where ``y`` is a normal float (an exponential underflows), ``log|y| = sum_j
    b_j*log|x_j| + P/Q`` is the identity ``log|y|*Q - sum_j b_j*log|x_j|*Q - P = 0``,
    linear in the coefficients of ``P``, ``Q`` and ``b_j*Q``: the smallest system where
    one identity holds gives the exponents ``b_j`` (rounded to halves), and the
    rational identity of ``log|y| - sum_j b_j*log|x_j|`` (:func:`_exact_identity`, with
    its test beyond the points it is fitted on) gives ``P/Q``. Under noise (a
    ``tolerance`` to it), on the points where ``|y|`` is at least ``LOG_NOISE`` times the
    noise, so that its logarithm's noise is ``sd/|y|`` to first order, and ``y`` keeps one
    sign there."""
    X, y = problem.X, problem.y
    if not np.any(y):
        return None
    floor = np.finfo(np.float64).tiny if tolerance.exact else LOG_NOISE * tolerance.sd
    nonzero = np.flatnonzero(np.abs(y) >= floor)  # a subnormal's log has lost digits
    # under noise, the sign is read where the noise cannot turn it: a law near 0 (a
    # Gaussian's tails) crosses 0 by the noise alone
    if changes_sign(y if tolerance.exact else y[nonzero]) or len(nonzero) < overdetermined * 2:
        return None
    logged = [j for j in range(X.shape[1]) if np.all(X[nonzero, j] != 0)]
    with np.errstate(all="ignore"):
        log_y, log_x = np.log(np.abs(y[nonzero])), np.log(np.abs(X[nonzero][:, logged]))
    logs = tolerance.at(nonzero).of_log(y[nonzero])
    powers = _log_exponents(X[nonzero], log_y, log_x, overdetermined, deadline, logs)
    if powers is None:
        return None
    exponents = np.zeros(X.shape[1])
    exponents[logged] = powers
    rational = _exact_identity(Problem(X[nonzero], log_y - log_x @ powers), overdetermined, deadline, tolerance=logs)
    if rational is None:
        return None
    skeleton, constants = _exponential_law(rational.fitted, exponents, y[nonzero[0]] < 0)
    law = holding(problem, skeleton, constants, tolerance, deadline)
    if law is None and tolerance.exact:  # the logarithms' rounding, through exp
        polished = least_squares_run(skeleton.program, X, y, constants, deadline=deadline, weights=problem.weights)
        law = None if polished is None else holding(problem, skeleton, polished, tolerance)
    if law is None:
        return None
    return Identity(law, rational.degree + int(np.ceil(np.max(np.abs(exponents)))))


def _exponential_law(exponent: Fitted, powers: np.ndarray, negative: bool) -> tuple[Skeleton, np.ndarray]:
    """The skeleton and constants of ``±m*exp(P/Q)`` (``m`` the monomial of ``powers``) for
    the law ``exponent`` of ``P/Q``, its constant term as a factor outside (``exp(a +
    R)`` written ``e**a*exp(R)``: a Gaussian's ``1/sqrt(2*pi)``) where expanding ``P/Q``
    splits one off."""
    ratio = prefix_to_sympy(exponent.skeleton.tokens, constants=[sympy.Float(c) for c in exponent.constants])
    term, rest = sympy.expand(ratio).as_coeff_Add()
    tokens, numbers = ["exp", *exponent.skeleton.tokens], list(exponent.constants)
    split = term != 0 and bool(rest.free_symbols) and abs(float(term)) < np.log(np.finfo(np.float64).max)
    if split:
        inner, inner_numbers = skeletonize_with_numbers(rest)
        tokens, numbers = ["exp", *inner], [float(np.exp(float(term))), *inner_numbers]
    if np.any(powers):
        tokens = ["mul", *monomial_tokens({j: b for j, b in enumerate(powers) if b}), *tokens]
    if split:
        tokens = ["mul", CONSTANT, *tokens]
    return Skeleton(tuple(["mul", "-1", *tokens] if negative else tokens)), np.asarray(numbers, dtype=np.float64)


def _log_exponents(
    X: np.ndarray,
    log_y: np.ndarray,
    log_x: np.ndarray,
    overdetermined: int,
    deadline: Deadline | None,
    tolerance: Tolerance = EXACT,
) -> np.ndarray | None:
    """The exponents ``b_j`` of :func:`exponential_identity`'s smallest system where one
    identity holds (to ``tolerance``, that of ``log_y``), each rounded to a multiple of
    one half (at most ``MAX_POWER`` in magnitude); ``None`` where no system holds or,
    exact to rounding, an exponent is not such a multiple."""
    read = spread_points(len(log_y))
    unknowns, blocks = tolerance.unknowns(len(read) // overdetermined), 1 + log_x.shape[1]
    exponents, counts = basis_and_counts(X.shape[1], unknowns)
    with np.errstate(all="ignore"):
        basis = monomial_values(X[read], exponents)
    if not (np.all(np.isfinite(basis)) and np.all(np.isfinite(log_y)) and np.all(np.isfinite(log_x))):
        return None
    sizes = {pair: int(counts[pair[0]] + blocks * counts[pair[1]]) for pair in product(range(len(counts)), repeat=2)}
    for degrees in sorted((pair for pair, size in sizes.items() if pair != (0, 0) and size <= unknowns), key=sizes.get):
        if deadline is not None and deadline.passed():
            return None
        p, q = (int(counts[degree]) for degree in degrees)
        divisor = basis[:, :q]
        logs = [-log_y[read, None] * divisor, *(log_x[read][:, [k]] * divisor for k in range(log_x.shape[1]))]
        derivative = None
        if not tolerance.exact:
            derivative = np.zeros((len(read), p + len(logs) * q))
            derivative[:, p : p + q] = -divisor  # the noise enters through log|y|
        within = tolerance.at(read)
        matrix, norms, slopes = scaled_matrix(np.hstack([basis[:, :p], *logs]), derivative, within.sd)
        (holds, degenerate), vectors = Nulls(matrix, slopes, within).vectors(count=2)
        if not holds or degenerate:
            continue
        vector = vectors[0] / norms
        lead = p + int(np.argmax(np.abs(vector[p : p + q])))  # b_j*Q's coefficients over Q's
        powers = vector[lead + q :: q][: log_x.shape[1]] / vector[lead]
        halves = np.round(2 * powers) / 2
        if tolerance.exact and np.max(np.abs(powers - halves), initial=0.0) > POWER_TOLERANCE:
            return None
        return halves if np.max(np.abs(halves), initial=0.0) <= MAX_POWER else None
    return None


def power_law_monomial(
    X: np.ndarray, y: np.ndarray, min_r2: float = SearchSettings.identity_power_law_r2, halves: float = 0.0
) -> list[int] | None:
    """The integer exponents of the monomial that a least-squares fit of ``log|y|`` in
    the ``log|x_j|`` rounds to, where that fit explains at least ``min_r2`` of the
    variance of ``log|y|`` and some exponent is not 0 nor any beyond ``MAX_POWER``;
    else ``None``. A slope within ``halves`` of a half (a square root's share of a
    feature, ``1/sqrt(x0**2 + x1**2)``) is rounded towards 0 instead."""
    with np.errstate(all="ignore"):
        usable = np.all(np.isfinite(np.log(np.abs(np.column_stack([y, X])))), axis=1)
    if usable.sum() <= X.shape[1] + 1:
        return None
    slopes, unexplained = log_line(X[usable], y[usable])
    if unexplained > 1 - min_r2:
        return None
    powers = [int(np.fix(b)) if abs(abs(b) % 1 - 0.5) <= halves else int(round(b)) for b in slopes]
    return powers if any(powers) and max(abs(b) for b in powers) <= MAX_POWER else None


def least_squares_monomial(
    X: np.ndarray,
    y: np.ndarray,
    min_r2: float = SearchSettings.identity_power_law_r2,
    weights: np.ndarray | None = None,
) -> list[int] | None:
    """The integer exponents of the monomial ``c * prod(x_j**b_j)`` that fits ``y`` itself
    best by least squares (``c`` fitted), among every exponent up to ``k`` in magnitude
    (``k`` the largest that keeps the candidates within ``MONOMIAL_CANDIDATES``, at most
    ``MAX_POWER``), where it explains at least ``min_r2`` of ``y``'s variance; else
    ``None``. Under noise on a target over decades, the noise buries the small values'
    logarithms, which :func:`power_law_monomial` reads; least squares on ``y`` weighs
    each point by what it carries (and by its ``weights``)."""
    d = X.shape[1]
    k = min(MAX_POWER, int((MONOMIAL_CANDIDATES ** (1 / d) - 1) // 2)) if d else 0
    w = np.ones(len(y)) if weights is None else weights
    spread = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
    if k == 0 or spread == 0:
        return None
    exponents = np.array(list(product(range(-k, k + 1), repeat=d)), dtype=np.float64)
    exponents = exponents[np.any(exponents != 0, axis=1)]
    # x**b as exp(b log|x|), its sign by the parity of the odd powers of x < 0: a third
    # of the time of :func:`.identity_systems.monomial_values`' powers (15 ms on 256
    # points of 3 features), whose exactness to rounding only the exact identities need
    with np.errstate(all="ignore"):
        logs = np.log(np.maximum(np.abs(X), np.finfo(np.float64).tiny))
        odd = (np.remainder(exponents, 2) == 1).astype(np.float64)
        signs = 1.0 - 2.0 * np.remainder((X < 0).astype(np.float64) @ odd.T, 2)
        monomials = signs * np.exp(logs @ exponents.T)
        scale = np.einsum("i,ij,ij->j", w, monomials, monomials)
        constant = ((w * y) @ monomials) / scale
        left = np.einsum("i,ij->j", w, (y[:, None] - monomials * constant) ** 2)
    left = np.where(np.all(np.isfinite(monomials), axis=0) & (scale > 0) & np.isfinite(left), left, np.inf)
    best = int(np.argmin(left))
    return [int(b) for b in exponents[best]] if left[best] <= (1 - min_r2) * spread else None


def _exact_identity(
    problem: Problem,
    overdetermined: int,
    deadline: Deadline | None = None,
    sines: frozenset = frozenset(),
    tolerance: Tolerance = EXACT,
    signed_root: bool = False,
) -> Identity | None:
    """:func:`exact_identity` without the power-law monomial, on systems of at least
    ``overdetermined`` points per unknown; a column in ``sines`` (a sine beside its
    cosine) is in no monomial to a power above 1 (``sin**2 = 1 - cos**2``). Each system,
    law and test holds to ``tolerance``. Where ``y`` changes sign as no product of
    features does, ``t = y**2`` is read with ``signed_root`` alone (over the features
    as they are, to rounding: not their angles' readings, whose cosines and sines are
    bound by ``cos**2 + sin**2 = 1``, nor under noise, where the time goes to the laws
    of fewer constants): its smallest identity gives the law with a polynomial
    outside the root that carries the sign (:func:`_signed_root`)."""
    X, y = problem.X, problem.y
    read = spread_points(len(y))
    unknowns = tolerance.unknowns(len(read) // overdetermined)
    exponents, counts = basis_and_counts(X.shape[1], unknowns, sines)
    pairs = degree_pairs(counts, unknowns)
    if not pairs:
        return None
    with np.errstate(all="ignore"):
        basis = monomial_values(X[read], exponents)
    if not np.all(np.isfinite(basis)) or not np.all(np.isfinite(y * y)):
        return None
    carried = sign_carried(X, y)
    targets = [(y, tolerance), (y * y, tolerance.of_square(y))][: 2 if carried or signed_root else 1]
    systems = [System(basis, t[read], counts, within.at(read)) for t, within in targets]

    def passed() -> bool:
        return deadline is not None and deadline.passed()

    opened: list[list[tuple[int, int]]] = []
    for system in systems:
        opened.append([])
        for pair in largest_pairs(pairs):
            if passed():
                return None
            if system.holds(pair):
                opened[-1].append(pair)
    order = sorted((system.size(pair), power, pair) for power, system in enumerate(systems) for pair in pairs)
    tried_signed_root = False
    for _, power, pair in order:
        system = systems[power]
        if not any(pair[0] <= p and pair[1] <= q for p, q in opened[power]):
            continue
        if passed():
            return None
        if power == 1 and not carried and tried_signed_root:
            continue
        if not system.holds(pair) or (tolerance.exact and system.degenerate(pair)):
            continue
        if power == 1 and not carried:  # the smallest identity of y**2 only: larger ones hold it times a factor
            tried_signed_root = True
            outside = _signed_root(problem, exponents, system, pair, deadline)
            if outside is not None:
                return outside
            continue
        if tolerance.exact:
            terms = Terms(*system.sparse(pair), root=power == 1)
            found = terms_law(problem, exponents, terms)
        else:
            fitted = system.fitted_terms(pair)
            if fitted is None:
                continue
            terms = fitted[0]._replace(root=power == 1)
            found = law_of(problem, exponents, terms, *fitted[1:])
        found = None if found is None else holding(problem, found.skeleton, found.constants, tolerance, deadline)
        if found is not None and extrapolates(problem, exponents, terms, tolerance, found.constants):
            return Identity(found, int(exponents[np.concatenate([terms.numerator, terms.denominator])].max()))
    return None


def _signed_root(
    problem: Problem,
    exponents: np.ndarray,
    system: System,
    pair: tuple[int, int],
    deadline: Deadline | None,
) -> Identity | None:
    """The law ``c*R*sqrt(m/Q)`` where ``P = m*R**2`` for a monomial ``m`` (a relativistic
    ``(x - u*t)/sqrt(1 - u**2/c**2)``), else ``c*sqrt(P/m)/S`` where ``Q = m*S**2``, of
    the identity ``y**2 = P/Q`` (``system``'s at ``pair``) where ``y`` changes sign as no
    product of features does: the polynomial outside the root carries it. Its monomials
    are the halves of those of even exponents in ``P/m`` (or ``Q/m``), their
    coefficients fitted by least squares to ``y/sqrt(|m/Q|)`` (or ``sqrt(|P/m|)/y``),
    and the law's constants then by least squares; it holds to rounding on every
    point, also when fitted on the points where any one feature is at most its median.
    ``None`` otherwise."""
    terms = Terms(*system.sparse(pair), root=True)
    fitted = fitted_coefficients(problem, exponents, terms, slice(None))
    if fitted is None:
        return None
    coefficients, n_p = fitted[0], len(terms.numerator)
    numerator = (exponents[terms.numerator], coefficients[:n_p])
    denominator = (exponents[terms.denominator], coefficients[n_p:])
    for squared, rooted, below in ((numerator, denominator, False), (denominator, numerator, True)):
        if deadline is not None and deadline.passed():
            return None
        law = _signed_root_law(problem, squared[0], rooted, below, deadline)
        if law is not None and law_holds(problem, law, EXACT) and _signed_root_extrapolates(problem, law, deadline):
            return Identity(law, int(max(squared[0].max(), rooted[0].max())))
    return None


def _signed_root_law(
    problem: Problem, squared: np.ndarray, rooted: tuple[np.ndarray, np.ndarray], below: bool, deadline: Deadline | None
) -> Fitted | None:
    """:func:`_signed_root`'s law ``c*F*sqrt(m/G)`` (``c*sqrt(G/m)/F`` where ``below``) for
    the polynomial of monomials ``squared`` (``m*F**2``) and ``G``, of the monomials and
    coefficients ``rooted``: ``F`` over the halves of the even monomials of ``squared/m``
    fitted by least squares, the law's constants then refitted to ``y``; ``None`` where
    ``F`` would be one monomial (whose sign is the features'), where a monomial of
    ``squared/m`` is no sum of two of ``F``'s, or where a fit is not finite. The even
    powers in ``m`` of a positive feature are taken out of the root."""
    X, y = problem.X, problem.y
    factor = squared.min(axis=0)
    halves = (squared[np.all((squared - factor) % 2 == 0, axis=1)] - factor) // 2
    sums = {tuple(a + b) for a in halves for b in halves}
    # F of one monomial has the features' signs; every monomial of F**2 is a sum of two of F's
    if len(halves) < 2 or any(tuple(e) not in sums for e in squared - factor):
        return None
    lifted = np.where(np.all(X > 0, axis=0), factor // 2, 0)  # sqrt(x**2) is x where x > 0
    outside, factor = halves + lifted, factor - 2 * lifted
    g_exponents, g = rooted
    g_lead = int(np.argmax(np.abs(g)))
    if g[g_lead] == 0:
        return None
    g = g / g[g_lead]
    with np.errstate(all="ignore"):
        ratio = np.prod(X**factor, axis=1) / (monomial_values(X, g_exponents) @ g)  # m/G
        target = np.sqrt(1.0 / np.abs(ratio)) / y if below else y / np.sqrt(np.abs(ratio))
        columns = monomial_values(X, outside)
        if not (np.all(np.isfinite(target)) and np.all(np.isfinite(columns))):
            return None
        found = np.linalg.lstsq(columns, target, rcond=None)[0]
        f_lead = int(np.argmax(np.abs(found) * np.linalg.norm(columns, axis=0)))
    if not np.all(np.isfinite(found)) or found[f_lead] == 0:
        return None
    polynomial = sum_of_terms([monomial_term(e, j != f_lead) for j, e in enumerate(outside)])
    rooted_sum = sum_of_terms([monomial_term(e, j != g_lead) for j, e in enumerate(g_exponents)])
    monomial = monomial_tokens({j: int(b) for j, b in enumerate(factor) if b}) if np.any(factor) else ["1"]
    if below:
        tokens = ("mul", CONSTANT, "div", "sqrt", *_quotient(rooted_sum, monomial), *polynomial)
        parts = [np.delete(g, g_lead), np.delete(found / found[f_lead], f_lead)]
    else:
        tokens = ("mul", CONSTANT, "mul", *polynomial, "sqrt", *_quotient(monomial, rooted_sum))
        parts = [np.delete(found / found[f_lead], f_lead), np.delete(g, g_lead)]
    scale = 1.0 / found[f_lead] if below else found[f_lead]
    skeleton = Skeleton(tokens)
    constants = least_squares_run(
        skeleton.program, X, y, np.concatenate([[scale], *parts]), deadline=deadline, weights=problem.weights
    )
    if constants is None:
        return None
    loss = mse(skeleton.program, X, y, constants, problem.weights)
    return Fitted(skeleton, constants, loss) if np.isfinite(loss) else None


def _quotient(numerator: list[str], denominator: list[str]) -> list[str]:
    """Tokens of ``numerator / denominator``, without a division by 1."""
    return numerator if denominator == ["1"] else ["div", *numerator, *denominator]


def _signed_root_extrapolates(problem: Problem, law: Fitted, deadline: Deadline | None) -> bool:
    """Whether ``law``, refitted on the points where each feature is at most its median,
    holds to rounding on every point."""
    program, X, y, weights = law.skeleton.program, problem.X, problem.y, problem.weights
    for column in X.T:
        part = column <= np.median(column)
        refitted = least_squares_run(
            program,
            X[part],
            y[part],
            law.constants,
            deadline=deadline,
            weights=None if weights is None else weights[part],
        )
        if refitted is None or not law_holds(
            problem, Fitted(law.skeleton, refitted, mse(program, X, y, refitted, weights)), EXACT
        ):
            return False
    return True
