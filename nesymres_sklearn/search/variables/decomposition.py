"""More features than the network has variables: split the problem into parts it can
solve, as AI Feynman does (Udrescu & Tegmark 2020).

``f`` is *additively separable* into groups of features when ``f(x) = g(x_A) + h(x_B)
+ ...``, and *multiplicatively separable* when ``f(x) = g(x_A) * h(x_B) * ...``, which
is additive separability of ``log|f|`` when ``y`` keeps one sign. Two features ``i``
and ``j`` interact when ``f(a_i, a_j, c) + f(b_i, b_j, c) != f(a_i, b_j, c) + f(b_i,
a_j, c)`` for points ``a``, ``b``, ``c`` (the rest of the features taken from ``c``);
the finest separation is the connected components of the graph of interacting pairs.

The test needs ``f`` at points that are not in the data, so it runs on the smooth
:class:`.Surrogate` (a Gaussian process) fitted to at most ``SURROGATE_POINTS`` of
them; its leave-one-out error also sets the test's tolerance. A pair interacts when the
root mean square of the mixed difference over ``N_PAIRS`` random triples exceeds
``decompose_tolerance`` times the spread of ``y``, or twice the surrogate's leave-one-out
root mean square error when that is larger; no decomposition is offered when the
surrogate explains less than ``decompose_min_r2`` of ``y``'s variance on left-out points
(both are :class:`..settings.SearchSettings` fields).

Each group's part is the surrogate's partial function: the surrogate on the data with
the other features held at their medians (its exponential for multiplicative
separability). Features whose part is flat are left out. The parts' skeletons, written
over all features, are assembled into one candidate (their sum plus a constant, or their
product times a constant), whose constants start from the parts' and are refitted on
the whole data.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...shared_setting import one_blas_thread
from ..budget import Deadline
from ..fitted import Fitted
from ..problem import Problem
from ..settings import SearchSettings
from .assembly import kept_fits, refitted
from .features import on_features
from .power_law import keeps_one_sign
from .surrogate import Surrogate

#: Points the surrogate is fitted on (a random subset of larger data).
SURROGATE_POINTS = 256
#: Random triples of points per pair of features.
N_PAIRS = 128


def interactions(surrogate: Callable, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The symmetric matrix of each pair's mixed difference (see the module docstring):
    the root mean square over ``N_PAIRS`` random triples of rows of ``X``."""
    n_features = X.shape[1]
    a, b, c = (X[rng.integers(0, len(X), N_PAIRS)] for _ in range(3))
    pairs = list(itertools.combinations(range(n_features), 2))
    blocks = []
    for i, j in pairs:
        for first, second in ((a, a), (b, b), (a, b), (b, a)):
            points = c.copy()
            points[:, i], points[:, j] = first[:, i], second[:, j]
            blocks.append(points)
    values = surrogate(np.concatenate(blocks)).reshape(len(pairs), 4, N_PAIRS)
    mixed = np.sqrt(np.mean((values[:, 0] + values[:, 1] - values[:, 2] - values[:, 3]) ** 2, axis=1))
    matrix = np.zeros((n_features, n_features))
    for (i, j), value in zip(pairs, mixed):
        matrix[i, j] = matrix[j, i] = value
    return matrix


def separable_groups(interaction: np.ndarray, threshold: float) -> list[tuple[int, ...]]:
    """The connected components of the graph whose edges are the pairs interacting
    above ``threshold``, each in increasing order, ordered by their first feature."""
    n_features = len(interaction)
    group = list(range(n_features))

    def root(i):
        while group[i] != i:
            i = group[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(interaction > threshold))):
        group[root(j)] = root(i)
    components: dict[int, list[int]] = {}
    for i in range(n_features):
        components.setdefault(root(i), []).append(i)
    return sorted(tuple(members) for members in components.values())


@dataclass(frozen=True)
class Decomposition:
    """``kind`` (``"add"`` or ``"mul"``), the ``groups`` of features whose parts are
    added or multiplied (flat ones left out), the ``surrogate`` (of ``y``, or of
    ``log|y|`` for ``"mul"``) and the ``reference`` point at which the other features
    are held."""

    kind: str
    groups: tuple[tuple[int, ...], ...]
    surrogate: Surrogate
    reference: np.ndarray

    def partial(self, X: np.ndarray, group: tuple[int, ...]) -> np.ndarray:
        """The surrogate at the rows of ``X`` with the features outside ``group`` at
        the reference point."""
        points = np.tile(self.reference, (len(X), 1))
        points[:, group] = X[:, group]
        return self.surrogate(points)

    def part(self, X: np.ndarray, group: tuple[int, ...]) -> np.ndarray:
        """The part of ``group`` at the rows of ``X``: the partial function, or its
        exponential for ``"mul"``."""
        values = self.partial(X, group)
        return np.exp(values) if self.kind == "mul" else values


def _separation(
    X: np.ndarray,
    target: np.ndarray,
    kind: str,
    max_group: int,
    rng: np.random.Generator,
    min_r2: float,
    tolerance: float,
) -> Decomposition | None:
    """The finest separation of ``target`` (``y``, or ``log|y|`` for ``"mul"``) when
    the surrogate explains ``min_r2`` of it, it has at least two groups and none is
    larger than ``max_group`` (``tolerance``: see the module docstring)."""
    sample = rng.choice(len(X), min(len(X), SURROGATE_POINTS), replace=False)
    surrogate = Surrogate(X[sample], target[sample], int(rng.integers(2**31)))
    if not surrogate.error < 1 - min_r2:
        return None
    spread = float(np.std(target))
    threshold = max(tolerance, 2 * np.sqrt(surrogate.error)) * spread
    groups = separable_groups(interactions(surrogate, X, rng), threshold)
    if len(groups) < 2 or max(map(len, groups)) > max_group:
        return None
    decomposition = Decomposition(kind, tuple(groups), surrogate, np.median(X, axis=0))
    effective = tuple(g for g in groups if np.std(decomposition.partial(X, g)) > threshold)
    if not effective:
        return None
    return Decomposition(kind, effective, surrogate, decomposition.reference)


def decompose(
    X: np.ndarray,
    y: np.ndarray,
    max_group: int,
    seed: int,
    min_r2: float = SearchSettings.decompose_min_r2,
    tolerance: float = SearchSettings.decompose_tolerance,
) -> Decomposition | None:
    """The additive separation of ``y`` into groups of at most ``max_group`` features,
    else the multiplicative one when ``y`` keeps one sign, else ``None`` (``min_r2``,
    ``tolerance``: the module docstring's ``decompose_min_r2`` and ``decompose_tolerance``)."""
    rng = np.random.default_rng(seed)
    with one_blas_thread():
        found = _separation(X, y, "add", max_group, rng, min_r2, tolerance)
        if found is None and keeps_one_sign(y):
            found = _separation(X, np.log(np.abs(y)), "mul", max_group, rng, min_r2, tolerance)
    return found


def decomposed_candidates(
    problem: Problem,
    max_group: int,
    seed: int,
    solve: Callable[[Problem], list[Fitted]],
    deadline: Deadline | None,
    settings: SearchSettings | None = None,
) -> list[Fitted]:
    """Whole-equation candidates (skeleton over all features, constants refitted on
    ``problem``, mean squared error) assembled from the parts that ``solve`` fits
    (a part's ``Problem`` over its group's columns -> fitted skeletons over them); none
    when ``y`` does not separate (by the ``settings``' knobs, default
    :class:`.SearchSettings`) or the ``deadline`` passes before every part is solved."""
    settings = SearchSettings() if settings is None else settings
    decomposition = decompose(
        problem.X, problem.y, max_group, seed, settings.decompose_min_r2, settings.decompose_tolerance
    )
    if decomposition is None:
        return []
    per_part = []
    for group in decomposition.groups:
        if deadline is not None and deadline.passed():
            return []
        part = Problem(problem.X[:, group], decomposition.part(problem.X, group))
        kept = kept_fits(solve(part), part, settings.parts_complexity_penalty)
        if not kept:
            return []
        per_part.append([(on_features(skeleton, np.array(group)), constants) for skeleton, constants, _ in kept])
    candidates = []
    for choice in range(max(map(len, per_part))):
        chosen = [fits[min(choice, len(fits) - 1)] for fits in per_part]
        candidates.append(refitted(decomposition.kind, chosen, problem, deadline))
    return candidates
