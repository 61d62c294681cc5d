"""A fitted candidate: the one shape in which a skeleton and its fit travel between the
stages of a search and into the candidate table (:class:`.selection.table.CandidateRows`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..expression.skeleton import Skeleton


class Fitted(NamedTuple):
    """A ``skeleton``, its fitted ``constants`` and their ``loss`` (mean squared error)."""

    skeleton: Skeleton
    constants: np.ndarray
    loss: float
