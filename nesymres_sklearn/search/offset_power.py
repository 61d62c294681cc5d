"""Laws ``(a + c*m(x))**(1/p)``: a power of ``y`` that is a monomial plus a constant,
found exactly.

``sqrt(1 + c*m)`` (an orbit's eccentricity), ``1/sqrt(1 - c*m)`` or ``a + c*x**(3/2)`` are
no rational law of few terms where ``m`` has high or half powers of many features
(:mod:`.identities` reads monomials up to a small total degree), and no power law: where
``c*m`` is small ``y`` is about ``a**(1/p)``, where it is large a power law. But for the
right ``a``, ``log|y**p - a|`` is ``log|c*m|``, linear in the logarithms of the features.
So for each power ``p`` of ``POWERS``, ``a`` is searched on a grid on either side of the
values of ``z = y**p`` (``z - a`` keeps one sign; ``GRID_DECADES`` decades of ``z``'s
spread away from its nearest value, ``GRID_PER_DECADE`` per decade): each ``a``'s share
of ``log|z - a|`` that the features' logarithms leave unexplained is one least-squares
fit, on at most ``SEARCH_POINTS`` points spread over the data, those where ``z - a``
keeps its digits (``|z - a|`` at least ``DIGITS_KEPT`` of ``|z| + |a|``). The
``CANDIDATES`` best get ``a`` refined (a bounded scalar minimisation of that share);
where the slopes then lie within ``HALF_TOLERANCE`` of multiples of one half, ``a`` and
``c`` are fitted by least squares of ``z``'s relative errors and then of ``y``'s on every
point, and the law is found where it is exact to rounding there and within
``exactness.RELATIVE_FLOOR`` of every point. A law with ``a`` 0 to rounding is a power law,
which other readings give. The few hundred fits take milliseconds."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

from ..expression.monomial import monomial_tokens
from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT
from .budget import Deadline
from .exactness import RELATIVE_FLOOR
from .fitted import Fitted
from .offset_exponential import holding_law
from .problem import Problem

#: The powers ``p`` of ``y`` read: ``y`` itself, its square, and their inverses.
POWERS = (1, 2, -1, -2)
#: Points read by the search (spread over the data); the law is fitted and tested on all.
SEARCH_POINTS = 64
#: The grid of ``a``: from ``10**GRID_DECADES[0]`` to ``10**GRID_DECADES[1]`` times the spread
#: of ``z`` beyond its smallest (or largest) value, ``GRID_PER_DECADE`` steps per decade.
GRID_DECADES = (-14.0, 2.0)
GRID_PER_DECADE = 4
#: A point counts where ``|z - a|`` is at least this share of ``|z| + |a|`` (its digits kept).
DIGITS_KEPT = 1e-6
#: Readings whose ``a`` is refined, best first, where their share unexplained is below
#: ``MAX_GRID_UNEXPLAINED``.
CANDIDATES = 2
MAX_GRID_UNEXPLAINED = 0.05
#: How far (in halves) a refined slope may lie from a multiple of one half.
HALF_TOLERANCE = 1e-2


def offset_power_law(problem: Problem, deadline: Deadline | None = None) -> Fitted | None:
    """The law ``(a + c*m)**(1/p)`` exact to rounding on every point of ``problem``, or
    ``None`` (see the module docstring); ``None`` also where the ``deadline`` passes."""
    X, y = problem.X, problem.y
    columns = [j for j in range(X.shape[1]) if np.all(X[:, j])]
    if not columns or not np.all(np.isfinite(y)):
        return None
    read = np.unique(np.linspace(0, len(y) - 1, min(len(y), SEARCH_POINTS)).astype(int))
    with np.errstate(all="ignore"):
        logs = np.log(np.abs(X[np.ix_(read, columns)]))
    for power in POWERS:
        if deadline is not None and deadline.passed():
            return None
        if (power != 1 and not np.all(y)) or (power % 2 == 0 and np.any(y < 0) and np.any(y > 0)):
            continue  # no inverse of 0; an even power loses a sign that no monomial gives back
        with np.errstate(all="ignore"):
            z = y.astype(np.float64) ** power
        if not np.all(np.isfinite(z)) or np.ptp(z) == 0:
            continue
        for offset in _offsets(z[read], logs):
            law = _law(problem, columns, logs, read, z, power, offset, deadline)
            if law is not None:
                return law
    return None


def _share(z: np.ndarray, logs: np.ndarray, offset: float) -> tuple[float, np.ndarray | None]:
    """The share of ``log|z - offset|``'s variance that a least-squares line in ``logs``
    leaves unexplained on the points whose digits it keeps, and the line's slopes; inf
    (and None) where those points are too few or ``z - offset`` changes sign."""
    with np.errstate(all="ignore"):
        shifted = z - offset
        kept = np.abs(shifted) >= DIGITS_KEPT * (np.abs(z) + abs(offset))
    if kept.sum() < 2 * (logs.shape[1] + 2) or not (np.all(shifted[kept] > 0) or np.all(shifted[kept] < 0)):
        return np.inf, None
    target = np.log(np.abs(shifted[kept]))
    spread = float(np.sum((target - target.mean()) ** 2))
    design = np.column_stack([logs[kept], np.ones(int(kept.sum()))])
    solution, residual, rank, _ = np.linalg.lstsq(design, target, rcond=None)
    if spread == 0 or rank < design.shape[1] or not len(residual):
        return np.inf, None
    return float(residual[0] / spread), solution[:-1]


def _offsets(z: np.ndarray, logs: np.ndarray) -> list[float]:
    """The offsets ``a`` to try, best first: the grid's ``CANDIDATES`` best (below
    ``MAX_GRID_UNEXPLAINED``), each refined within a grid step."""
    spread = float(np.ptp(z))
    steps = np.linspace(*GRID_DECADES, int(round((GRID_DECADES[1] - GRID_DECADES[0]) * GRID_PER_DECADE)) + 1)
    # beyond the smallest value (a below every z) and beyond the largest (a above)
    edges = [(float(np.min(z)), -1.0, step) for step in steps] + [(float(np.max(z)), 1.0, step) for step in steps]
    offsets = np.array([edge + sign * spread * 10.0**step for edge, sign, step in edges])
    shares = _grid_shares(z, logs, offsets)
    order = [k for k in np.argsort(shares, kind="stable")[:CANDIDATES] if shares[k] <= MAX_GRID_UNEXPLAINED]
    refined = []
    half = 1.0 / GRID_PER_DECADE
    for k in order:
        edge, sign, step = edges[k]
        result = minimize_scalar(
            lambda t, edge=edge, sign=sign: _share(z, logs, edge + sign * spread * 10.0**t)[0],
            bounds=(step - half, step + half),
            method="bounded",
            options={"xatol": 1e-6},
        )
        refined.append((float(result.fun), edge + sign * spread * 10.0 ** float(result.x)))
    return [offset for _, offset in sorted(refined)]


def _grid_shares(z: np.ndarray, logs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`_share` of each of ``offsets`` (each beyond every value of ``z``), their
    least-squares lines solved at once (normal equations over the points each keeps)."""
    with np.errstate(all="ignore"):
        shifted = z[:, None] - offsets[None, :]
        kept = np.abs(shifted) >= DIGITS_KEPT * (np.abs(z)[:, None] + np.abs(offsets)[None, :])
        targets = np.where(kept, np.log(np.abs(shifted)), 0.0)
    design = np.column_stack([logs, np.ones(len(z))])
    counts = kept.sum(axis=0)
    enough = counts >= 2 * (design.shape[1] + 1)
    shares = np.full(len(offsets), np.inf)
    if not np.any(enough):
        return shares
    mask, targets, counts = kept[:, enough].astype(np.float64), targets[:, enough], counts[enough]
    gram = np.einsum("ni,nk,nj->kij", design, mask, design)
    moments = np.einsum("ni,nk->ki", design, targets)  # targets are 0 where not kept
    try:
        slopes = np.linalg.solve(gram, moments[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return shares
    with np.errstate(all="ignore"):
        residual = np.sum(mask * (targets - design @ slopes.T) ** 2, axis=0)
        means = targets.sum(axis=0) / counts
        total = np.sum(mask * (targets - means) ** 2, axis=0)
        shares[enough] = np.where(total > 0, residual / total, np.inf)
    return np.where(np.isfinite(shares), shares, np.inf)


def _law(
    problem: Problem,
    columns: list[int],
    logs: np.ndarray,
    read: np.ndarray,
    z: np.ndarray,
    power: int,
    offset: float,
    deadline: Deadline | None,
) -> Fitted | None:
    """The law of the offset ``a`` with the slopes rounded to halves, ``a`` and ``c``
    fitted on every point; ``None`` where a slope is no multiple of one half, ``a`` is 0
    to rounding or the law is not exact."""
    slopes = _share(z[read], logs, offset)[1]
    if slopes is None:
        return None
    halves = np.round(2 * slopes) / 2
    if not np.any(halves) or np.max(np.abs(slopes - halves)) > HALF_TOLERANCE / 2:
        return None
    exponents = {columns[i]: float(b) for i, b in enumerate(halves) if b}
    with np.errstate(all="ignore"):
        monomial = np.prod(problem.X[:, list(exponents)] ** np.array(list(exponents.values())), axis=1)
        design = np.column_stack([np.ones(len(z)), monomial]) / np.abs(z)[:, None]
        start = np.linalg.lstsq(design, np.sign(z), rcond=None)[0]  # z's relative errors
    if not np.all(np.isfinite(start)) or abs(start[0]) <= RELATIVE_FLOOR * np.max(np.abs(z)):
        return None  # a power law: other readings give it
    inner = ["add", CONSTANT, "mul", CONSTANT, *monomial_tokens(exponents)]
    root = inner if abs(power) == 1 else ["sqrt", *inner]
    tokens = root if power > 0 else ["div", "1", *root]
    return holding_law(problem, Skeleton(tuple(tokens)), start, deadline)
