"""The plain models that compete whenever no candidate is exact: the linear one and a
quadratic polynomial over all the features, their terms chosen forward
(:func:`.features.forward_terms`) while they pay for their tokens in the selection's
score. On data that hold no exact law (measurements, black-box data) they are what a
user compares the equation with; the selection's held-out folds (:mod:`..selection.held_out`)
decide between them and the other rows."""

from __future__ import annotations

import itertools

import numpy as np

from ...expression.monomial import monomial_tokens
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..budget import Deadline
from ..fitted import CandidateRows, Fitted
from ..fitting.polynomial import count_monomials, monomials
from ..problem import Problem
from .features import forward_terms, least_squares_line, linear_candidate, linear_skeleton


def _below(exponents: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The monomial of ``exponents`` and every one it divides (the constant left out)."""
    ranges = [range(power + 1) for power in exponents]
    return [e for e in itertools.product(*ranges) if any(e)]


# With max_time, the quadratic candidate is fitted only where the time left holds this
# per value of its basis (points times monomials), at the fit's pace: its forward choice
# of terms took 51 ns per value of CPU time on 10,000 points of 20 features (118 ms), up
# to 130 ns on fewer terms, on the 2-core development machine.
QUADRATIC_SECONDS_PER_VALUE = 1e-7


def _monomials(X: np.ndarray, terms: list[tuple[int, ...]]) -> np.ndarray:
    """The monomials ``terms`` (exponents of degree at most 2) at the points ``X``, one
    column each, as ``np.prod(X ** exponents, axis=1)`` has them bit for bit: the powers
    of every column computed once as that expression computes them (a power 0 is exactly
    1, and a product of at most two other factors is the same in any order)."""
    powers = {p: X ** np.full(X.shape[1], p) for p in {p for e in terms for p in e if p}}
    columns = []
    for exponents in terms:
        column = np.ones(len(X))
        for j, p in enumerate(exponents):
            if p:
                column = column * powers[p][:, j]
        columns.append(column)
    return np.column_stack(columns) if columns else np.empty((len(X), 0))


def quadratic_candidate(problem: Problem, complexity_penalty: float) -> Fitted | None:
    """``c*m_1 + c*m_2 + ... + c`` over monomials of the features of degree 1 and 2:
    terms chosen forward among the monomials of the features less their (weighted)
    means (``(x_1 - m_1)**2`` is one term, which no single monomial of the raw features
    is), then fitted by (weighted) least squares on the raw monomials that their
    expansion holds; ``None`` when it is not finite."""
    terms = monomials(problem.X.shape[1], 2)
    centered = problem.X - np.average(problem.X, axis=0, weights=problem.weights)
    with np.errstate(all="ignore"):
        basis = _monomials(centered, terms)
    if not np.all(np.isfinite(basis)):
        return None
    written = {e: monomial_tokens({j: power for j, power in enumerate(e) if power}) for e in terms}
    costs = np.array([3 + len(written[e]) for e in terms])
    chosen = forward_terms(problem, basis, costs, complexity_penalty)
    kept = sorted({e for k in chosen for e in _below(terms[k])}, key=terms.index)
    with np.errstate(all="ignore"):
        raw = np.column_stack([_monomials(problem.X, kept), np.ones(len(problem.y))])
    root = np.ones(len(problem.y)) if problem.weights is None else np.sqrt(problem.weights)
    norms = np.linalg.norm(raw * root[:, None], axis=0)
    norms[norms == 0] = 1.0
    coefficients = np.linalg.lstsq(raw * root[:, None] / norms, problem.y * root, rcond=None)[0] / norms
    loss = float(np.average((raw @ coefficients - problem.y) ** 2, weights=problem.weights))
    tokens: list[str] = []
    for e in kept:
        tokens += ["add", "mul", CONSTANT, *written[e]]
    return Fitted(Skeleton((*tokens, CONSTANT)), coefficients, loss) if np.isfinite(loss) else None


def plain_rows(
    rows: CandidateRows,
    problem: Problem,
    complexity_penalty: float,
    deadline: Deadline | None = None,
    pace: float = 1.0,
) -> CandidateRows:
    """The linear candidates (origin ``"linear"``: its terms chosen forward, and every
    feature's) and the quadratic one (``"polynomial"``) over the features of
    ``problem``, unless one of ``rows`` is exact or the ``deadline`` passed (closed-form
    least squares: milliseconds); the quadratic one only while the time left holds
    :data:`QUADRATIC_SECONDS_PER_VALUE` per value of its basis at the fit's ``pace``
    (:meth:`..budget.Budget.pace`)."""
    plain = CandidateRows()
    if any(problem.is_exact(loss) for loss in rows.losses) or (deadline is not None and deadline.passed()):
        return plain
    plain.add(linear_candidate(problem, complexity_penalty), origin="linear")
    every = list(range(problem.X.shape[1]))
    plain.add(Fitted(linear_skeleton(every), *least_squares_line(problem, every)), origin="linear")
    n_terms = sum(count_monomials(problem.X.shape[1], degree) for degree in (1, 2))
    if deadline is not None and not deadline.holds(pace * QUADRATIC_SECONDS_PER_VALUE * len(problem.y) * n_terms):
        return plain
    quadratic = quadratic_candidate(problem, complexity_penalty)
    if quadratic is not None:
        plain.add(quadratic, origin="polynomial")
    return plain
