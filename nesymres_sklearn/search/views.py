"""A change of a search's problem and its way back, as one object.

A view takes a problem forward to the one a later stage works on (the powers of ten
of :mod:`.scaling`, the dimensionless groups of :mod:`..units.stage`, the route of
:mod:`.variables.routing`: a power-law factor split off, combinations of the
features, or a subset of them) and brings back what that stage found: each fitted law
(:meth:`View.back`), its predictions (:meth:`View.back_values`), the columns it read
(:meth:`View.back_columns`), and what its variables stand for (:meth:`View.symbols`).
A :class:`Chain` composes views in the order they were taken, and is a view itself;
:class:`Identity` is the view that changes nothing, where a stage does not apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .fitted import CandidateRows, Fitted
from .problem import Problem


@runtime_checkable
class View(Protocol):
    """A change of problem (``forward``) and its way back (every other method), where
    ``whole`` is the problem the view was taken of."""

    def forward(self, whole: Problem) -> Problem:
        """The problem the later stage works on."""

    def back(self, fitted: Fitted, whole: Problem) -> Fitted:
        """A law ``fitted`` on the viewed problem as a law of ``whole``, with its loss there."""

    def back_values(self, values: np.ndarray, whole: Problem) -> np.ndarray:
        """Predictions of the viewed problem's target as predictions of ``whole.y``."""

    def back_columns(self, columns: np.ndarray) -> np.ndarray:
        """The columns of ``whole`` that the viewed problem's ``columns`` read."""

    def symbols(self, symbols: Sequence) -> list:
        """What each variable of the viewed problem stands for, written with the ``symbols`` of ``whole``'s."""


class Identity:
    """The view that changes nothing."""

    def forward(self, whole: Problem) -> Problem:
        return whole

    def back(self, fitted: Fitted, whole: Problem) -> Fitted:
        return fitted

    def back_values(self, values: np.ndarray, whole: Problem) -> np.ndarray:
        return values

    def back_columns(self, columns: np.ndarray) -> np.ndarray:
        return columns

    def symbols(self, symbols: Sequence) -> list:
        return list(symbols)


@dataclass(frozen=True)
class Chain:
    """``views`` taken one after the other: ``problems[k]`` is the problem that
    ``views[k]`` was taken of, ``problems[0]`` the chain's whole problem and
    ``problems[-1]`` the one the last view leads to (:attr:`problem`)."""

    problems: tuple[Problem, ...]
    views: tuple[View, ...] = ()

    @classmethod
    def of(cls, whole: Problem) -> Chain:
        """No view yet: ``whole`` as it is."""
        return cls((whole,))

    @property
    def problem(self) -> Problem:
        """The problem the last view leads to."""
        return self.problems[-1]

    def then(self, view: View) -> Chain:
        """This chain followed by ``view``, taken of :attr:`problem`."""
        return Chain((*self.problems, view.forward(self.problem)), (*self.views, view))

    def forward(self, whole: Problem) -> Problem:
        return self.problem

    def back(self, fitted: Fitted, whole: Problem) -> Fitted:
        for view, part in self._backwards(whole):
            fitted = view.back(fitted, part)
        return fitted

    def back_values(self, values: np.ndarray, whole: Problem) -> np.ndarray:
        for view, part in self._backwards(whole):
            values = view.back_values(values, part)
        return values

    def back_columns(self, columns: np.ndarray) -> np.ndarray:
        for view in reversed(self.views):
            columns = view.back_columns(columns)
        return columns

    def symbols(self, symbols: Sequence) -> list:
        for view in self.views:
            symbols = view.symbols(symbols)
        return list(symbols)

    def _backwards(self, whole: Problem):
        """Each view, last first, with the problem it was taken of (the first: ``whole``)."""
        parts = (whole, *self.problems[1:-1])
        return reversed(list(zip(self.views, parts)))


def back_rows(view: View, rows: CandidateRows, whole: Problem) -> CandidateRows:
    """Every row of ``rows`` (on the viewed problem) as a row of ``whole``, with its score and origin."""
    return rows.mapped(lambda fitted: view.back(fitted, whole))
