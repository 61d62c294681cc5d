"""The candidate containers: a fitted candidate (:class:`Fitted`), the one shape in which
a skeleton and its fit travel between the stages of a search, its loss (:func:`mse`),
and the rows the stages gather (:class:`CandidateRows`), which the selection turns into
the candidate table (:mod:`.selection.table`)."""

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


class CandidateRows:
    """Candidates as the stages gather them: skeleton, constants and loss (mean
    squared error in the search's units), decoding score and origin."""

    def __init__(self):
        self.skeletons, self.constants, self.losses, self.log_probs, self.origins = [], [], [], [], []
        # Variables that the data do not support: rows that use them are left out of the table.
        self.set_aside: set[str] = set()

    def __len__(self) -> int:
        return len(self.skeletons)

    def add(self, fitted: Fitted, *, origin: str, log_prob: float = -np.inf) -> None:
        """A row of ``fitted`` from ``origin``, with its decoding score (``-inf``: not decoded)."""
        self._append(*fitted, log_prob, origin)

    def _append(self, *row) -> None:
        for column, value in zip(self._columns(), row):
            column.append(value)

    def derive(self, row: int, fitted: Fitted) -> None:
        """``fitted`` as a row of the score and origin of row ``row``."""
        self._append(*fitted, self.log_probs[row], self.origins[row])

    def extend(self, other: CandidateRows) -> None:
        for column, values in zip(self._columns(), other._columns()):
            column.extend(values)

    def where(self, keep: Callable[[Skeleton, np.ndarray, float], bool]) -> CandidateRows:
        """The rows whose skeleton, constants and loss ``keep`` accepts (and the variables set aside)."""
        kept = CandidateRows()
        for row in zip(*self._columns()):
            if keep(row[0], row[1], row[2]):
                kept._append(*row)
        kept.set_aside.update(self.set_aside)
        return kept

    def at(self, indices) -> CandidateRows:
        """The rows at ``indices``, in their order (and the variables set aside)."""
        taken = CandidateRows()
        for column, values in zip(taken._columns(), self._columns()):
            column.extend(values[i] for i in indices)
        taken.set_aside.update(self.set_aside)
        return taken

    def copy(self) -> CandidateRows:
        """A copy that rows added to it leave this one without."""
        return self.at(range(len(self)))

    def mapped(self, change: Callable[[Fitted], Fitted]) -> CandidateRows:
        """The rows with each fit replaced by ``change(fit)`` (no variable set aside)."""
        changed = CandidateRows()
        for skeleton, constants, loss, *rest in zip(*self._columns()):
            changed._append(*change(Fitted(skeleton, constants, loss)), *rest)
        return changed

    def is_set_aside(self, row: int) -> bool:
        """Whether row ``row`` uses a variable set aside."""
        return not self.set_aside.isdisjoint(self.skeletons[row].tokens)

    def _columns(self) -> tuple[list, ...]:
        return self.skeletons, self.constants, self.losses, self.log_probs, self.origins

    def best_first(self) -> list[tuple[Skeleton, np.ndarray]]:
        """Skeletons and constants of the finite fits, lowest loss first."""
        order = np.argsort(self.losses, kind="stable")
        return [(self.skeletons[i], self.constants[i]) for i in order if np.isfinite(self.losses[i])]
