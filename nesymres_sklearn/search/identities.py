"""Polynomial identities: laws that are rational functions of the features, or square
roots of such, found exactly by linear algebra (AI Feynman's polynomial fit, generalised
to quotients), in milliseconds and for many variables at once.

When ``y = P(x)/Q(x)`` for polynomials ``P`` and ``Q``, the identity ``t*Q - P = 0``
holds at every point with ``t = y``; when ``y = ±sqrt(P/Q)``, with ``t = y**2``. It is
linear in the coefficients: over the monomials of total degree up to ``d_P`` and
``d_Q``, they are a null vector of the matrix of the columns ``m(x)`` and ``-t*m(x)``,
its smallest right singular vector. Each point's row is scaled to unit norm (every
point counts alike on data over decades), then each column, so that a coefficient is
its term's share of the identity; an identity *holds* when it leaves at most a
rounding's share of the sum of squares of its terms
(:func:`.exactness.is_exact_to_rounding`).

The systems are tried smallest first (``t = y`` before ``t = y**2`` at equal size;
where ``y`` changes sign, a root's law holds only when the monomial outside the root
carries the sign, ``y = x0*sqrt(x1**2 + x2**2)``, or on exact data a polynomial,
``y = (x0 - x1*x2)/sqrt(1 - x1**2/c**2)``), on at most ``SVD_POINTS`` points spread over
the data, with at most ``1/identity_overdetermined`` as many unknowns as points (a
:class:`.settings.SearchSettings` field, as are the identities' other knobs), so no null
vector comes from interpolation. An identity of degrees ``(d_P, d_Q)`` holds at every
larger pair too: the largest pairs are decomposed first, and only the pairs below one
that holds are searched. A pair where more than one identity holds (a common factor of
``P`` and ``Q``, or features bound by a polynomial relation) is passed over. The null
vector is made sparse (the terms of the smallest shares dropped while the rest holds)
and refitted on every point. Its law is a candidate only when it is exact to rounding
on every point, also when fitted on the points where any one feature is at most its
median: no rational function that approximates a smooth one to rounding on a narrow
range and only there. The decompositions run on one BLAS thread
(:func:`..shared_setting.one_blas_thread`).

Under noise no identity is exact. Every reading above is then searched to the noise
instead (a :class:`.exactness.Tolerance` of the estimated noise): each point's row is
divided by the noise of its ``t`` rather than scaled to unit norm, so that the
residuals are in units of the noise (on a target over decades, or over a monomial, the
points' noise differs by orders of magnitude, and on rows of unit norm the noisiest
points would let any vector pass); a system's null vector holds where its residual is
at most ``noise_ratio**2`` times the share of it that the noise of ``t`` makes (the
smallest such ratio, a generalized eigenproblem: the monomials' own near-dependencies
leave residuals below the noise's that no noise explains); the pair's law is fitted to
``t`` by the reweighted null vector and Gauss-Newton steps on the law's own error, and
its terms of the smallest shares are dropped while it holds (the null vector's small
entries are the noise's as much as the law's); the law holds where its errors over the
noise have a mean square of at most ``noise_ratio**2`` (a chi-square test), refitted by
least squares weighted by the noise, and beyond half of each feature, where its
constants' uncertainty adds to the noise. Small systems come first in every reading,
larger ones while a law of fewer constants may hold (:func:`identities_to_the_noise`,
the plan's first law under noise and a source of the continuation,
:class:`IdentityUnderNoise`); where none holds, :func:`noisy_identity` fits the rational
systems to the noise by the Bayesian information criterion, a candidate where its
misfit is the noise's (:func:`noisy_identity_rows`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import combinations, product
from typing import NamedTuple

import numpy as np
import scipy.linalg
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
from .fitting.polynomial import count_monomials, monomials_of_degree
from .offset_exponential import LAW_CONSTANTS, offset_exponential_law
from .offset_power import offset_power_law
from .problem import Problem
from .pursuit import Dictionary, gauss_newton, law_residual, pursuit
from .settings import SearchSettings
from .variables.features import relevance
from .variables.power_law import log_line

#: The total degree of ``P`` and of ``Q``, at most (integer powers up to 5 are tokens).
MAX_DEGREE = 5
#: The singular value decompositions read at most this many points, spread over the data.
SVD_POINTS = 256
#: Where ``y`` changes sign, the features that change sign whose products are compared
#: with it, at most (2**8 products).
MAX_SIGN_FEATURES = 8
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
#: Rounds of the reweighted fit of a rational law under noise (:func:`_rational_fit`).
RATIONAL_ROUNDS = 3
#: Under noise, Levy's fits (one of ``Q``'s coefficients fixed) are tried beside the
#: null vector where ``Q`` has at most this many terms (:func:`_rational_fit`), for the
#: laws whose null vector starts the Gauss-Newton steps in another basin: on 230
#: validation problems at noise 0.01 and 0.1, 98 fitted to the noise against 97 with
#: the steps alone; 10 terms gained one more of 80 at a tenth more time.
LEVY_MAX_TERMS = 3
#: Unknowns of the systems that :func:`noisy_identity` fits, at most.
NOISY_UNKNOWNS = 64
#: First terms a matching pursuit starts from (:func:`pursued_identity`): a rational law
#: has a first term for each normalisation of its denominator.
PURSUIT_STARTS = 3
#: The monomials that :func:`least_squares_monomial` compares, at most (exponents up to
#: 5 in magnitude for 3 features, 2 for 4, 1 for 5 and 6).
MONOMIAL_CANDIDATES = 1500
#: Under noise, the null vectors' generalized eigenproblem (:class:`_Nulls`) adds
#: this share of the mean of its residuals' matrix's diagonal to it (that matrix is
#: singular where monomials are).
NULL_RIDGE = 1e-12
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
    searched over every column until then (to the noise: :func:`identities_to_the_noise`),
    then the law ``(a + c*m)**(1/p)`` (:func:`.offset_power.offset_power_law`, exact only).
    With a ``tolerance`` to the noise, every identity holds to the noise instead of to
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
    (:func:`power_law_monomial`, then with the slopes within ``HALVES`` of a half rounded
    towards 0; ``noisy``, as :func:`noisy_identity` also reads them: on the points of the
    largest ``|y|``, and by :func:`least_squares_monomial`), with its exponents and values,
    where ``m`` is finite and not 0 at every point."""
    X, y, r2 = problem.X, problem.y, settings.identity_power_law_r2
    monomials = [power_law_monomial(X, y, r2, within) for within in (0.0, HALVES)]
    if noisy:
        loud = np.abs(y) >= np.quantile(np.abs(y), settings.noisy_power_quantile)
        read = _spread_points(len(y))
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
    found = _holding(problem, skeleton, constants, tolerance)
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


def _holding(
    problem: Problem, skeleton: Skeleton, constants: np.ndarray, tolerance: Tolerance, deadline: Deadline | None = None
) -> Fitted | None:
    """The law of ``skeleton`` and ``constants`` (its loss on ``problem``'s points) where
    it holds to ``tolerance``; under noise, else with its constants refitted by least
    squares weighted by the noise where that makes it hold; ``None`` otherwise."""
    program, X, y, weights = skeleton.program, problem.X, problem.y, problem.weights
    law = Fitted(skeleton, constants, mse(program, X, y, constants, weights))
    if _holds(problem, law, tolerance):
        return law
    if tolerance.exact:
        return None
    constants = least_squares_run(program, X, y, constants, deadline=deadline, weights=tolerance.sd**-2.0)
    if constants is None:
        return None
    law = Fitted(skeleton, constants, mse(program, X, y, constants, weights))
    return law if _holds(problem, law, tolerance) else None


def _holds(problem: Problem, law: Fitted, tolerance: Tolerance) -> bool:
    """Whether ``law``, of loss ``law.loss`` on ``problem``'s points, holds to ``tolerance`` there."""
    if not np.isfinite(law.loss):
        return False
    if tolerance.exact:
        return problem.is_exact_to_rounding(law.loss)
    with np.errstate(all="ignore"):
        predicted = law.skeleton.program(problem.X, law.constants)
    return tolerance.law_holds(problem.y, predicted, law.loss, problem.scale)


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
    readings, within_a_turn, differences = _angle_readings(problem.X, multipliers, settings, turns, replaced)
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

    def monomials(divisor: float) -> list[Callable[[], Identity | None]]:
        return [
            lambda a=angles, r=instead: angle_monomial_identity(
                problem, {j: m / divisor for j, m in a.items()}, settings, deadline, r, tolerance
            )
            for angles, instead, _ in readings
        ]

    steps = [
        *([] if tolerance.exact else monomials(1)),
        *(lambda attempt=attempt: attempt(problem, tolerance) for attempt in attempts),
        lambda: exponential_identity(problem, deadline, overdetermined, tolerance),
        *(lambda attempt=attempt: over_monomial(problem, attempt, ratios, tolerance) for attempt in attempts),
        *(monomials(1) if tolerance.exact else []),
        *monomials(2),
    ]
    for step in steps:
        if deadline is not None and deadline.passed():
            return None
        found = step()
        if found is not None:
            return found
    return None


def _angle_readings(
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
    turned, sines, written = _angle_columns(problem, angles, replaced, difference, roots)
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
    turned, sines, written = _angle_columns(problem, angles, replaced)

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
    law = _holding(problem, skeleton, constants, tolerance, deadline)
    return None if law is None else Identity(law, found.degree)


def angle_differences(angles: dict[int, float]) -> list[tuple[int, int]]:
    """The pairs of columns of ``angles`` of one multiplier (their differences may be angles too)."""
    return [(i, j) for i, j in combinations(sorted(angles), 2) if angles[i] == angles[j]]


def _angle_columns(problem: Problem, angles: dict[int, float], replaced: bool, difference=None, roots=False):
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
    if _changes_sign(y if tolerance.exact else y[nonzero]) or len(nonzero) < overdetermined * 2:
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
    law = _holding(problem, skeleton, constants, tolerance, deadline)
    if law is None and tolerance.exact:  # the logarithms' rounding, through exp
        polished = least_squares_run(skeleton.program, X, y, constants, deadline=deadline, weights=problem.weights)
        law = None if polished is None else _holding(problem, skeleton, polished, tolerance)
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
    read = _spread_points(len(log_y))
    unknowns, blocks = tolerance.unknowns(len(read) // overdetermined), 1 + log_x.shape[1]
    exponents, counts = _monomials(X.shape[1], unknowns)
    with np.errstate(all="ignore"):
        basis = _values(X[read], exponents)
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
        matrix, norms, slopes = _scaled(np.hstack([basis[:, :p], *logs]), derivative, within.sd)
        (holds, degenerate), vectors = _Nulls(matrix, slopes, within).vectors(count=2)
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
    # x**b as exp(b log|x|), its sign by the parity of the odd powers of x < 0: a third of
    # the time of :func:`_values`' powers (15 ms on 256 points of 3 features), whose
    # exactness to rounding only the exact identities need
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
    read = _spread_points(len(y))
    unknowns = tolerance.unknowns(len(read) // overdetermined)
    exponents, counts = _monomials(X.shape[1], unknowns, sines)
    pairs = degree_pairs(counts, unknowns)
    if not pairs:
        return None
    with np.errstate(all="ignore"):
        basis = _values(X[read], exponents)
    if not np.all(np.isfinite(basis)) or not np.all(np.isfinite(y * y)):
        return None
    carried = _sign_carried(X, y)
    targets = [(y, tolerance), (y * y, tolerance.of_square(y))][: 2 if carried or signed_root else 1]
    systems = [_System(basis, t[read], counts, within.at(read)) for t, within in targets]

    def passed() -> bool:
        return deadline is not None and deadline.passed()

    opened: list[list[tuple[int, int]]] = []
    for system in systems:
        opened.append([])
        for pair in _largest(pairs):
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
            terms = _Terms(*system.sparse(pair), root=power == 1)
            found = _law(problem, exponents, terms)
        else:
            fitted = system.fitted_terms(pair)
            if fitted is None:
                continue
            terms = fitted[0]._replace(root=power == 1)
            found = _law_of(problem, exponents, terms, *fitted[1:])
        found = None if found is None else _holding(problem, found.skeleton, found.constants, tolerance, deadline)
        if found is not None and _extrapolates(problem, exponents, terms, tolerance, found.constants):
            return Identity(found, int(exponents[np.concatenate([terms.numerator, terms.denominator])].max()))
    return None


def _signed_root(
    problem: Problem,
    exponents: np.ndarray,
    system: _System,
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
    terms = _Terms(*system.sparse(pair), root=True)
    fitted = _coefficients(problem, exponents, terms, slice(None))
    if fitted is None:
        return None
    coefficients, n_p = fitted[0], len(terms.numerator)
    numerator = (exponents[terms.numerator], coefficients[:n_p])
    denominator = (exponents[terms.denominator], coefficients[n_p:])
    for squared, rooted, below in ((numerator, denominator, False), (denominator, numerator, True)):
        if deadline is not None and deadline.passed():
            return None
        law = _signed_root_law(problem, squared[0], rooted, below, deadline)
        if law is not None and _holds(problem, law, EXACT) and _signed_root_extrapolates(problem, law, deadline):
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
        ratio = np.prod(X**factor, axis=1) / (_values(X, g_exponents) @ g)  # m/G
        target = np.sqrt(1.0 / np.abs(ratio)) / y if below else y / np.sqrt(np.abs(ratio))
        columns = _values(X, outside)
        if not (np.all(np.isfinite(target)) and np.all(np.isfinite(columns))):
            return None
        found = np.linalg.lstsq(columns, target, rcond=None)[0]
        f_lead = int(np.argmax(np.abs(found) * np.linalg.norm(columns, axis=0)))
    if not np.all(np.isfinite(found)) or found[f_lead] == 0:
        return None
    polynomial = _sum([_term(e, j != f_lead) for j, e in enumerate(outside)])
    rooted_sum = _sum([_term(e, j != g_lead) for j, e in enumerate(g_exponents)])
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
        if refitted is None or not _holds(
            problem, Fitted(law.skeleton, refitted, mse(program, X, y, refitted, weights)), EXACT
        ):
            return False
    return True


def noisy_identity_rows(
    problem: Problem, noise: float, settings: SearchSettings, deadline: Deadline | None
) -> CandidateRows:
    """The law under ``noise`` (the standard deviation of ``y``'s at a point of weight 1)
    as a row (origin ``"identity"``): :func:`noisy_identity` where its root mean squared
    error is at most ``settings.noise_ratio`` times the noise and its constants at most
    ``noisy_identity_max_constants``; else the law ``c*m*(exp(k*n) ± 1)**±1`` where it
    holds to the noise (:func:`.offset_exponential_law`, tens of milliseconds). On one
    BLAS thread, until ``deadline``. (The plan searches the identities that hold to the
    noise first, :func:`identities_to_the_noise`, and this law where none does.)"""
    reach = settings.noise_ratio * noise
    with one_blas_thread():
        rows = _kept(noisy_identity(problem, deadline, settings), reach, settings)
        if not len(rows):
            offset = offset_exponential_law(problem, deadline, noise_tolerance(problem, noise, settings))
            rows = _kept(offset, reach, settings)
    return rows


def pursued_identity(
    problem: Problem, noise: float, settings: SearchSettings, deadline: Deadline | None
) -> CandidateRows:
    """The law ``P/Q`` of few Laurent monomials that a matching pursuit finds under
    ``noise`` (:func:`.pursuit.pursuit`, on the points the systems read), over the
    features, then with the columns that may be angles read by their cosine and sine
    (as :func:`noisy_angle_law` reads them), written back over the features: of a
    pursuit's laws of 1, 2, ... terms, the first that holds to the noise on every point
    (:func:`_holding`) and beyond half of each feature (:func:`_law_extrapolates`) with
    at most ``settings.noisy_identity_readings_constants`` constants, as a row (origin
    ``"identity"``); no row otherwise. Each pursuit starts from each of the
    ``PURSUIT_STARTS`` monomials that lower the error most alone, and from the
    least-squares monomial (:func:`least_squares_monomial`) times the others: of their
    laws, the one of the fewest constants (then the lowest loss), while ``deadline``
    holds. The first reading with a law gives it. On one BLAS thread."""
    found = CandidateRows()
    with one_blas_thread():
        law = _pursued_law(problem, noise, settings, deadline)
        if law is None:
            ones = np.ones(problem.X.shape[1])
            readings, _, differences = _angle_readings(
                problem.X, ones, settings, (settings.identity_wide_turns,), False
            )
            for angles, replaced, difference in [*readings, *differences]:
                if law is not None or (deadline is not None and deadline.passed()):
                    break
                turned, _, written = _angle_columns(problem, angles, replaced, difference)
                law = _pursued_law(turned, noise, settings, deadline)
                if law is not None:
                    skeleton, constants = law.skeleton.substituted(law.constants, written)
                    law = Fitted(skeleton, constants, law.loss)
    if law is not None:
        found.add(law, origin="identity")
    return found


def _pursued_law(problem: Problem, noise: float, settings: SearchSettings, deadline: Deadline | None) -> Fitted | None:
    """:func:`pursued_identity` over ``problem``'s columns as they are."""
    tolerance = noise_tolerance(problem, noise, settings)
    most = settings.noisy_identity_readings_constants
    read = _spread_points(len(problem.y))
    points = problem.at(read)
    starts = [(None, rank) for rank in range(PURSUIT_STARTS)]
    lead = least_squares_monomial(points.X, points.y, -np.inf, points.weights)
    if lead is not None:
        starts.insert(1, (lead, 0))
    dictionary = Dictionary.of(points.X)
    best = None
    for lead, first in starts:
        if deadline is not None and deadline.passed():
            break
        steps = pursuit(points, tolerance.sd[read], most + 1, tolerance.polish, deadline, lead, first, dictionary)
        for step in steps:
            if step.error > tolerance.ratio**2:
                continue
            terms = _Terms(step.numerator, step.denominator, root=False)
            law = _law_of(problem, step.exponents, terms, step.coefficients, step.shares)
            law = None if law is None else _holding(problem, law.skeleton, law.constants, tolerance, deadline)
            if (
                law is not None
                and law.skeleton.n_constants <= most
                and _law_extrapolates(problem, law, tolerance, deadline)
            ):
                if best is None or (law.skeleton.n_constants, law.loss) < (best.skeleton.n_constants, best.loss):
                    best = law
                break  # a longer law of this start would only fit the noise further
    return best


def identities_to_the_noise(
    problem: Problem,
    noise: float,
    settings: SearchSettings,
    deadline: Deadline | None,
    seed: int,
    sizes: tuple[int | None, ...],
) -> CandidateRows:
    """The identity that holds to ``noise`` (:func:`identity_rows` with
    :func:`noise_tolerance`) as a row where it has at most
    ``settings.noisy_identity_readings_constants`` constants, its systems of at most
    ``sizes[0]`` unknowns in every reading, then of the next size (``None``: as many as
    the points allow), while a law of fewer constants than the one found may hold: under
    noise a small system may approximate, with more constants, a law that a larger one
    in another reading writes (``x/sin(x)`` as ``1/(1 - c*x**2)``). At the first size,
    also the law ``c*m*(exp(k*n) ± 1)**±1`` to the noise
    (:func:`.offset_exponential_law`: it reads no system, so once, until halfway to
    ``deadline`` as the readings over fewer columns), in place of an identity of more
    constants (Planck's law to 0.1% noise has a rational approximation of five); no row
    where none holds before ``deadline``."""
    most = settings.noisy_identity_readings_constants
    best = CandidateRows()
    for unknowns in sizes:
        tolerance = replace(noise_tolerance(problem, noise, settings, unknowns), most_constants=most)
        found, _ = identity_rows(problem, settings, deadline, seed, tolerance)
        # also where an identity of more constants holds: it may approximate this law to the noise
        if unknowns == sizes[0] and _fewest(found, most + 1) > LAW_CONSTANTS:
            with one_blas_thread():
                law = offset_exponential_law(problem, None if deadline is None else deadline.halfway(), tolerance)
            if law is not None:
                found = CandidateRows()
                found.add(law, origin="identity")
        found = found.where(lambda skeleton, constants, loss, most=most: skeleton.n_constants <= most)
        if len(found):
            best, most = found, _fewest(found, most) - 1
        if most < 1 or (deadline is not None and deadline.passed()):
            break
    return best


def noisy_identity_sizes(settings: SearchSettings) -> tuple[int | None, ...]:
    """The sizes of the identities' systems to the noise: ``settings.noisy_identity_unknowns``,
    then as many unknowns as the points allow (``None``)."""
    return (*settings.noisy_identity_unknowns, None)


def _fewest(rows: CandidateRows, otherwise: int) -> int:
    """The fewest constants of a row of ``rows``; ``otherwise`` without a row."""
    return min((skeleton.n_constants for skeleton in rows.skeletons), default=otherwise)


def noise_tolerance(
    problem: Problem, noise: float, settings: SearchSettings, most_unknowns: int | None = None
) -> Tolerance:
    """The :class:`.exactness.Tolerance` of ``problem``'s identities under ``noise`` (the
    standard deviation at a point of weight 1; the weights count as inverse variances):
    ``settings.noise_ratio`` times it, at most ``settings.noisy_identity_readings_constants``
    constants and ``most_unknowns`` unknowns, ``settings.noisy_identity_polish`` steps."""
    weights = np.ones(len(problem.y)) if problem.weights is None else problem.weights
    sd = noise / np.sqrt(weights)
    most = settings.noisy_identity_readings_constants
    return Tolerance(sd, settings.noise_ratio, most, most_unknowns, settings.noisy_identity_polish)


def noisy_angle_law(
    problem: Problem, deadline: Deadline | None = None, settings: SearchSettings | None = None
) -> Fitted | None:
    """:func:`noisy_identity` with the columns that may be angles (:func:`angle_columns`,
    as :func:`identity_rows` reads them) also read by their cosine and sine, then with
    those within one turn read by their cosine and sine alone, then with each pair of
    those by their difference's (:func:`angle_differences`), written back over the
    features: of these, the law of the lowest Bayesian information criterion while
    ``deadline`` holds; ``None`` without such a column or a fit."""
    settings = SearchSettings() if settings is None else settings
    ones = np.ones(problem.X.shape[1])
    readings, _, differences = _angle_readings(problem.X, ones, settings, (settings.identity_wide_turns,), False)
    readings += differences
    best, best_score = None, np.inf
    for angles, replaced, difference in readings:
        if not angles or (deadline is not None and deadline.passed()):
            continue
        turned, sines, written = _angle_columns(problem, angles, replaced, difference)
        found = noisy_identity(turned, deadline, settings, sines)
        if found is None:
            continue
        skeleton, constants = found.skeleton.substituted(found.constants, written)
        law = Fitted(skeleton, constants, mse(skeleton.program, problem.X, problem.y, constants, problem.weights))
        score = _bic(law, len(problem.y)) if np.isfinite(law.loss) else np.inf
        if score < best_score:
            best, best_score = law, score
    return best


class _FirstTurnOnly(ABC):
    """A source of the continuation whose first turn is all it has (:meth:`_first`). It
    starts while the time left holds its ``seconds`` (the plan's law under noise took as
    long), and at least ``settings.noisy_identity_seconds``."""

    settings: SearchSettings
    seconds: float

    def holds(self, deadline: Deadline | None, turn: int) -> bool:
        seconds = max(self.seconds, self.settings.noisy_identity_seconds)
        return turn == 0 and (deadline is None or deadline.holds(seconds))

    def propose(self, rows: CandidateRows, turn: int, deadline: Deadline | None) -> CandidateRows:
        return CandidateRows() if turn else self._first(deadline)

    @abstractmethod
    def _first(self, deadline: Deadline | None) -> CandidateRows:
        """The rows of the first turn."""


@dataclass
class AngleLawUnderNoise(_FirstTurnOnly):
    """The angle form of the law under noise (:func:`noisy_angle_law`) as a source of
    the continuation, where the budget is idle (in the plan its time was the network's
    and Operon's): its first turn fits it, a row (origin ``"identity"``) where
    :func:`noisy_identity_rows`' tests pass (``reach``: the misfit of the noise); its
    turns as :class:`_FirstTurnOnly`'s."""

    problem: Problem
    reach: float
    settings: SearchSettings = field(default_factory=SearchSettings)
    seconds: float = 0.0
    name: str = "angle"

    def _first(self, deadline: Deadline | None) -> CandidateRows:
        with one_blas_thread():
            law = noisy_angle_law(self.problem, deadline, self.settings)
        return _kept(law, self.reach, self.settings)


@dataclass
class _SearchUnderNoise(_FirstTurnOnly):
    """A search of ``problem`` under ``noise`` (the standard deviation at a point of
    weight 1) as a source of the continuation."""

    problem: Problem
    noise: float
    settings: SearchSettings = field(default_factory=SearchSettings)
    seconds: float = 0.0


@dataclass
class IdentityUnderNoise(_SearchUnderNoise):
    """The identities' readings to the ``noise`` (:func:`identities_to_the_noise`, of the
    sizes ``settings.noisy_identity_unknowns`` and then the largest the points allow:
    ``v1*v4**2*(v2**2 + v3**2)`` has 126 monomials of degree 5) as a source of the
    continuation: its first turn searches, a row (origin ``"identity"``) where one holds;
    its turns as :class:`_FirstTurnOnly`'s; ``seed``: the columns' relevance."""

    seed: int = 0
    name: str = "identity"

    def _first(self, deadline: Deadline | None) -> CandidateRows:
        sizes = noisy_identity_sizes(self.settings)
        return identities_to_the_noise(self.problem, self.noise, self.settings, deadline, self.seed, sizes)


@dataclass
class PursuitUnderNoise(_SearchUnderNoise):
    """The matching pursuit's law under ``noise`` (:func:`pursued_identity`) as a source
    of the continuation: its first turn searches, a row (origin ``"identity"``) where one
    holds; its turns as :class:`_FirstTurnOnly`'s."""

    name: str = "pursuit"

    def _first(self, deadline: Deadline | None) -> CandidateRows:
        return pursued_identity(self.problem, self.noise, self.settings, deadline)


def _kept(law: Fitted | None, reach: float, settings: SearchSettings) -> CandidateRows:
    """``law`` as a row (origin ``"identity"``) where its root mean squared error is at
    most ``reach`` and its constants at most ``settings.noisy_identity_max_constants``."""
    found = CandidateRows()
    if law is not None and law.loss <= reach**2 and law.skeleton.n_constants <= settings.noisy_identity_max_constants:
        found.add(law, origin="identity")
    return found


def noisy_identity(
    problem: Problem,
    deadline: Deadline | None = None,
    settings: SearchSettings | None = None,
    sines: frozenset = frozenset(),
) -> Fitted | None:
    """Under noise, where no identity is exact: the law of the lowest Bayesian
    information criterion ``n log(mse) + k log(n)`` (``k`` its constants) among the
    forms ``settings.noisy_identity_forms``: ``"rational"``, ``P/Q``; ``"root"``,
    ``±sqrt(P/Q)`` (where the features can carry ``y``'s sign, :func:`_sign_carried`);
    with ``"power"``, each of these times the monomial that ``y`` mostly is a power law
    of (:func:`power_law_monomial`, on the points of the largest ``|y|``,
    ``settings.noisy_power_quantile``), and times the monomial that fits ``y`` best by
    least squares (:func:`least_squares_monomial`), fitted to ``y`` over it; the columns in
    ``sines`` to a power of at most 1. Each form is :func:`_noisy_law`, in that order
    while ``deadline`` holds. A candidate, not a law: the selection weighs it against
    the other rows. ``None`` without a fit. ``settings`` (default
    :class:`.SearchSettings`) give the knobs."""
    settings = SearchSettings() if settings is None else settings
    forms = settings.noisy_identity_forms
    system = _noisy_system(problem, settings.identity_overdetermined, sines)
    if system is None:
        return None
    monomials: list[list[int] | None] = [None]
    if "power" in forms:
        loud = np.abs(problem.y) >= np.quantile(np.abs(problem.y), settings.noisy_power_quantile)
        points = system.points
        for powers in (
            power_law_monomial(problem.X[loud], problem.y[loud], settings.identity_power_law_r2),
            least_squares_monomial(points.X, points.y, settings.identity_power_law_r2, points.weights),
        ):
            if powers is not None and powers not in monomials:
                monomials.append(powers)
    best, best_score = None, np.inf
    for powers, root in product(monomials, (False, True)):
        if (root and "root" not in forms) or (not root and "rational" not in forms):
            continue
        if deadline is not None and deadline.passed():
            break
        found = _noisy_law(problem, system, powers, root, deadline, settings.noisy_identity_polish)
        if found is None or not np.isfinite(found.loss):
            continue
        score = _bic(found, len(problem.y))
        if score < best_score:
            best, best_score = found, score
    return best


def _bic(found: Fitted, n: int) -> float:
    """The Bayesian information criterion ``n log(mse) + k log(n)`` of a fit on ``n`` points."""
    return n * np.log(max(found.loss, np.finfo(float).tiny)) + found.skeleton.n_constants * np.log(n)


class _NoisySystem(NamedTuple):
    """What every form of :func:`noisy_identity` reads: the points ``read`` (as
    ``points``), the monomials' ``exponents``, their ``counts`` by degree, the degree
    ``pairs`` (smallest systems first) and the monomials' values on every point
    (``basis``)."""

    read: np.ndarray
    points: Problem
    exponents: np.ndarray
    counts: np.ndarray
    pairs: list[tuple[int, int]]
    basis: np.ndarray


def _noisy_system(problem: Problem, overdetermined: int, sines: frozenset = frozenset()) -> _NoisySystem | None:
    """The :class:`_NoisySystem` of ``problem`` on the points that :func:`exact_identity`
    reads, at most ``NOISY_UNKNOWNS`` unknowns (the columns in ``sines`` to a power of at
    most 1); ``None`` where the monomials are not finite."""
    X, y = problem.X, problem.y
    read = _spread_points(len(y))
    points = problem.at(read)
    unknowns = min(len(read) // overdetermined, NOISY_UNKNOWNS)
    exponents, counts = _monomials(X.shape[1], unknowns, sines)
    pairs = sorted(degree_pairs(counts, unknowns), key=lambda pair: (counts[pair[0]] + counts[pair[1]], pair))
    with np.errstate(all="ignore"):
        basis = _values(X, exponents)
    return _NoisySystem(read, points, exponents, counts, pairs, basis) if np.all(np.isfinite(basis)) else None


def _noisy_law(
    problem: Problem,
    system: _NoisySystem,
    powers: list[int] | None,
    root: bool,
    deadline: Deadline | None,
    polish: int = 0,
) -> Fitted | None:
    """The law ``m * P/Q`` (``m * sqrt(P/Q)`` with ``root``; ``m`` the monomial of
    ``powers``, 1 without) whose degrees and terms the Bayesian information criterion
    prefers, on the ``system``'s points: each pair of degrees
    (smallest systems first) is fitted by :func:`_rational_fit` (with ``polish``) to ``t = (y/m)**k``,
    ``k`` 1 or 2, its equation's errors weighed by ``|dt/dy|`` (so that each point's
    noise counts as measured); the pair of the lowest criterion then loses its terms of
    the smallest shares, the most at once that leave the criterion no larger, until none
    can go; the law is refitted on every point, its constants then by least squares
    (:func:`.fitting.constants.least_squares_run`). ``None`` without a pair, when the
    sign of ``y`` cannot be a root's, or when ``deadline`` passes before the first."""
    X, y = problem.X, problem.y
    if root and not _sign_carried(X, y):
        return None
    with np.errstate(all="ignore"):
        monomial = np.ones(len(y)) if powers is None else np.prod(X ** np.array(powers, dtype=np.float64), axis=1)
        over = y / monomial
        t = over * over if root else over
        spread = (2 * np.abs(over) if root else np.ones(len(y))) / np.abs(monomial)
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(spread)) and np.all(spread > 0)):
        return None
    read, points, exponents, counts, pairs, basis = system
    head = () if powers is None else ("mul", *monomial_tokens({j: b for j, b in enumerate(powers) if b}))

    def fitted(terms: _Terms, on: Problem, rows) -> tuple[float, Fitted | None, np.ndarray]:
        coefficients, shares = _rational_fit(basis[rows], t[rows], terms, spread[rows], polish)
        part = Problem(X[rows], over[rows], None if problem.weights is None else problem.weights[rows])
        law = None if coefficients is None else _law_of(part, exponents, terms, coefficients, shares)
        if law is None:
            return np.inf, None, shares
        skeleton = Skeleton((*head, *law.skeleton.tokens))
        found = Fitted(skeleton, law.constants, mse(skeleton.program, on.X, on.y, law.constants, on.weights))
        if not np.isfinite(found.loss):
            return np.inf, None, shares
        return _bic(found, len(on.y)), found, shares

    def passed() -> bool:
        return deadline is not None and deadline.passed()

    best = (np.inf, None, None, None)
    for p, q in pairs:
        if passed():
            break
        terms = _Terms(np.arange(counts[p]), np.arange(counts[q]), root=root)
        score, found, shares = fitted(terms, points, read)
        if score < best[0]:
            best = (score, found, shares, terms)
    score, found, shares, terms = best
    while found is not None and not passed():
        n_p = len(terms.numerator)
        order = np.argsort(shares, kind="stable")
        for m in _halving(len(order) - 2):
            dropped = order[:m]
            fewer = _Terms(
                np.delete(terms.numerator, dropped[dropped < n_p]),
                np.delete(terms.denominator, dropped[dropped >= n_p] - n_p),
                root=root,
            )
            if not len(fewer.numerator) or not len(fewer.denominator):
                continue
            trial = fitted(fewer, points, read)
            if trial[0] <= score:
                score, found, shares, terms = (*trial, fewer)
                break
        else:
            break
    found = None if found is None else fitted(terms, problem, slice(None))[1]
    if found is None:
        return None
    constants = least_squares_run(
        found.skeleton.program, X, y, found.constants, deadline=deadline, weights=problem.weights
    )
    loss = np.inf if constants is None else mse(found.skeleton.program, X, y, constants, problem.weights)
    return Fitted(found.skeleton, constants, loss) if loss < found.loss else found


def _halving(most: int) -> list[int]:
    """``most``, half of it, a quarter, ... down to 1: how many terms to drop at once."""
    sizes = []
    while most >= 1:
        sizes.append(most)
        most //= 2
    return sizes


def _rational_fit(
    basis: np.ndarray, y: np.ndarray, terms: _Terms, spread: np.ndarray | None = None, polish: int = 0
) -> tuple[np.ndarray | None, np.ndarray]:
    """The coefficients of ``P``'s and then ``Q``'s monomials (columns of ``basis``) that
    fit ``y = P/Q``, and their terms' shares (each coefficient's part of the equation's
    columns of unit norm): the null vector of ``[P, -y Q] / |Q|`` (Sanathanan and
    Koerner's iteration, :func:`_reweighted`), each point's error also divided by its
    noise's ``spread`` (default 1); ``None`` where the fit is not finite. With
    ``polish`` (under noise), also each solution with one of ``Q``'s coefficients fixed
    at 1 (Levy's), the one of the law's smallest error then taking at most ``polish``
    Gauss-Newton steps (:func:`.pursuit.gauss_newton`): the null vector minimises the error of
    the equation, whose columns ``y Q`` carry the noise, and with monomials of nearly
    collinear features it may fit the noise with the law's terms' shares far off."""
    numerator, denominator = basis[:, terms.numerator], basis[:, terms.denominator]
    scale = np.ones(len(y)) if spread is None else 1.0 / spread
    fits = [_reweighted(numerator, denominator, y, scale, None)]
    if polish and denominator.shape[1] <= LEVY_MAX_TERMS:
        fits += [_reweighted(numerator, denominator, y, scale, k) for k in range(denominator.shape[1])]
    fits = [fit for fit in fits if fit[0] is not None]
    if not fits:
        return None, np.zeros(len(terms.numerator) + len(terms.denominator))
    if polish:
        errors = [law_residual(numerator, denominator, y, coefficients, scale)[0] for coefficients, _ in fits]
        coefficients, norms = fits[int(np.argmin(errors))]
        coefficients = gauss_newton(numerator, denominator, y, coefficients, scale, polish)
    else:
        coefficients, norms = fits[0]
    shares = np.abs(coefficients * norms)
    return coefficients, shares / np.linalg.norm(shares)


def _reweighted(
    numerator: np.ndarray, denominator: np.ndarray, y: np.ndarray, scale: np.ndarray, fixed: int | None
) -> tuple[np.ndarray | None, np.ndarray]:
    """``RATIONAL_ROUNDS`` rounds of Sanathanan and Koerner's iteration from ``Q = 1``
    (each weighs the equation's error by the previous ``1/|Q|``, which turns it into the
    law's), each the null vector of the weighted ``[P, -y Q]`` with columns of unit norm,
    or, with ``fixed``, its least-squares solution with ``Q``'s coefficient ``fixed`` at
    1; the coefficients (``None`` where not finite) and the last round's column norms."""
    n_p = numerator.shape[1]
    weights, coefficients, norms = scale, None, np.ones(n_p + denominator.shape[1])
    for _ in range(RATIONAL_ROUNDS):
        with np.errstate(all="ignore"):
            matrix = np.hstack([numerator, -y[:, None] * denominator]) * weights[:, None]
            norms = np.linalg.norm(matrix, axis=0)
            norms = np.where(norms > 0, norms, 1.0)
        if not np.all(np.isfinite(matrix)):
            return None, norms
        if fixed is None:
            coefficients = np.linalg.svd(matrix / norms, full_matrices=False)[2][-1] / norms
        else:
            others = np.delete(np.arange(len(norms)), n_p + fixed)
            solution = np.linalg.lstsq(matrix[:, others] / norms[others], -matrix[:, n_p + fixed], rcond=None)[0]
            coefficients = np.insert(solution / norms[others], n_p + fixed, 1.0)
        with np.errstate(all="ignore"):
            q = np.abs(denominator @ coefficients[n_p:])
        if not np.all(np.isfinite(q)) or np.any(q == 0):
            break
        weights = scale / q
    return coefficients, norms


def basis_exponents(n_features: int, unknowns: int, sines: frozenset = frozenset()) -> np.ndarray:
    """The exponents (rows) of the monomials of ``n_features`` variables, the constant
    first and then by total degree, up to the largest degree at which they are fewer than
    ``unknowns`` (and at most ``MAX_DEGREE``); the columns in ``sines`` to a power of at most 1."""
    rows: list[tuple[int, ...]] = [(0,) * n_features]
    for degree in range(1, MAX_DEGREE + 1):
        if len(rows) + count_monomials(n_features, degree, len(sines)) >= unknowns:
            break  # counted first: a layer too large to use is not listed (20 features' cubes: 1,540)
        rows += [e for e in monomials_of_degree(n_features, degree) if all(e[j] <= 1 for j in sines)]
    return np.array(rows, dtype=np.int64).reshape(len(rows), n_features)


def _spread_points(n: int) -> np.ndarray:
    """The indices of the at most ``SVD_POINTS`` points, spread over ``n``, that the systems read."""
    return np.unique(np.linspace(0, n - 1, min(n, SVD_POINTS)).astype(int))


def _monomials(n_features: int, unknowns: int, sines: frozenset = frozenset()) -> tuple[np.ndarray, np.ndarray]:
    """:func:`basis_exponents` and how many of them are of each total degree or less."""
    exponents = basis_exponents(n_features, unknowns, sines)
    return exponents, np.cumsum(np.bincount(exponents.sum(axis=1)))


def degree_pairs(counts: np.ndarray, unknowns: int) -> list[tuple[int, int]]:
    """The degrees ``(d_P, d_Q)`` whose monomials (``counts[d]``: those of total degree up
    to ``d``; degrees beyond ``counts`` have too many) are at most ``unknowns``, without
    ``(0, 0)`` (a constant ``y``)."""
    degrees = range(len(counts))
    return [(p, q) for p, q in product(degrees, degrees) if (p, q) != (0, 0) and counts[p] + counts[q] <= unknowns]


def _largest(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs below no other pair."""
    return [(p, q) for p, q in pairs if not any(a >= p and b >= q and (a, b) != (p, q) for a, b in pairs)]


def _values(X: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """The monomials of ``exponents`` (rows) at the points ``X``, one column each."""
    return np.prod(X[:, None, :] ** exponents[None], axis=2)


def _scaled(
    matrix: np.ndarray, derivative: np.ndarray | None = None, sd: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``matrix`` with each row and then each column of unit norm, the columns' norms (a
    zero row or column stays as it is), and ``derivative`` (each row's by the point's
    ``t``; ``None`` exact to rounding) scaled alike. Under noise (``sd``, that of each
    point's ``t``), each row is divided by its noise instead: the residuals are then in
    units of the noise, and a chi-square test weighs each point by what it carries (on
    rows of unit norm, the noisiest points would pass any vector)."""
    if sd is None:
        rows = np.linalg.norm(matrix, axis=1, keepdims=True)
        rows = np.where(rows > 0, rows, 1.0)
    else:
        rows = sd[:, None]
    matrix = matrix / rows
    norms = np.linalg.norm(matrix, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    slopes = None if derivative is None else derivative / rows / norms
    return matrix / norms, norms, slopes


_SYGVX, _SYGVX_LWORK = scipy.linalg.get_lapack_funcs(("sygvx", "sygvx_lwork"), (np.zeros((1, 1)),))


@cache
def _sygvx_workspace(k: int) -> int:
    """``dsygvx``'s optimal workspace for ``k`` unknowns, queried as scipy queries it."""
    work, info = _SYGVX_LWORK(k, uplo="L")
    if info != 0:
        raise np.linalg.LinAlgError(f"dsygvx's workspace query failed (info {info}) for {k} unknowns")
    return int(work)


def _largest_generalized(a: np.ndarray, b: np.ndarray, count: int) -> np.ndarray:
    """The eigenvectors (columns, ascending) of the ``count`` largest eigenvalues of
    ``a v = w (b + r I) v``, ``r`` :data:`NULL_RIDGE` times the mean of ``b``'s diagonal:
    LAPACK's ``dsygvx`` as :func:`scipy.linalg.eigh` calls it for ``subset_by_index``,
    without its checks and its workspace query on every call (the identities under noise
    solve tens of thousands of these small problems); ``1 <= count <= len(b)``."""
    k = len(b)
    ridged = b.copy()
    ridged.flat[:: k + 1] += NULL_RIDGE * np.trace(b) / k
    _, vectors, found, _, info = _SYGVX(
        a, ridged, itype=1, jobz="V", range="I", uplo="L", il=k - count + 1, iu=k, lwork=_sygvx_workspace(k)
    )
    if info != 0:
        raise np.linalg.LinAlgError(f"dsygvx failed (info {info}) on a {k} x {k} null-vector problem")
    return vectors[:, :found]


class _Nulls:
    """The null vectors of a scaled ``matrix`` over any subset of its columns, and whether
    each holds to ``tolerance``. Exact to rounding: the right singular vectors of the
    smallest singular values. Under noise: those of the smallest ratio of the squared
    residual to the share of it that the noise of ``t`` makes (the rows change with ``t``
    by ``slopes``, :func:`_scaled`), a generalized eigenproblem of the two Gram matrices
    (computed once): the columns' own near-dependencies (a polynomial of ``cos`` on a
    narrow range), which ``t`` has no part in, leave residuals below the noise's, but no
    noise explains them."""

    def __init__(self, matrix: np.ndarray, slopes: np.ndarray | None, tolerance: Tolerance):
        self.matrix, self.tolerance = matrix, tolerance
        if not tolerance.exact:
            noise = slopes * tolerance.sd[:, None]
            self.gram, self.noise_gram = matrix.T @ matrix, noise.T @ noise
            # every block of finite Gram matrices is finite: then no block is checked
            self.finite = bool(np.all(np.isfinite(self.gram)) and np.all(np.isfinite(self.noise_gram)))

    def holds(self, columns: np.ndarray | None = None, count: int = 1) -> list[bool]:
        """Whether the ``count`` closest null vectors over ``columns`` (default: all) hold."""
        if self.tolerance.exact:  # the singular values alone
            values = np.linalg.svd(self._columns(columns), compute_uv=False)
            return [self.tolerance.null_holds(values[-k] ** 2) for k in range(1, count + 1)]
        return self.vectors(columns, count)[0]

    def vectors(self, columns: np.ndarray | None = None, count: int = 1) -> tuple[list[bool], np.ndarray]:
        """The ``count`` closest null vectors over ``columns`` (rows, the closest first)
        and whether each holds."""
        if self.tolerance.exact:
            _, values, vectors = np.linalg.svd(self._columns(columns), full_matrices=False)
            return [self.tolerance.null_holds(values[-k] ** 2) for k in range(1, count + 1)], vectors[::-1][:count]
        every = slice(None) if columns is None else np.ix_(columns, columns)
        gram, noise = self.gram[every], self.noise_gram[every]
        k = len(gram)
        if k < count or not (self.finite or (np.all(np.isfinite(gram)) and np.all(np.isfinite(noise)))):
            return [False] * count, np.zeros((count, k))
        # the largest ratios of the noise's share to the residual, ascending
        vectors = _largest_generalized(noise, gram, count)
        vectors = vectors[:, ::-1].T
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        holds = [self.tolerance.null_holds(v @ gram @ v, v @ noise @ v) for v in vectors]
        return holds, vectors

    def _columns(self, columns: np.ndarray | None) -> np.ndarray:
        return self.matrix if columns is None else self.matrix[:, columns]


class _System:
    """The identity's matrix for one ``t`` on the points read: the monomial columns
    ``basis`` (by total degree; ``counts[d]`` of degree up to ``d``) for ``P`` and ``-t``
    times them for ``Q``, by pair of degrees; its null vectors hold to ``tolerance``
    (that of ``t`` on those points)."""

    def __init__(self, basis: np.ndarray, t: np.ndarray, counts: np.ndarray, tolerance: Tolerance = EXACT):
        self.basis, self.t, self.counts, self.tolerance = basis, t, counts, tolerance
        self._tested: dict[tuple[int, int], tuple[bool, bool]] = {}
        self._last: tuple[tuple[int, int], tuple[np.ndarray, np.ndarray, _Nulls]] | None = None

    def size(self, pair: tuple[int, int]) -> int:
        return int(self.counts[pair[0]] + self.counts[pair[1]])

    def columns(self, pair: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, _Nulls]:
        """The columns of ``P``'s monomials then ``Q``'s, scaled, their norms, and their
        null vectors (:func:`_scaled`, :class:`_Nulls`; under noise, with how the columns
        change with ``t``); the last pair's kept for the steps that follow its test."""
        if self._last is None or self._last[0] != pair:
            n_p, n_q = (int(self.counts[degree]) for degree in pair)
            derivative = None
            if not self.tolerance.exact:
                derivative = np.hstack([np.zeros((len(self.t), n_p)), -self.basis[:, :n_q]])
            raw = np.hstack([self.basis[:, :n_p], -self.t[:, None] * self.basis[:, :n_q]])
            matrix, norms, slopes = _scaled(raw, derivative, self.tolerance.sd)
            self._last = (pair, (matrix, norms, _Nulls(matrix, slopes, self.tolerance)))
        return self._last[1]

    def _test(self, pair: tuple[int, int]) -> tuple[bool, bool]:
        """Whether one identity of these degrees holds, and whether a second does."""
        if pair not in self._tested:
            self._tested[pair] = tuple(self.columns(pair)[2].holds(count=2))
        return self._tested[pair]

    def holds(self, pair: tuple[int, int]) -> bool:
        """Whether an identity of these degrees holds on the points read."""
        return self._test(pair)[0]

    def degenerate(self, pair: tuple[int, int]) -> bool:
        """Whether more than one identity of these degrees holds."""
        return self._test(pair)[1]

    def sparse(self, pair: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The monomials (columns of the basis) of ``P`` and of ``Q`` that the identity
        needs: the terms of the smallest shares are dropped while the rest holds, the
        most such at once, until none can go."""
        matrix, _, nulls = self.columns(pair)
        n_p = int(self.counts[pair[0]])
        kept = np.arange(matrix.shape[1])

        def holds_on(columns: np.ndarray) -> bool:  # with terms of both P and Q
            return bool(columns[0] < n_p <= columns[-1] and nulls.holds(columns)[0])

        while True:
            vector = nulls.vectors(kept)[1][0]
            order = np.argsort(np.abs(vector), kind="stable")
            low, high = 0, len(kept) - 2  # the identity keeps a term of P and one of Q
            while low < high:  # the longest run of ``order`` whose removal leaves an identity
                middle = (low + high + 1) // 2
                if holds_on(kept[np.sort(order[middle:])]):
                    low = middle
                else:
                    high = middle - 1
            if low == 0:
                return kept[kept < n_p], kept[kept >= n_p] - n_p
            kept = kept[np.sort(order[low:])]

    def fitted_terms(self, pair: tuple[int, int]) -> tuple[_Terms, np.ndarray, np.ndarray] | None:
        """Under noise, the monomials of ``P`` and of ``Q`` that the law needs
        (:meth:`sparse`), their coefficients and shares: the law ``t = P/Q`` from their
        closest null vector (:class:`_Nulls`), polished by Gauss-Newton steps on the
        law's own error (each point's over its noise); ``None`` where that law does not
        hold (the null vector's test is to first order: where ``Q`` nears 0, the law's
        error is not the equation's) or has more than ``tolerance.most_constants``."""
        sd, ratio, most = self.tolerance.sd, self.tolerance.ratio, self.tolerance.most_constants
        _, norms, nulls = self.columns(pair)
        n_p = int(self.counts[pair[0]])
        terms = _Terms(*self.sparse(pair), root=False)
        if most is not None and len(terms.numerator) + len(terms.denominator) - 1 > most:
            return None
        columns = np.concatenate([terms.numerator, n_p + terms.denominator])
        vector = nulls.vectors(columns)[1][0]
        numerator, denominator = self.basis[:, terms.numerator], self.basis[:, terms.denominator]
        coefficients = gauss_newton(
            numerator, denominator, self.t, vector / norms[columns], 1.0 / sd, self.tolerance.polish
        )
        error = law_residual(numerator, denominator, self.t, coefficients, 1.0 / sd)[0] / len(self.t)
        return (terms, coefficients, np.abs(vector)) if error <= ratio**2 else None


class _Terms(NamedTuple):
    """An identity's monomials (rows of the exponents) in ``P`` and in ``Q``, and whether
    its ``t`` is ``y**2`` (``root``)."""

    numerator: np.ndarray
    denominator: np.ndarray
    root: bool


def _coefficients(problem: Problem, exponents: np.ndarray, terms: _Terms, part) -> tuple[np.ndarray, np.ndarray] | None:
    """The coefficients of ``P``'s and then ``Q``'s monomials fitted on the points ``part``
    of ``problem``, and their terms' shares; ``None`` where they are not finite or those
    points do not determine them (more than one identity holds there)."""
    X, y = problem.X[part], problem.y[part]
    t = y * y if terms.root else y
    with np.errstate(all="ignore"):
        matrix = np.hstack(
            [_values(X, exponents[terms.numerator]), -t[:, None] * _values(X, exponents[terms.denominator])]
        )
        matrix, norms, _ = _scaled(matrix)
    if not np.all(np.isfinite(matrix)) or len(matrix) <= matrix.shape[1]:
        return None
    _, values, vectors = np.linalg.svd(matrix, full_matrices=False)
    if is_exact_to_rounding(values[-2] ** 2):
        return None
    return vectors[-1] / norms, np.abs(vectors[-1])


def _law(problem: Problem, exponents: np.ndarray, terms: _Terms, part=slice(None)) -> Fitted | None:
    """The law of the identity's ``terms`` fitted on the points ``part`` of ``problem``
    (its loss on every point): ``c * m * P/Q`` or ``c * m * sqrt(P/Q)`` (``terms.root``),
    where ``m`` is the monomial that ``P/Q`` (or its root, as far as the features' signs
    allow) has as a factor, the terms of the largest shares in ``P`` and ``Q`` have no
    constant and ``c`` holds the scale and the sign; ``None`` where those points do not
    determine it (:func:`_coefficients`) or ``P`` or ``Q`` is 0."""
    fitted = _coefficients(problem, exponents, terms, part)
    return None if fitted is None else _law_of(problem, exponents, terms, *fitted)


def _law_of(
    problem: Problem, exponents: np.ndarray, terms: _Terms, coefficients: np.ndarray, shares: np.ndarray
) -> Fitted | None:
    """:func:`_law` from the ``coefficients`` of ``P``'s and then ``Q``'s monomials and
    their terms' ``shares``."""
    n_p = len(terms.numerator)
    p_lead, q_lead = int(np.argmax(shares[:n_p])), int(np.argmax(shares[n_p:]))
    p, q = coefficients[:n_p], coefficients[n_p:]
    if p[p_lead] == 0 or q[q_lead] == 0:  # P or Q is 0: no law
        return None
    scale, p, q = p[p_lead] / q[q_lead], p / p[p_lead], q / q[q_lead]
    p_exponents, q_exponents = exponents[terms.numerator], exponents[terms.denominator]
    factor = p_exponents.min(axis=0) - q_exponents.min(axis=0)
    if terms.root:
        # sqrt(x**2) is x where x keeps one sign; where y changes sign, the monomial
        # outside the root must carry it (y = x0*sqrt(x1**2 + x2**2)), as the loss checks
        # (rounded towards 0: an odd power in the denominator stays in the root, sqrt(x0/x1)
        # and not sqrt(x0*x1)/x1, which differs from the law where x1 < 0 and x0 < 0)
        one_sign = np.all(problem.X >= 0, axis=0) | np.all(problem.X <= 0, axis=0) | _changes_sign(problem.y)
        outside = np.where(one_sign, np.fix(factor / 2), 2 * np.fix(factor / 4)).astype(int)
        inside = factor - 2 * outside
    else:
        outside, inside = factor, 0 * factor
    p_exponents = p_exponents - p_exponents.min(axis=0) + np.maximum(inside, 0)
    q_exponents = q_exponents - q_exponents.min(axis=0) + np.maximum(-inside, 0)
    sign = 1 if scale > 0 or not terms.root else -1  # under the root, P/Q > 0
    numerator = _sum([_term(e, j != p_lead, sign) for j, e in enumerate(p_exponents)])
    denominator = _sum([_term(e, j != q_lead) for j, e in enumerate(q_exponents)])
    monomial = monomial_tokens(dict(enumerate(outside.tolist()))) if np.any(outside) else []
    tokens = numerator if denominator == ["1"] else ["div", *numerator, *denominator]
    if terms.root:
        if numerator == ["1"]:
            tokens = ["div", *(monomial or ["1"]), "sqrt", *denominator]
        else:
            tokens = [*(["mul", *monomial] if monomial else []), "sqrt", *tokens]
    elif monomial:
        tokens = monomial if tokens == ["1"] else ["mul", *monomial, *tokens]
    skeleton = Skeleton(("mul", CONSTANT, *tokens))
    inner = np.concatenate([np.delete(sign * p, p_lead), np.delete(q, q_lead)])
    if terms.root:  # c's sign is y's over the rest
        with np.errstate(all="ignore"):
            rest = skeleton.program(problem.X, np.concatenate([[1.0], inner]))
        scale = np.sqrt(abs(scale)) * (1.0 if np.nansum(rest * problem.y) >= 0 else -1.0)
    constants = np.concatenate([[scale], inner])
    return Fitted(skeleton, constants, mse(skeleton.program, problem.X, problem.y, constants, problem.weights))


def _changes_sign(y: np.ndarray) -> bool:
    return bool(np.any(y > 0) and np.any(y < 0))


def _sign_carried(X: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``y`` keeps one sign, or changes it as a product of some features does
    (the only way a law ``c*m*sqrt(P/Q)`` can): else ``t = y**2`` is not tried. At most
    ``MAX_SIGN_FEATURES`` features that change sign are combined."""
    if not _changes_sign(y):
        return True
    signed = [j for j in range(X.shape[1]) if _changes_sign(X[:, j])]
    if len(signed) > MAX_SIGN_FEATURES:
        return True  # too many to combine: the system decides
    negative = np.signbit(y)
    for size in range(1, len(signed) + 1):
        for subset in combinations(signed, size):
            product = np.logical_xor.reduce(np.signbit(X[:, list(subset)]), axis=1)
            if np.array_equal(product, negative) or np.array_equal(product, ~negative):
                return True
    return False


def _extrapolates(
    problem: Problem,
    exponents: np.ndarray,
    terms: _Terms,
    tolerance: Tolerance = EXACT,
    fitted: np.ndarray | None = None,
) -> bool:
    """Whether, for every feature, the identity fitted on the points where the feature is
    at most its median holds (to ``tolerance``) on every point, where those points
    determine it: a rational function that only approximates ``y`` to rounding (Padé's of
    ``exp`` on a narrow range) is exact where it was fitted, not beyond. Under noise, the
    law's constants are refitted on those points by least squares (the null vector's
    fit weighs the points by ``|Q|``), from the null vector's and from the constants
    ``fitted`` on every point (a start near a pole that the points approach may
    converge beyond it), the lower loss on those points kept, and the error of its
    prediction that their uncertainty makes adds to the noise
    (:func:`_extrapolates_to_the_noise`)."""
    for column in problem.X.T:
        part = column <= np.median(column)
        found = _law(problem, exponents, terms, part)
        if found is None:
            continue
        if tolerance.exact:
            if not _holds(problem, found, tolerance):
                return False
            continue
        starts = [found.constants]
        if fitted is not None and len(fitted) == len(found.constants):
            starts.append(fitted)
        if not _extrapolates_to_the_noise(problem, found, part, tolerance, starts):
            return False
    return True


def _law_extrapolates(problem: Problem, law: Fitted, tolerance: Tolerance, deadline: Deadline | None = None) -> bool:
    """Whether ``law``, its constants refitted from its own on the points where each
    feature is at most its median, holds on every point to the noise and the variance of
    its prediction (:func:`_extrapolates_to_the_noise`); not once ``deadline`` passes."""
    for column in problem.X.T:
        if deadline is not None and deadline.passed():
            return False
        if not _extrapolates_to_the_noise(problem, law, column <= np.median(column), tolerance):
            return False
    return True


def _extrapolates_to_the_noise(
    problem: Problem, law: Fitted, part: np.ndarray, tolerance: Tolerance, starts: list | None = None
) -> bool:
    """Whether ``law``, its constants refitted on the points ``part`` by least squares
    (from each of ``starts``, default its own constants; the lowest loss on ``part``),
    holds on every point to the noise of ``tolerance`` plus the variance of its
    prediction (the constants' covariance from those points, to first order)."""
    X, y, program, sd = problem.X, problem.y, law.skeleton.program, tolerance.sd
    X_part, y_part, weights = X[part], y[part], sd[part] ** -2.0
    refits = [least_squares_run(program, X_part, y_part, start, weights=weights) for start in starts or [law.constants]]
    refits = [values for values in refits if values is not None]
    if not refits:
        return False
    constants = min(refits, key=lambda values: mse(program, X_part, y_part, values, weights))
    predicted, jacobian = program.value_and_jacobian(X, constants)
    with np.errstate(all="ignore"):
        scaled = jacobian[part] / sd[part, None]
        if not np.all(np.isfinite(scaled)):
            return False
        # each constant's column of unit norm first: constants of far different scales
        # would leave the small singular values below the pseudo-inverse's cut
        norms = np.linalg.norm(scaled, axis=0)
        norms = np.where(norms > 0, norms, 1.0)
        covariance = np.linalg.pinv((scaled / norms).T @ (scaled / norms)) / np.outer(norms, norms)
    variance = np.einsum("ij,jk,ik->i", jacobian, covariance, jacobian)
    return tolerance.law_holds(y, predicted, mse(program, X, y, constants, problem.weights), problem.scale, variance)


def _term(exponent: np.ndarray, constant: bool, sign: int = 1) -> list[str]:
    """Tokens of a monomial times a constant, or without one (times ``sign``)."""
    powers = {j: int(power) for j, power in enumerate(exponent) if power}
    if constant:
        return ["mul", CONSTANT, *monomial_tokens(powers)] if powers else [CONSTANT]
    if not powers:
        return [str(sign)]
    return monomial_tokens(powers) if sign == 1 else ["mul", "-1", *monomial_tokens(powers)]


def _sum(terms: list[list[str]]) -> list[str]:
    tokens: list[str] = []
    for term in terms[:-1]:
        tokens += ["add", *term]
    return tokens + terms[-1]
