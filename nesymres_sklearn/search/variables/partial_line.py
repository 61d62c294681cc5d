"""Laws linear in all but a few features: ``y = g(x_S) + c*x_a + c*x_b + ... + c``.

A law such as ``x0 + 9*x2 - 1.4*x3 + sqrt(x4 + cos(x1))`` has more features than the
network reads, and its residual after a line over every feature is
``sqrt(x4 + cos(x1))`` less that line's share of it, which the network does not write.
But the features outside ``S = {x1, x4}`` enter as a line: in the partially linear model
``y = s(x_S) + line(x_rest)`` (Robinson, *Econometrica* 1988), with ``s`` a polynomial of
``S`` (:data:`..fitting.polynomial.MAX_DEGREE` by its size), the line's slopes come out
right, and ``y`` less that line is ``g(x_S)`` plus a constant: a problem of ``S``'s
features alone, which the network reads.

The subsets of at most the network's variables, drawn from the most relevant features,
are ranked by the held-out error of their partially linear model (the selection's folds,
:func:`..selection.held_out.held_out_folds`, on at most :data:`RANKING_POINTS` points);
only those below the line over every feature by more than
``SearchSettings.held_out_standard_errors`` standard errors of the paired differences
are kept (as the backward line drops a feature). A kept subset's fits ``g``
(:func:`.assembly.kept_fits`) give the candidates ``g + line + c`` over all features,
their constants refitted on ``y`` from ``g``'s and the line's
(:class:`nesymres_sklearn.neural_search.PartialLineLook`, a source of the continuation).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..budget import Deadline
from ..fitted import Fitted
from ..fitting.constants import StartRunner
from ..fitting.polynomial import MAX_DEGREE, monomials
from ..problem import Problem
from ..selection.held_out import held_out_folds
from .assembly import kept_fits, refitted
from .features import on_features, sum_skeleton

#: Points that rank the subsets at most (drawn at random, seeded): each subset's
#: model is a least-squares fit per fold, so larger data would only add time.
RANKING_POINTS = 512


@dataclass(frozen=True)
class PartialLine:
    """A subset ``S`` of the features (``subset``) and the ``rest``, with the ``slopes`` of
    the rest's line in the partially linear model fitted on every point (:meth:`of`)."""

    subset: np.ndarray
    rest: np.ndarray
    slopes: np.ndarray

    @classmethod
    def of(cls, problem: Problem, subset: tuple[int, ...]) -> PartialLine | None:
        """The partially linear model of ``subset`` fitted on every point of ``problem``;
        ``None`` where its columns are not finite."""
        rest = [j for j in range(problem.X.shape[1]) if j not in subset]
        root = np.ones(len(problem.y)) if problem.weights is None else np.sqrt(problem.weights)
        with np.errstate(all="ignore"):
            design = _design(problem.X, subset, rest) * root[:, None]
        if not np.all(np.isfinite(design)):
            return None
        coefficients = np.linalg.lstsq(design, problem.y * root, rcond=None)[0]
        return cls(np.array(subset), np.array(rest), coefficients[-1 - len(rest) : -1])

    def part(self, problem: Problem) -> Problem:
        """``y`` less the rest's line, over the subset's features."""
        return Problem(problem.X[:, self.subset], problem.y - problem.X[:, self.rest] @ self.slopes, problem.weights)

    def candidates(
        self,
        fits: list[Fitted],
        problem: Problem,
        penalty: float,
        deadline: Deadline | None = None,
        runner: StartRunner | None = None,
    ) -> list[Fitted]:
        """``g + line + c`` over all features for the kept ``fits`` ``g`` of :meth:`part`,
        refitted on ``problem``."""
        line = (sum_skeleton(self.rest.tolist()), self.slopes)
        return [
            refitted("add", [(on_features(g, self.subset), constants), line], problem, deadline, runner)
            for g, constants, _ in kept_fits(fits, self.part(problem), penalty)
        ]


def _design(X: np.ndarray, subset: tuple[int, ...], rest: list[int]) -> np.ndarray:
    """The columns of the partially linear model: the monomials of the subset's
    standardised features (and each one's powers up to the degree of one feature's),
    the rest's features, a constant."""
    part = X[:, list(subset)]
    spread = part.std(axis=0)
    part = (part - part.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    size = len(subset)
    joint = monomials(size, MAX_DEGREE[size])
    alone = [tuple(p if k == j else 0 for k in range(size)) for j in range(size) for p in range(1, MAX_DEGREE[1] + 1)]
    exponents = np.array(joint + [power for power in alone if power not in joint], dtype=np.float64)
    powers = np.prod(part[:, None, :] ** exponents[None, :, :], axis=2)
    return np.column_stack([powers, X[:, rest], np.ones(len(X))])


def _held_out_errors(design: np.ndarray, y: np.ndarray, root: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Each point's (weighted) squared error of the least-squares fit of ``y`` on
    ``design`` on the other folds; inf where the columns are not finite."""
    if not np.all(np.isfinite(design)):
        return np.full(len(y), np.inf)
    errors = np.empty(len(y))
    for fold in np.unique(folds):
        test = folds == fold
        coefficients = np.linalg.lstsq(design[~test] * root[~test, None], y[~test] * root[~test], rcond=None)[0]
        errors[test] = (root[test] * (y[test] - design[test] @ coefficients)) ** 2
    return errors


def ranked_subsets(
    problem: Problem,
    candidates: np.ndarray,
    most: int,
    n_folds: int,
    standard_errors: float,
    seed: int,
    deadline: Deadline | None = None,
) -> list[tuple[int, ...]]:
    """The subsets of 1 to ``most`` of the features ``candidates`` (leaving at least one
    feature to the line), best first by held-out error (see the module docstring; the
    smaller first at equal error), each below the line over every feature by more than
    ``standard_errors`` standard errors of their paired differences; those ranked
    before ``deadline`` passed."""
    X, y, n_features = problem.X, problem.y, problem.X.shape[1]
    rng = np.random.default_rng(seed)
    read = np.sort(rng.choice(len(y), RANKING_POINTS, replace=False)) if len(y) > RANKING_POINTS else np.arange(len(y))
    X_read, y_read = X[read], y[read]
    root = np.ones(len(read)) if problem.weights is None else np.sqrt(problem.weights[read])
    folds = held_out_folds(len(read), min(n_folds, len(read)), seed)
    if len(np.unique(folds)) < 2:
        return []
    line = _held_out_errors(np.column_stack([X_read, np.ones(len(read))]), y_read, root, folds)
    ranked = []
    for size in range(1, min(most, n_features - 1) + 1):
        for subset in combinations(sorted(np.asarray(candidates).tolist()), size):
            if deadline is not None and deadline.passed():
                break
            rest = [j for j in range(n_features) if j not in subset]
            with np.errstate(all="ignore"):
                errors = _held_out_errors(_design(X_read, subset, rest), y_read, root, folds)
                gain = line - errors
                if np.mean(gain) > standard_errors * np.std(gain) / np.sqrt(len(gain)):
                    ranked.append((float(np.mean(errors)), size, subset))
    ranked.sort(key=lambda entry: entry[:2])
    return [subset for _, _, subset in ranked]
