"""More features than the network reads: a second look at what its best candidate
leaves unexplained.

When the network reads only the features most relevant to ``y`` (:mod:`.routing`: no
power-law split or combinations account for the others), a law
such as ``x0*x1 + sin(x2) - x3 + x4*x5`` is more than it sees at once: reading ``x3,
x4, x5`` it writes ``x4*x5 - c*x3``, and the rest is noise to it. The residual ``y -
f(x)`` of the network's best fit ``f`` over all features depends on what ``f``
left out; the network reads the features most relevant to the residual (ranked as in
:mod:`.features`) and each of its kept fits ``g`` of the residual (the best and the
best-scoring, :func:`.assembly.kept_fits`) gives the candidate ``f + g + c`` over all
features, its constants refitted on ``y`` from ``f``'s and ``g``'s. This is one step of
backfitting (Hastie & Tibshirani, *Generalized Additive Models*, 1990): additive
structure across more features than the network reads. The residual's line over every
feature (its terms chosen forward, :func:`.features.linear_candidate`) is one more such
``g``, without the network: ``exp(x0 + x1) + x2 + x3`` is the law that it misses, where
the network's ``f`` holds the exponential and the rest of the residual is linear.

Nothing is searched when ``f`` fits exactly or leaves a residual that is not finite;
the network is not asked when the features most relevant to the residual are the ones
it read, and the line joins where it has a feature.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...expression.tokens import variable_index
from ..budget import Deadline
from ..fitted import Fitted
from ..fitting.constants import StartRunner
from ..problem import Problem
from ..settings import SearchSettings
from ..variables.assembly import kept_fits, refitted
from ..variables.features import linear_candidate, on_features, relevant_features, sum_skeleton


def residual_candidates(
    problem: Problem,
    first: Fitted,
    read: np.ndarray,
    n_variables: int,
    seed: int,
    solve: Callable[[Problem], list[Fitted]],
    deadline: Deadline | None = None,
    runner: StartRunner | None = None,
    penalty: float = SearchSettings.parts_complexity_penalty,
    line: bool = True,
) -> list[Fitted]:
    """Candidates ``f + g + c`` over all features of ``problem`` (see the module
    docstring) from the ``first`` fit ``f`` (skeleton over all features, constants,
    mean squared error); ``read``: the columns the network read; ``solve``: a ``Problem`` over some columns ->
    fitted skeletons over them; ``deadline`` and ``runner``: the refits' (see
    :func:`.assembly.refitted`); ``penalty``: :func:`.assembly.kept_fits`'; ``line``:
    whether the residual's line joins (a look at the same ``f`` again adds the same one)."""
    skeleton, constants, loss = first
    if problem.is_exact(loss):
        return []
    with np.errstate(all="ignore"):
        residual = problem.y - skeleton.program(problem.X, constants)
    if not np.all(np.isfinite(residual)) or np.ptp(residual) == 0:
        return []
    found = []
    fitted_line = linear_candidate(Problem(problem.X, residual, problem.weights), penalty) if line else None
    if fitted_line is not None and fitted_line.skeleton.n_constants > 1:  # a term beside the intercept
        terms = [j for j in map(variable_index, fitted_line.skeleton.tokens) if j is not None]  # in the line's order
        parts = [(skeleton, constants), (sum_skeleton(terms), fitted_line.constants[:-1])]
        found.append(refitted("add", parts, problem, deadline, runner))
    columns = relevant_features(problem.X, residual, n_variables, seed)
    if np.array_equal(columns, np.sort(read)):
        return found
    part = Problem(problem.X[:, columns], residual, problem.weights)
    return found + [
        refitted("add", [(skeleton, constants), (on_features(g, columns), g_constants)], problem, deadline, runner)
        for g, g_constants, _ in kept_fits(solve(part), part, penalty)
    ]
