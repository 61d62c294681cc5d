"""Rational laws under noise, one term at a time: a matching pursuit.

Under noise the identities' systems (:mod:`.identity_systems`) read a law from the null vector
of a matrix of monomials; with many monomials the noise has directions of its own, and
the closest null vector mixes the law's few terms with many others. This reader builds
``y = P/Q`` from few terms instead, each a Laurent monomial ``prod(x_j**e_j)`` (negative
exponents allowed, ``sum |e_j|`` bounded) with a constant, and ``Q = 1 + ...``:

1. the equation ``t = P - t (Q - 1)`` is linear in the constants; each step adds the
   monomial, to ``P`` or to ``Q``, whose column is most correlated with the equation's
   weighted residual beside the terms already chosen (orthogonal least squares);
2. the constants are those of weighted least squares, each point's equation divided by
   its noise times ``|Q|`` of the last round (Sanathanan and Koerner's iteration), which
   turns the equation's error into the law's; then Gauss-Newton steps on the law's own
   error;
3. it yields the law after each term, until the terms run out; the caller
   (:func:`.identities_under_noise.pursued_identity`) takes the first that holds to the
   noise and extrapolates beyond half of each feature.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .budget import Deadline
from .problem import Problem

#: Laurent monomials a pursuit chooses from, at most (the bound on ``sum |e_j|`` is the
#: largest that keeps them within this many).
PURSUIT_MONOMIALS = 2000
#: The largest ``sum |e_j|`` of a monomial of the pursuit.
PURSUIT_MAX_DEGREE = 6
#: The largest ``|e_j|`` of a monomial of the pursuit.
PURSUIT_MAX_POWER = 4
#: Rounds of reweighting (Sanathanan and Koerner's) of a pursuit's step.
REWEIGHTING_ROUNDS = 3
#: A column whose part outside the chosen columns' span is below this share of the
#: largest such part lies in that span.
SPAN_TOLERANCE = 1e-8


@lru_cache(maxsize=32)
def laurent_exponents(n_features: int, most: int = PURSUIT_MONOMIALS) -> np.ndarray:
    """The exponents (rows, read-only: computed once per size) of the Laurent monomials of
    ``n_features`` variables whose ``sum |e_j|`` is at most the largest bound that keeps
    them within ``most`` (at most ``PURSUIT_MAX_DEGREE``, each ``|e_j|`` at most
    ``PURSUIT_MAX_POWER``), the constant first and then by that sum."""
    rows = [np.zeros(n_features, dtype=np.int64)]
    for degree in range(1, PURSUIT_MAX_DEGREE + 1):
        layer = [e for e in _of_degree(n_features, degree) if max(abs(v) for v in e) <= PURSUIT_MAX_POWER]
        if len(rows) + len(layer) > most:
            break
        rows += [np.array(e, dtype=np.int64) for e in layer]
    exponents = np.array(rows).reshape(len(rows), n_features)
    exponents.flags.writeable = False
    return exponents


def _of_degree(n_features: int, degree: int) -> list[tuple[int, ...]]:
    """The integer vectors of ``n_features`` entries with ``sum |e_j| == degree``."""
    out: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], left: int) -> None:
        if len(prefix) == n_features - 1:
            out.extend({prefix + (left,), prefix + (-left,)})
            return
        for magnitude in range(left + 1):
            for value in {magnitude, -magnitude}:
                extend(prefix + (value,), left - magnitude)

    if n_features == 0:
        return []
    extend((), degree)
    return sorted(out)


def laurent_values(X: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """The monomials of ``exponents`` (rows) at the points ``X``, one column each (a
    negative power of a zero is huge or ``inf``): ``exp(e log|x|)`` with the sign of the
    odd powers of the negative ``x``, a matrix product instead of a power per entry."""
    with np.errstate(all="ignore"):
        logs = np.log(np.maximum(np.abs(X), np.finfo(np.float64).tiny))
        odd = (np.remainder(exponents, 2) == 1).astype(np.float64)
        signs = 1.0 - 2.0 * np.remainder((X < 0).astype(np.float64) @ odd.T, 2)
        return signs * np.exp(logs @ exponents.T.astype(np.float64))


class Dictionary(NamedTuple):
    """The Laurent monomials of a pursuit (:func:`laurent_exponents`) and their values at
    the points, computed once for all its starts."""

    exponents: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray) -> Dictionary:
        exponents = laurent_exponents(X.shape[1])
        return cls(exponents, laurent_values(X, exponents))


class Step(NamedTuple):
    """A pursuit's law after one more term: the monomials' ``exponents`` (rows), the
    indices of ``P``'s and of ``Q``'s (``Q``'s constant first), their constants (``Q``'s
    first 1), the terms' shares, and the mean square of the law's error over the noise."""

    exponents: np.ndarray
    numerator: np.ndarray
    denominator: np.ndarray
    coefficients: np.ndarray
    shares: np.ndarray
    error: float


def pursuit(
    problem: Problem,
    sd: np.ndarray,
    most_terms: int,
    polish: int,
    deadline: Deadline | None = None,
    lead: np.ndarray | None = None,
    first: int = 0,
    dictionary: Dictionary | None = None,
) -> Iterator[Step]:
    """The laws ``P/Q`` of 1, 2, ... terms beside ``Q``'s 1 (at most ``most_terms`` in
    all) that the pursuit (module docstring) builds on ``problem``, the noise of each
    point ``sd``, ``polish`` Gauss-Newton steps each; ``P``'s monomials are the ``lead``
    monomial's exponents (none: 1) times the Laurent monomials, the lead itself the first
    term (without a lead, the monomial of the ``first``-ranked gain, 0 the largest: a law
    ``P/Q`` has as many first terms as ``Q`` has normalisations). ``dictionary``: the
    Laurent monomials at ``problem``'s points (default: computed here). It ends where a
    law is not finite or ``deadline`` passes."""
    X, t = problem.X, problem.y
    small, own = Dictionary.of(X) if dictionary is None else dictionary
    if lead is None:
        shifted, times = small, own
    else:
        lead = np.asarray(lead, dtype=np.int64)
        shifted, times = small + lead, own * laurent_values(X, lead[None])
    exponents = np.vstack([shifted, small])  # P's monomials, then Q's
    values = np.hstack([times, own])
    m = len(small)
    with np.errstate(all="ignore"):
        design = np.hstack([values[:, :m], -t[:, None] * values[:, m:]])  # P's columns, then -t times Q's
    usable = np.all(np.isfinite(design), axis=0)
    if not usable[m] or not np.all(np.isfinite(t)):
        return
    taken = ~usable
    taken[m] = True  # Q's constant, fixed at 1
    numerator: list[int] = []
    denominator: list[int] = []
    q, equation = np.ones(len(t)), t.copy()  # Q at the points, and the equation's error t Q - P
    while len(numerator) + len(denominator) < most_terms - 1:
        if deadline is not None and deadline.passed():
            return
        weights = 1.0 / (sd * np.abs(q))
        gains = _gains(design * weights[:, None], equation * weights, numerator + denominator)
        gains[taken] = -1.0
        if not numerator:  # P/Q is 0 without a term of P; a lead comes first
            gains[m:] = -1.0
        if numerator:
            pick = int(np.argmax(gains))
        else:
            pick = 0 if lead is not None else int(np.argsort(-gains, kind="stable")[first])
        if gains[pick] <= 0:
            return
        taken[pick] = True
        (numerator if pick < m else denominator).append(pick)
        top, bottom = values[:, numerator], values[:, [m, *denominator]]
        coefficients = _weighted_fit(top, bottom[:, 1:], t, sd, REWEIGHTING_ROUNDS)
        if coefficients is None:
            return
        coefficients = gauss_newton(top, bottom, t, coefficients, 1.0 / sd, polish)
        error, _, p, q = law_residual(top, bottom, t, coefficients, 1.0 / sd)
        if not np.isfinite(error) or not np.all(np.isfinite(q)) or np.any(q == 0):
            return
        equation = t * q - p
        shares = np.abs(coefficients) * np.linalg.norm(np.hstack([top, bottom]), axis=0)
        yield Step(
            exponents,
            np.array(numerator),
            np.array([m, *denominator]),
            coefficients,
            shares / np.linalg.norm(shares),
            error / len(t),
        )


def _gains(columns: np.ndarray, residual: np.ndarray, chosen: list[int]) -> np.ndarray:
    """How much each of ``columns`` would lower the sum of squares of ``residual`` beside
    the ``chosen`` ones (orthogonal least squares: each column and the residual with the
    chosen columns' span taken out, the squared correlation of what is left); ``-1``
    where a column is not finite or lies in that span."""
    with np.errstate(all="ignore"):
        finite = np.all(np.isfinite(columns), axis=0)
        columns = np.where(finite, columns, 0.0)
        if chosen:
            basis = np.linalg.qr(columns[:, chosen])[0]
            columns = columns - basis @ (basis.T @ columns)
            residual = residual - basis @ (basis.T @ residual)
        norms = np.linalg.norm(columns, axis=0)
        gains = (columns.T @ residual) ** 2 / norms**2
    return np.where(finite & (norms > SPAN_TOLERANCE * np.max(norms, initial=0.0)) & np.isfinite(gains), gains, -1.0)


def _weighted_fit(top: np.ndarray, others: np.ndarray, t: np.ndarray, sd: np.ndarray, rounds: int) -> np.ndarray | None:
    """The constants of ``P``'s monomials ``top`` and then of ``Q``'s (its 1 first, then
    ``others``) that fit ``t = P/Q`` by ``rounds`` of weighted least squares on
    ``t = P - t (Q - 1)``, each point's equation divided by its noise times the last
    round's ``|Q|``; ``None`` where not finite."""
    matrix = np.hstack([top, -t[:, None] * others])
    q = np.ones(len(t))
    solution = None
    for _ in range(rounds):
        weights = 1.0 / (sd * np.abs(q))
        scaled = matrix * weights[:, None]
        norms = np.linalg.norm(scaled, axis=0)
        norms = np.where(norms > 0, norms, 1.0)
        solution = np.linalg.lstsq(scaled / norms, t * weights, rcond=None)[0] / norms
        q = 1.0 + others @ solution[top.shape[1] :]
        if not np.all(np.isfinite(q)) or np.any(q == 0):
            break
    if solution is None or not np.all(np.isfinite(solution)):
        return None
    return np.concatenate([solution[: top.shape[1]], [1.0], solution[top.shape[1] :]])


def law_residual(
    numerator: np.ndarray, denominator: np.ndarray, y: np.ndarray, coefficients: np.ndarray, scale: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The sum of squares of the law's error ``(y - P/Q) * scale`` (inf where not
    finite), the error, and ``P`` and ``Q`` at the points."""
    n_p = numerator.shape[1]
    with np.errstate(all="ignore"):
        p, q = numerator @ coefficients[:n_p], denominator @ coefficients[n_p:]
        error = (y - p / q) * scale
        total = float(error @ error)
    return (total if np.isfinite(total) else np.inf), error, p, q


def gauss_newton(
    numerator: np.ndarray,
    denominator: np.ndarray,
    y: np.ndarray,
    coefficients: np.ndarray,
    scale: np.ndarray,
    rounds: int,
) -> np.ndarray:
    """``coefficients`` of ``P/Q`` after at most ``rounds`` Gauss-Newton steps on the
    law's own error ``(y - P/Q) * scale`` (the null vector minimises the equation's
    error, which the noise in ``y * Q`` biases), each kept while it lowers that error."""
    cost, r, p, q = law_residual(numerator, denominator, y, coefficients, scale)
    for _ in range(rounds):
        with np.errstate(all="ignore"):
            jacobian = np.hstack([numerator / q[:, None], -(p / q**2)[:, None] * denominator]) * scale[:, None]
            norms = np.linalg.norm(jacobian, axis=0)
            norms = np.where(norms > 0, norms, 1.0)
        if not (np.isfinite(cost) and np.all(np.isfinite(jacobian))):
            break
        step = np.linalg.lstsq(jacobian / norms, r, rcond=None)[0] / norms
        trial = law_residual(numerator, denominator, y, coefficients + step, scale)
        if not trial[0] < cost:
            break
        coefficients = coefficients + step
        cost, r, p, q = trial
    return coefficients
