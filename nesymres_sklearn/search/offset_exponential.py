"""Laws ``c*m(x) * (exp(k*n(x)) ± 1)**±1``: a monomial times the exponential of another
minus or plus one, or over it, found exactly.

Planck's and Bose-Einstein's ``m/(exp(n) - 1)``, Fermi-Dirac's ``m/(exp(n) + 1)`` and the
diode's ``m*(exp(n) - 1)`` are neither rational laws (:mod:`.identities`) nor a monomial
times an exponential (:func:`.identities.exponential_identity`): where ``n`` is small the
law is ``m/n``, where it is large ``m*exp(-n)``, so no one reading of the points holds.
But for the right ``n`` and scale ``k``, ``log|y| ∓ log|exp(k*n) ± 1|`` is ``log|c*m|``,
linear in the logarithms of the features. So each monomial ``n`` of exponents -1, 0 and 1
over the features that are nowhere 0 (at most ``MAX_FEATURES`` of them; signs kept) is
tried, with a grid of scales ``k`` (``SCALES_PER_DECADE`` per decade, where the median of
``|k*n|`` spans ``SCALE_DECADES``), both signs of ``k``, of the offset and of the power:
each reading's share of ``log|y|`` that the features' logarithms leave unexplained is one
projection, on at most ``SEARCH_POINTS`` points spread over the data. The ``CANDIDATES``
best readings get their scale refined (a bounded scalar minimisation of that share in
``log|k|``); where the share is then at most rounding's, the exponents of ``m`` are
rounded to halves, and ``c`` and ``k`` fitted by least squares of the relative errors on
every point; a law is found where it is exact to rounding there and within
``exactness.RELATIVE_FLOOR`` of every point (data over decades: a law exact to rounding
on the sum of squares may miss the small values). The few thousand readings take
tens of milliseconds; the search checks its deadline between monomials. Under noise (a
:class:`.exactness.Tolerance` of it) the same readings count to the noise."""

from __future__ import annotations

from itertools import product

import numpy as np
from scipy.optimize import minimize_scalar

from ..expression.monomial import monomial_tokens
from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT
from .budget import Deadline
from .exactness import EXACT, RELATIVE_FLOOR, Tolerance, worst_relative_error
from .fitted import Fitted, mse
from .fitting.constants import least_squares_run
from .problem import Problem

#: Features (nowhere 0) over which the monomials ``m`` and ``n`` range: ``3**6 - 1``
#: monomials ``n`` at most.
MAX_FEATURES = 6
#: Points read by the search (spread over the data); the law is fitted and tested on all.
SEARCH_POINTS = 64
#: Scales ``k`` per decade of the grid, and the decades of the median ``|k*n|`` it spans.
SCALES_PER_DECADE = 8
SCALE_DECADES = (-2.0, 2.0)
#: Monomials whose readings are computed at once (between deadline checks).
MONOMIALS_AT_ONCE = 64
#: Under noise, the readings are made where ``|y|`` is at least this many times the noise.
LOG_NOISE = 10.0
#: Readings whose scale is refined, best first, where the share of ``log|y|`` they leave
#: unexplained at the grid's scale is below ``MAX_GRID_UNEXPLAINED``; a refined reading's law
#: is fitted where its share is below ``MAX_UNEXPLAINED``.
CANDIDATES = 32
MAX_GRID_UNEXPLAINED = 0.05
MAX_UNEXPLAINED = 1e-8
#: How far (in halves) an exponent of ``m`` may lie from a multiple of one half.
HALF_TOLERANCE = 1e-3
#: The law's constants: ``c`` and ``k``.
LAW_CONSTANTS = 2


def offset_exponential_law(
    problem: Problem, deadline: Deadline | None = None, tolerance: Tolerance = EXACT
) -> Fitted | None:
    """The law ``c*m*(exp(k*n) + s)**p`` (``s`` and ``p`` each -1 or 1) exact to rounding
    on every point of ``problem``, or ``None`` (see the module docstring); ``None`` also
    where ``y`` is 0 somewhere, or where the ``deadline`` passes. With a ``tolerance`` to
    the noise, the readings are made on the points where ``|y|`` is at least
    ``LOG_NOISE`` times the noise (``log|y|``'s noise is then about ``sd/|y|``), a refined
    reading counts where its share unexplained is at most ``tolerance.ratio**2`` times
    that noise's share, and its law, fitted with the noise's weights, where it holds to
    the noise (:meth:`.exactness.Tolerance.law_holds`); of those that hold, the one of the
    lowest loss (another monomial ``m`` with the other offset may hold to the noise too)."""
    X, y = problem.X, problem.y
    columns = [j for j in range(X.shape[1]) if np.all(X[:, j])]
    if not np.all(y) or not 1 <= len(columns) <= MAX_FEATURES:
        return None
    usable = np.arange(len(y)) if tolerance.exact else np.flatnonzero(np.abs(y) >= LOG_NOISE * tolerance.sd)
    if len(usable) < 2 * (len(columns) + 3):
        return None
    read = usable[np.unique(np.linspace(0, len(usable) - 1, min(len(usable), SEARCH_POINTS)).astype(int))]
    features = X[np.ix_(read, columns)]
    with np.errstate(all="ignore"):
        logs = np.log(np.abs(features))
        log_y = np.log(np.abs(y[read]))
    design = np.column_stack([logs, np.ones(len(read))])
    if not (np.all(np.isfinite(design)) and np.all(np.isfinite(log_y))):
        return None
    basis = np.linalg.qr(design)[0]
    logs_y = _Logs(log_y, basis)
    most = MAX_UNEXPLAINED
    if not tolerance.exact:  # the share of log|y|'s sum of squares that its noise makes
        noise_share = np.sum(tolerance.at(read).of_log(y[read]).sd ** 2) / logs_y.total
        most = max(most, tolerance.ratio**2 * float(noise_share))
    monomials = [exponents for exponents in product((-1, 0, 1), repeat=len(columns)) if any(exponents)]
    readings = []
    for start in range(0, len(monomials), MONOMIALS_AT_ONCE):
        if deadline is not None and deadline.passed():
            return None
        readings += _readings(features, logs_y, monomials[start : start + MONOMIALS_AT_ONCE])
    readings.sort(key=lambda reading: reading[0])
    refined = []
    for share, exponents, scale, offset, power in readings[:CANDIDATES]:
        if share > max(MAX_GRID_UNEXPLAINED, most) or (deadline is not None and deadline.passed()):
            break
        n = _monomial(features, exponents)
        scale = _refined(n, logs_y, scale, offset, power)
        share = logs_y.share(_taken_out(log_y, n, scale, offset, power))
        refined.append((share, n, exponents, scale, offset, power))
    best = None  # exact: the first law that holds; to the noise, the one of the lowest loss
    for share, n, exponents, scale, offset, power in sorted(refined, key=lambda reading: reading[0]):
        if share > most or (deadline is not None and deadline.passed()):
            break
        law = _law(problem, columns, design, log_y, n, exponents, scale, offset, power, deadline, tolerance)
        if law is not None and tolerance.exact:
            return law
        if law is not None and (best is None or law.loss < best.loss):
            best = law
    return best


def _monomial(features: np.ndarray, exponents: tuple) -> np.ndarray:
    """The values of the monomial of integer ``exponents`` over the columns of ``features``, signs kept."""
    with np.errstate(all="ignore"):
        return np.prod(features ** np.array(exponents, dtype=float), axis=1)


class _Logs:
    """``log|y|`` on the points read (``values``), its residual off the features' logarithms (``basis``,
    orthonormal, the constant among them) and its sum of squares about its mean (``total``),
    computed once for every reading."""

    def __init__(self, log_y: np.ndarray, basis: np.ndarray):
        self.values, self.basis = log_y, basis
        self.residual = log_y - basis @ (basis.T @ log_y)
        self.total = float(np.sum((log_y - log_y.mean()) ** 2))

    def share(self, z: np.ndarray) -> float:
        """The sum of squares of ``z`` that the features' logarithms leave unexplained, as a
        share of ``total`` (``z`` may be constant: ``m`` a constant); inf where not finite."""
        with np.errstate(all="ignore"):
            share = float(np.sum((z - self.basis @ (self.basis.T @ z)) ** 2) / self.total)
        return share if np.isfinite(share) else np.inf


def _taken_out(log_y: np.ndarray, n: np.ndarray, scale: float, offset: int, power: int) -> np.ndarray:
    """``log|y| - power*log|exp(scale*n) + offset|``: ``log|c*m|`` for the reading of the law."""
    with np.errstate(all="ignore"):
        return log_y - power * np.log(np.abs(np.exp(scale * n) + offset))


def _readings(features: np.ndarray, logs_y: _Logs, monomials: list[tuple]) -> list[tuple]:
    """``(share unexplained, exponents, scale, offset, power)`` of the best grid scale of
    each sign of the scale, the offset and the power, for each monomial of ``monomials``.
    Projections are linear: the residual of ``log|y| - p*L`` is ``r_y - p*r_L``, so each
    ``L = log|exp(k*n) + s|`` is projected once for both powers."""
    low, high = SCALE_DECADES
    decades = np.linspace(low, high, int(round((high - low) * SCALES_PER_DECADE)) + 1)
    values = np.column_stack([_monomial(features, exponents) for exponents in monomials])
    scales = 10.0 ** decades[None, :] / np.median(np.abs(values), axis=0)[:, None]
    r_y, basis, points = logs_y.residual, logs_y.basis, len(logs_y.residual)
    found = []
    for sign in (1, -1):
        with np.errstate(all="ignore"):
            grown = np.exp(sign * values[:, :, None] * scales[None, :, :]).reshape(points, -1)
        for offset in (1, -1):
            with np.errstate(all="ignore"):
                logged = np.log(np.abs(grown + offset))
                residual = logged - basis @ (basis.T @ logged)
                cross, square = r_y @ residual, np.sum(residual**2, axis=0)
            for power in (1, -1):
                with np.errstate(all="ignore"):
                    shares = (r_y @ r_y - 2 * power * cross + square) / logs_y.total
                shares = np.where(np.isfinite(shares), np.maximum(shares, 0.0), np.inf).reshape(len(monomials), -1)
                best = np.argmin(shares, axis=1)
                for m, exponents in enumerate(monomials):
                    scale = sign * float(scales[m, best[m]])
                    found.append((float(shares[m, best[m]]), exponents, scale, offset, power))
    return found


def _refined(n: np.ndarray, logs_y: _Logs, scale: float, offset: int, power: int) -> float:
    """``scale`` moved within a grid step (in ``log|k|``) to where the reading's share
    unexplained is least."""
    sign, centre, step = np.sign(scale), np.log10(abs(scale)), 1.0 / SCALES_PER_DECADE
    result = minimize_scalar(
        lambda t: logs_y.share(_taken_out(logs_y.values, n, sign * 10.0**t, offset, power)),
        bounds=(centre - step, centre + step),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(sign * 10.0**result.x)


def _law(
    problem: Problem,
    columns: list[int],
    design: np.ndarray,
    log_y: np.ndarray,
    n: np.ndarray,
    exponents: tuple,
    scale: float,
    offset: int,
    power: int,
    deadline: Deadline | None,
    tolerance: Tolerance,
) -> Fitted | None:
    """The reading's law with the exponents of ``m`` rounded to halves, ``c`` and ``k``
    fitted on every point; ``None`` where an exponent is no multiple of one half (exact to
    rounding) or the law does not hold to ``tolerance``."""
    solution = np.linalg.lstsq(design, _taken_out(log_y, n, scale, offset, power), rcond=None)[0]
    halves = np.round(2 * solution[:-1]) / 2
    if tolerance.exact and np.max(np.abs(solution[:-1] - halves)) > HALF_TOLERANCE:
        return None
    outer = {columns[i]: float(b) for i, b in enumerate(halves) if b}
    inner = monomial_tokens({columns[i]: b for i, b in enumerate(exponents) if b})
    shifted = ["add", "exp", "mul", CONSTANT, *inner, str(offset)]
    factor = ["mul", CONSTANT, *monomial_tokens(outer)] if outer else [CONSTANT]
    tokens = ["div", *factor, *shifted] if power < 0 else ["mul", *factor, *shifted]
    skeleton = Skeleton(tuple(tokens))
    with np.errstate(all="ignore"):  # the sign of ``c``: that of ``y`` over the law with ``c = 1``
        sign = np.sign(problem.y[0] / skeleton.program(problem.X[:1], np.array([1.0, scale]))[0])
    if not np.isfinite(sign) or sign == 0:
        return None
    start = np.array([sign * np.exp(solution[-1]), scale])
    return holding_law(problem, skeleton, start, deadline, tolerance)


def holding_law(
    problem: Problem,
    skeleton: Skeleton,
    start: np.ndarray,
    deadline: Deadline | None = None,
    tolerance: Tolerance = EXACT,
) -> Fitted | None:
    """``skeleton``'s constants fitted by least squares from ``start``, where the law then
    holds: exact to rounding and within ``RELATIVE_FLOOR`` of every point (``tolerance``
    exact; every point's relative error weighs alike, where ``y`` has no 0), or to the
    noise (the noise's weights); else ``None``."""
    if not tolerance.exact:
        spread = tolerance.sd * np.ones(len(problem.y))
    elif np.all(problem.y):
        spread = np.abs(problem.y)
    else:
        spread = None
    weights = None if spread is None else spread**-2.0 / np.mean(spread**-2.0)
    constants = least_squares_run(skeleton.program, problem.X, problem.y, start, deadline=deadline, weights=weights)
    if constants is None:
        return None
    with np.errstate(all="ignore"):
        predicted = skeleton.program(problem.X, constants)
    loss = mse(skeleton.program, problem.X, problem.y, constants, problem.weights)
    if tolerance.exact:
        holds = worst_relative_error(predicted, problem.y) <= RELATIVE_FLOOR and problem.is_exact_to_rounding(loss)
    else:
        holds = tolerance.law_holds(problem.y, predicted, loss, problem.scale)
    return Fitted(skeleton, constants, loss) if holds else None
