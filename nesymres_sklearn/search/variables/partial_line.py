"""Laws linear in all but a few features: ``y = g(x_S) + c*x_a + c*x_b + ... + c``.

A law such as ``x0 + 9*x2 - 1.4*x3 + sqrt(x4 + cos(x1))`` has more features than the
network reads, and its residual after a line over every feature is
``sqrt(x4 + cos(x1))`` less that line's share of it, which the network does not write.
But the features outside ``S = {x1, x4}`` enter as a line: in the partially linear model
``y = s(x_S) + line(x_rest)`` (Robinson, *Econometrica* 1988), with ``s`` a polynomial of
``S`` (:data:`..fitting.polynomial.MAX_DEGREE` by its size, and each feature's powers up
to the degree of one feature's), the line's slopes come out right as far as ``s``
approximates ``g``, and ``y`` less that line is then ``g(x_S)`` plus a constant: a problem
of ``S``'s features alone, which the network reads.

The subsets of one to three features (at most the network's variables), drawn from the
most relevant, are ranked by the held-out error of their partially linear model (the
selection's folds, :func:`..selection.held_out.held_out_folds`, on at most
:data:`RANKING_POINTS` points; each fold's normal equations over every column that a
subset's model reads are formed once, :class:`.plain.HeldOutLines`); only those below the
line over every feature by more than ``SearchSettings.held_out_standard_errors`` standard
errors of the paired differences are kept (as the backward line drops a feature). A kept
subset's fits ``g`` (:func:`.assembly.kept_fits`) give the candidates ``g + line + c``
over all features, their constants refitted on ``y`` from ``g``'s and the line's
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
from .plain import HeldOutLines

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


def _exponents(size: int) -> list[tuple[int, ...]]:
    """The exponents of the polynomial ``s`` over ``size`` features: every monomial up to
    ``MAX_DEGREE[size]``, then each feature's powers up to ``MAX_DEGREE[1]``."""
    joint = monomials(size, MAX_DEGREE[size])
    alone = [tuple(p if k == j else 0 for k in range(size)) for j in range(size) for p in range(1, MAX_DEGREE[1] + 1)]
    return joint + [power for power in alone if power not in joint]


def _keys(subset: tuple[int, ...]) -> list[frozenset]:
    """The monomials of ``s`` over the features ``subset``, each as ``{(feature, power), ...}``."""
    return [frozenset((j, p) for j, p in zip(subset, exponents) if p) for exponents in _exponents(len(subset))]


def _monomial_columns(X: np.ndarray, features: list[int], keys: list[frozenset]) -> np.ndarray:
    """The monomials ``keys`` of the ``features`` of ``X``, standardised (each less its
    mean, over its standard deviation, 1 where it is constant), one column each."""
    part = X[:, features]
    spread = part.std(axis=0)
    standard = (part - part.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    position = {j: k for k, j in enumerate(features)}
    with np.errstate(all="ignore"):
        return np.column_stack([np.prod([standard[:, position[j]] ** p for j, p in key], axis=0) for key in keys])


def _design(X: np.ndarray, subset: tuple[int, ...], rest: list[int]) -> np.ndarray:
    """The columns of the partially linear model: the monomials of the subset's
    standardised features (:func:`_keys`), the rest's features, a constant."""
    return np.column_stack([_monomial_columns(X, list(subset), _keys(subset)), X[:, rest], np.ones(len(X))])


class _HeldOutModels:
    """The held-out errors of the partially linear models of subsets of the features
    ``pool``: the backward line's held-out lines (:class:`.plain.HeldOutLines`) over
    every monomial that one of them reads and every feature, each fold's normal
    equations formed once and solved for a subset's columns."""

    def __init__(self, problem: Problem, pool: list[int], most: int, folds: np.ndarray):
        subsets = [subset for size in range(1, most + 1) for subset in combinations(pool, size)]
        keys = list(dict.fromkeys(key for subset in subsets for key in _keys(subset)))
        self.monomials = {key: column for column, key in enumerate(keys)}
        self.n_features = problem.X.shape[1]
        columns = np.column_stack([_monomial_columns(problem.X, pool, keys), problem.X])
        self.finite = bool(np.all(np.isfinite(columns)))
        self.lines = HeldOutLines(Problem(columns, problem.y, problem.weights), folds) if self.finite else None

    def columns(self, subset: tuple[int, ...]) -> list[int]:
        """The columns of ``subset``'s model: its monomials and the rest's features (the
        lines add the constant)."""
        rest = [len(self.monomials) + j for j in range(self.n_features) if j not in subset]
        return [self.monomials[key] for key in _keys(subset)] + rest

    def line(self) -> list[int]:
        """The columns of the line over every feature."""
        return [len(self.monomials) + j for j in range(self.n_features)]


def ranking_points(problem: Problem, seed: int) -> Problem:
    """``problem`` on at most :data:`RANKING_POINTS` of its points, drawn with ``seed``."""
    n = len(problem.y)
    if n <= RANKING_POINTS:
        return problem
    return problem.at(np.sort(np.random.default_rng(seed).choice(n, RANKING_POINTS, replace=False)))


def ranked_subsets(
    problem: Problem,
    pool: np.ndarray,
    most: int,
    n_folds: int,
    standard_errors: float,
    seed: int,
    deadline: Deadline | None = None,
) -> list[tuple[int, ...]] | None:
    """The subsets of 1 to ``most`` (at most 3) of the features ``pool`` (leaving at least
    one feature to the line), best first by held-out error (see the module docstring;
    the smaller first at equal error), each below the line over every feature by more
    than ``standard_errors`` standard errors of their paired differences; ``None`` where
    ``deadline`` passed before all were ranked."""
    n_features = problem.X.shape[1]
    most = min(most, max(MAX_DEGREE), n_features - 1)
    read = ranking_points(problem, seed)
    folds = held_out_folds(len(read.y), min(n_folds, len(read.y)), seed)
    pool = sorted(np.asarray(pool).tolist())
    if len(np.unique(folds)) < 2 or most < 1:
        return []
    models = _HeldOutModels(read, pool, most, folds)
    if not models.finite:
        return []
    with np.errstate(all="ignore"):
        line = models.lines.errors(models.line())
    ranked = []
    for size in range(1, most + 1):
        for subset in combinations(pool, size):
            if deadline is not None and deadline.passed():
                return None
            with np.errstate(all="ignore"):
                errors = models.lines.errors(models.columns(subset))
                gain = line - errors
                if np.mean(gain) > standard_errors * np.std(gain) / np.sqrt(len(gain)):
                    ranked.append((float(np.mean(errors)), size, subset))
    ranked.sort(key=lambda entry: entry[:2])
    return [subset for _, _, subset in ranked]
