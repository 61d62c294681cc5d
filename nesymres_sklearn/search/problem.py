"""The data one search works on."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import exactness


def variance(y: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The (weighted) variance of ``y``."""
    if weights is None:
        return float(np.var(y))
    return float(np.average((y - np.average(y, weights=weights)) ** 2, weights=weights))


@dataclass(frozen=True, eq=False)
class Problem:
    """``X``, ``y`` and the sample ``weights`` (mean 1, or ``None``), in the search's
    units (see :mod:`.scaling`)."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray | None = None

    @cached_property
    def scale(self) -> float:
        """The (weighted) variance of ``y``, 1 when it is 0: losses divided by it are
        fractions of variance unexplained."""
        return variance(self.y, self.weights) or 1.0

    def at(self, rows) -> Problem:
        """The problem on the points ``rows`` (an index or a mask), their weights with them."""
        return Problem(self.X[rows], self.y[rows], None if self.weights is None else self.weights[rows])

    @cached_property
    def typical_share(self) -> float:
        """A typical point's share of the variance of ``y`` (:func:`.exactness.typical_share`)."""
        return exactness.typical_share(self.y, self.scale, self.weights)

    @property
    def fvu_floor(self) -> float:
        """The fraction of variance unexplained below which fits tie in the selection's
        score (:data:`.exactness.FVU_FLOOR`, scaled by :attr:`typical_share`)."""
        return exactness.FVU_FLOOR * self.typical_share

    def is_exact(self, loss: float) -> bool:
        """Whether a fit with this mean squared error is exact (:func:`.exactness.is_exact`,
        scaled by :attr:`typical_share`)."""
        return exactness.is_exact(loss, self.scale * self.typical_share)

    def is_exact_to_rounding(self, loss: float) -> bool:
        """Whether a fit with this mean squared error is exact to float64's rounding
        (:func:`.exactness.is_exact_to_rounding`)."""
        return exactness.is_exact_to_rounding(loss, self.scale)
