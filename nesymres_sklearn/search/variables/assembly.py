"""Whole equations assembled from parts fitted one at a time: their sum or product,
with the constants refitted on the whole data (:mod:`.decomposition`, :mod:`.residual`)."""

from __future__ import annotations

import numpy as np

from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..budget import Deadline
from ..fitted import Fitted, mse
from ..fitting.constants import StartRunner, run_start
from ..problem import Problem
from ..settings import SearchSettings


def assemble(kind: str, parts: list[Skeleton]) -> Skeleton:
    """The sum of the ``parts`` plus a constant (``"add"``), or their product times a
    constant (``"mul"``), in prefix notation."""
    tokens: list[str] = []
    for part in parts:
        tokens += [kind, *part.tokens]
    return Skeleton((*tokens, CONSTANT))


def kept_fits(
    fits: list[Fitted], problem: Problem, penalty: float = SearchSettings.parts_complexity_penalty
) -> list[Fitted]:
    """The best fit and the best-scoring fit (log of the fraction of variance
    unexplained plus ``penalty`` per token, :attr:`.SearchSettings.parts_complexity_penalty`)
    among finite ``fits``."""
    finite = [fit for fit in fits if np.isfinite(fit.loss)]
    if not finite:
        return []
    best = min(finite, key=lambda fit: fit.loss)
    scored = min(finite, key=lambda fit: np.log(max(fit.loss / problem.scale, 1e-300)) + penalty * len(fit.skeleton))
    return [best] if scored is best else [best, scored]


def refitted(
    kind: str,
    parts: list[tuple[Skeleton, np.ndarray]],
    problem: Problem,
    deadline: Deadline | None,
    runner: StartRunner | None = None,
) -> Fitted:
    """The assembled skeleton with its constants fitted on ``problem`` (:func:`refit`),
    starting from the parts' constants and the best outer constant for them."""
    skeleton = assemble(kind, [part for part, _ in parts])
    inner = np.concatenate([constants for _, constants in parts])
    with np.errstate(all="ignore"):
        combined = skeleton.program(problem.X, np.append(inner, 0.0 if kind == "add" else 1.0))
        if kind == "add":
            outer = float(np.average(problem.y - combined, weights=problem.weights))
        else:
            outer = float(np.average(problem.y * combined, weights=problem.weights)) / (
                float(np.average(combined**2, weights=problem.weights)) or 1.0
            )
    return refit(skeleton, np.append(inner, outer if np.isfinite(outer) else 1.0), problem, deadline, runner)


def refit(
    skeleton: Skeleton,
    start: np.ndarray,
    problem: Problem,
    deadline: Deadline | None = None,
    runner: StartRunner | None = None,
) -> Fitted:
    """``skeleton`` with its constants fitted on ``problem`` from ``start`` (one start,
    see :func:`.constants.run_start`; ``runner``: its compiled code); the start's
    constants when the fit does not improve on them."""
    found, loss = run_start(skeleton.program, problem.X, problem.y, start, deadline, problem.weights, runner=runner)
    start_loss = mse(skeleton.program, problem.X, problem.y, start, problem.weights)
    return (
        Fitted(skeleton, found, loss)
        if found is not None and loss <= start_loss
        else Fitted(skeleton, start, start_loss)
    )
