"""The network's look at ``1/y``: laws that are simpler upside down.

Some laws are far easier to write as a reciprocal: the network writes ``sqrt(1 -
x**2)`` at once, and misses ``1/sqrt(1 - x**2)`` (the Lorentz factor of ``v/c``), as it
may miss ``x0*x1/(x0 + x1)`` (``1/x0 + 1/x1``) or ``1/(exp(x) - 1)``. When ``y`` keeps
one sign, the network also reads ``1/y`` (divided by the power of ten that brings it
into the target's band, see :mod:`.scaling`); each kept fit ``g`` of it (the best and
the best-scoring, :func:`.variables.assembly.kept_fits`) gives the candidate ``c/g``,
its constants refitted on ``y`` from ``g``'s. AI Feynman tries the same transformation
of ``y`` among others (Udrescu & Tegmark 2020).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..budget import Deadline
from ..fitted import Fitted
from ..fitting.constants import StartRunner
from ..problem import Problem
from ..scaling import TARGET_BAND, power_of_ten
from ..settings import SearchSettings
from ..variables.assembly import kept_fits, refit
from ..variables.power_law import keeps_one_sign


def reciprocal_candidates(
    problem: Problem,
    solve: Callable[[Problem], list[Fitted]],
    deadline: Deadline | None = None,
    runner: StartRunner | None = None,
    penalty: float = SearchSettings.parts_complexity_penalty,
) -> list[Fitted]:
    """Candidates ``c/g`` for ``problem`` (see the module docstring); ``solve``: a
    ``Problem`` -> fitted skeletons over its columns; ``deadline`` and ``runner``: the
    refits' (:func:`.variables.assembly.refit`); ``penalty``: :func:`.kept_fits`'. None
    when ``y`` does not keep one sign."""
    if not keeps_one_sign(problem.y):
        return []
    flipped = 1.0 / problem.y
    scale = power_of_ten(flipped, TARGET_BAND)
    upside_down = Problem(problem.X, flipped / scale, problem.weights)
    return [
        refit(Skeleton(("div", CONSTANT, *g.tokens)), np.append(1.0 / scale, constants), problem, deadline, runner)
        for g, constants, _ in kept_fits(solve(upside_down), upside_down, penalty)
    ]
