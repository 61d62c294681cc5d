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
from ..fitting.constants import Evaluations
from ..fitting.polynomial import count_monomials, monomials
from ..problem import Problem
from ..selection.held_out import held_out_folds
from ..settings import SearchSettings
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


# A held-out refit of a line of this many values (points times terms) counts as one of
# ``SearchSettings.plain_support_evaluations``; a larger one counts in proportion: the
# elimination's work is bounded whatever the data's size.
SUPPORT_VALUES_PER_EVALUATION = 4096


class HeldOutLines:
    """The held-out errors of lines over subsets of the features: each fold's normal
    equations over every feature and the constant, formed once, and solved for a subset
    (by least squares: collinear features are ordinary in measurements)."""

    def __init__(self, problem: Problem, folds: np.ndarray):
        root = np.ones(len(problem.y)) if problem.weights is None else np.sqrt(problem.weights)
        self.design = np.column_stack([problem.X, np.ones(len(problem.y))]) * root[:, None]
        self.target = problem.y * root
        self.tests = [folds == fold for fold in np.unique(folds)]
        self.normal = [
            (self.design[~test].T @ self.design[~test], self.design[~test].T @ self.target[~test])
            for test in self.tests
        ]

    def errors(self, features: list[int]) -> np.ndarray:
        """Each point's (weighted) squared error when the line over ``features`` is fitted
        on the other folds (the held-out choice's errors of that row)."""
        columns = [*features, self.design.shape[1] - 1]
        errors = np.empty(len(self.target))
        for test, (gram, moment) in zip(self.tests, self.normal):
            coefficients = np.linalg.lstsq(gram[np.ix_(columns, columns)], moment[columns], rcond=None)[0]
            errors[test] = (self.target[test] - self.design[np.ix_(test, columns)] @ coefficients) ** 2
        return errors


def backward_linear_candidate(
    problem: Problem, settings: SearchSettings, seed: int, deadline: Deadline | None = None, pace: float = 1.0
) -> Fitted:
    """``c*x_a + c*x_b + ... + c`` over the features left by backward elimination on
    held-out points (the held-out choice's folds, seeded with ``seed``): from every
    feature, the one whose removal errs least on held-out points is removed while that
    error exceeds the line's by at most ``SearchSettings.held_out_standard_errors``
    standard errors of their paired differences. Removing one at a time keeps the
    features that matter together (correlated measurements), which one test of each
    would drop at once. Once ``SearchSettings.plain_support_evaluations`` refits are
    spent (each charged by its size, :data:`SUPPORT_VALUES_PER_EVALUATION`) or the
    ``deadline`` passed, the features left stay; every feature's line where the time left
    does not hold forming the folds' normal equations (:data:`QUADRATIC_SECONDS_PER_VALUE`
    per value of the data, at the fit's ``pace``)."""
    kept = list(range(problem.X.shape[1]))
    n_folds = min(settings.held_out_folds, len(problem.y))
    values = len(problem.y) * (len(kept) + 1)
    if n_folds >= 2 and (deadline is None or deadline.holds(pace * QUADRATIC_SECONDS_PER_VALUE * values)):
        folds = held_out_folds(len(problem.y), n_folds, seed)
        charge = max(1.0, values / SUPPORT_VALUES_PER_EVALUATION)
        evaluations = Evaluations(settings.plain_support_evaluations / charge, deadline)
        lines = HeldOutLines(problem, folds)
        errors = lines.errors(kept)
        while kept and evaluations.left >= len(kept) and not evaluations.late:
            evaluations.take(len(kept))
            removals = [[j for j in kept if j != k] for k in kept]
            fewer_errors = [lines.errors(fewer) for fewer in removals]
            best = min(range(len(kept)), key=lambda r: float(np.mean(fewer_errors[r])))
            rise = fewer_errors[best] - errors
            if np.mean(rise) > settings.held_out_standard_errors * np.std(rise) / np.sqrt(len(rise)):
                break
            kept, errors = removals[best], fewer_errors[best]
    return Fitted(linear_skeleton(kept), *least_squares_line(problem, kept))


def plain_rows(
    rows: CandidateRows,
    problem: Problem,
    complexity_penalty: float,
    settings: SearchSettings,
    seed: int,
    deadline: Deadline | None = None,
    pace: float = 1.0,
) -> CandidateRows:
    """The linear candidates (origin ``"linear"``: its terms chosen forward; ``"backward"``:
    its features eliminated backward on held-out folds seeded with ``seed``,
    :func:`backward_linear_candidate`) and the quadratic one (``"polynomial"``) over the features of
    ``problem``, unless one of ``rows`` is exact or the ``deadline`` passed (closed-form
    least squares: milliseconds); the quadratic one only while the time left holds
    :data:`QUADRATIC_SECONDS_PER_VALUE` per value of its basis at the fit's ``pace``
    (:meth:`..budget.Budget.pace`)."""
    plain = CandidateRows()
    if any(problem.is_exact(loss) for loss in rows.losses) or (deadline is not None and deadline.passed()):
        return plain
    plain.add(linear_candidate(problem, complexity_penalty), origin="linear")
    plain.add(backward_linear_candidate(problem, settings, seed, deadline, pace), origin="backward")
    n_terms = sum(count_monomials(problem.X.shape[1], degree) for degree in (1, 2))
    if deadline is not None and not deadline.holds(pace * QUADRATIC_SECONDS_PER_VALUE * len(problem.y) * n_terms):
        return plain
    quadratic = quadratic_candidate(problem, complexity_penalty)
    if quadratic is not None:
        plain.add(quadratic, origin="polynomial")
    return plain
