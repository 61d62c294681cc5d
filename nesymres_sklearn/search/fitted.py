"""A fitted candidate: the one shape in which a skeleton and its fit travel between the
stages of a search and into the candidate table (:class:`.selection.table.CandidateRows`),
and its loss (:func:`mse`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..expression.skeleton import Skeleton


class Fitted(NamedTuple):
    """A ``skeleton``, its fitted ``constants`` and their ``loss`` (mean squared error)."""

    skeleton: Skeleton
    constants: np.ndarray
    loss: float


def mse(program: Callable, X: np.ndarray, y: np.ndarray, constants, weights: np.ndarray | None = None) -> float:
    """(Weighted) mean squared error of ``program(X, constants)`` (a :class:`.PrefixProgram`
    or any function of the same arguments) on ``(X, y)``; inf when not finite."""
    with np.errstate(all="ignore"):
        value = float(np.average((program(X, constants) - y) ** 2, weights=weights))
    return value if np.isfinite(value) else np.inf
