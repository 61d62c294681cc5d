"""Laws to the noise: the identities' readings (:mod:`.identities`) under noise, the
law of the information criterion where none holds, the matching pursuit's law, and the
continuation's sources of each.

Under noise no identity is exact. Every reading of :mod:`.identities` is then searched
to the noise instead (a :class:`.exactness.Tolerance` of the estimated noise): each
point's row is divided by the noise of its ``t`` rather than scaled to unit norm, so
that the residuals are in units of the noise (on a target over decades, or over a
monomial, the points' noise differs by orders of magnitude, and on rows of unit norm the
noisiest points would let any vector pass); a system's null vector holds where its
residual is at most ``noise_ratio**2`` times the share of it that the noise of ``t``
makes (the smallest such ratio, a generalized eigenproblem: the monomials' own
near-dependencies leave residuals below the noise's that no noise explains); the pair's
law is fitted to ``t`` by the reweighted null vector and Gauss-Newton steps on the law's
own error, and its terms of the smallest shares are dropped while it holds (the null
vector's small entries are the noise's as much as the law's); the law holds where its
errors over the noise have a mean square of at most ``noise_ratio**2`` (a chi-square
test), refitted by least squares weighted by the noise, and beyond half of each feature,
where its constants' uncertainty adds to the noise. Small systems come first in every
reading, larger ones while a law of fewer constants may hold
(:func:`identities_to_the_noise`, the plan's first law under noise and a source of the
continuation, :class:`IdentityUnderNoise`); where none holds, :func:`noisy_identity`
fits the rational systems to the noise by the Bayesian information criterion, a
candidate where its misfit is the noise's (:func:`noisy_identity_rows`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from itertools import product
from typing import NamedTuple

import numpy as np

from ..expression.monomial import monomial_tokens
from ..expression.skeleton import Skeleton
from ..shared_setting import one_blas_thread
from .budget import Deadline
from .exactness import Tolerance
from .fitted import CandidateRows, Fitted, mse
from .fitting.constants import least_squares_run
from .identities import (
    angle_readings,
    holding,
    identity_rows,
    least_squares_monomial,
    power_law_monomial,
    turned_columns,
)
from .identity_systems import (
    Terms,
    basis_and_counts,
    degree_pairs,
    law_extrapolates,
    law_of,
    monomial_values,
    sign_carried,
    spread_points,
)
from .offset_exponential import LAW_CONSTANTS, offset_exponential_law
from .problem import Problem
from .pursuit import Dictionary, gauss_newton, law_residual, pursuit
from .settings import SearchSettings

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
    features, then with the columns that may be angles read by their cosine and sine (as
    :func:`noisy_angle_law` reads them), written back over the features: of a pursuit's
    laws of 1, 2, ... terms, the first that holds to the noise on every point
    (:func:`.identities.holding`) and beyond half of each feature
    (:func:`.identity_systems.law_extrapolates`) with at most
    ``settings.noisy_identity_readings_constants`` constants, as a row (origin
    ``"identity"``); no row otherwise. Each pursuit starts from each of the
    ``PURSUIT_STARTS`` monomials that lower the error most alone, and from the
    least-squares monomial (:func:`.identities.least_squares_monomial`) times the
    others: of their laws, the one of the fewest constants (then the lowest loss), while
    ``deadline`` holds. The first reading with a law gives it. On one BLAS thread."""
    found = CandidateRows()
    with one_blas_thread():
        law = _pursued_law(problem, noise, settings, deadline)
        if law is None:
            ones = np.ones(problem.X.shape[1])
            readings, _, differences = angle_readings(problem.X, ones, settings, (settings.identity_wide_turns,), False)
            for angles, replaced, difference in [*readings, *differences]:
                if law is not None or (deadline is not None and deadline.passed()):
                    break
                turned, _, written = turned_columns(problem, angles, replaced, difference)
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
    read = spread_points(len(problem.y))
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
            terms = Terms(step.numerator, step.denominator, root=False)
            law = law_of(problem, step.exponents, terms, step.coefficients, step.shares)
            law = None if law is None else holding(problem, law.skeleton, law.constants, tolerance, deadline)
            if (
                law is not None
                and law.skeleton.n_constants <= most
                and law_extrapolates(problem, law, tolerance, deadline)
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
    """The identity that holds to ``noise`` (:func:`.identities.identity_rows` with
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
    """:func:`noisy_identity` with the columns that may be angles
    (:func:`.identities.angle_columns`, as :func:`.identities.identity_rows` reads them)
    also read by their cosine and sine, then with those within one turn read by their
    cosine and sine alone, then with each pair of those by their difference's
    (:func:`.identities.angle_differences`), written back over the features: of these,
    the law of the lowest Bayesian information criterion while ``deadline`` holds;
    ``None`` without such a column or a fit."""
    settings = SearchSettings() if settings is None else settings
    ones = np.ones(problem.X.shape[1])
    readings, _, differences = angle_readings(problem.X, ones, settings, (settings.identity_wide_turns,), False)
    readings += differences
    best, best_score = None, np.inf
    for angles, replaced, difference in readings:
        if not angles or (deadline is not None and deadline.passed()):
            continue
        turned, sines, written = turned_columns(problem, angles, replaced, difference)
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
    ``±sqrt(P/Q)`` (where the features can carry ``y``'s sign,
    :func:`.identity_systems.sign_carried`); with ``"power"``, each of these times the
    monomial that ``y`` mostly is a power law of
    (:func:`.identities.power_law_monomial`, on the points of the largest ``|y|``,
    ``settings.noisy_power_quantile``), and times the monomial that fits ``y`` best by
    least squares (:func:`.identities.least_squares_monomial`), fitted to ``y`` over it;
    the columns in ``sines`` to a power of at most 1. Each form is :func:`_noisy_law`,
    in that order while ``deadline`` holds. A candidate, not a law: the selection weighs
    it against the other rows. ``None`` without a fit. ``settings`` (default
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
    """The :class:`_NoisySystem` of ``problem`` on the points that
    :func:`.identities.exact_identity` reads, at most ``NOISY_UNKNOWNS`` unknowns (the
    columns in ``sines`` to a power of at most 1); ``None`` where the monomials are not
    finite."""
    X, y = problem.X, problem.y
    read = spread_points(len(y))
    points = problem.at(read)
    unknowns = min(len(read) // overdetermined, NOISY_UNKNOWNS)
    exponents, counts = basis_and_counts(X.shape[1], unknowns, sines)
    pairs = sorted(degree_pairs(counts, unknowns), key=lambda pair: (counts[pair[0]] + counts[pair[1]], pair))
    with np.errstate(all="ignore"):
        basis = monomial_values(X, exponents)
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
    if root and not sign_carried(X, y):
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

    def fitted(terms: Terms, on: Problem, rows) -> tuple[float, Fitted | None, np.ndarray]:
        coefficients, shares = _rational_fit(basis[rows], t[rows], terms, spread[rows], polish)
        part = Problem(X[rows], over[rows], None if problem.weights is None else problem.weights[rows])
        law = None if coefficients is None else law_of(part, exponents, terms, coefficients, shares)
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
        terms = Terms(np.arange(counts[p]), np.arange(counts[q]), root=root)
        score, found, shares = fitted(terms, points, read)
        if score < best[0]:
            best = (score, found, shares, terms)
    score, found, shares, terms = best
    while found is not None and not passed():
        n_p = len(terms.numerator)
        order = np.argsort(shares, kind="stable")
        for m in _halving(len(order) - 2):
            dropped = order[:m]
            fewer = Terms(
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
    basis: np.ndarray, y: np.ndarray, terms: Terms, spread: np.ndarray | None = None, polish: int = 0
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
