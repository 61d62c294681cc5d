"""The printed law: :class:`Writer` writes a row over the features in the units of the
data, and :func:`write_selected` writes the selected row of the candidate table, its
constants re-spelled exactly where the fit allows (:mod:`.readable`), its ``|f|`` signed
(:mod:`.signs`), folded to its shortest equal form (:mod:`.folding`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from ..expression.operators import function_tokens
from ..expression.skeleton import Skeleton
from ..search.budget import Deadline
from ..search.fitted import mse
from ..search.fitting.constants import Evaluations
from ..search.problem import Problem
from ..search.scaling import Scaling
from ..search.selection.final import READABLE_SECONDS_PER_TOKEN
from ..search.selection.table import FOLD_CHOSEN_ORIGINS, CandidateTable
from ..search.settings import SearchSettings
from .export import evaluate, to_latex
from .folding import folded
from .readable import (
    READABLE_EVALUATIONS,
    exact_constants,
    large_numbers_as_floats,
    named_constants,
    tidy_numbers,
    whole_roots,
)
from .signs import signed


@dataclass(frozen=True)
class Writer:
    """Writes a row over the feature ``symbols`` in the units of the data (``scaling``
    maps the search's units back); ``constants``: the law's dimensional constants of
    known value, ``(symbol, value)``, which the selected row is written with where its
    numbers are theirs. Every form it writes is the row's program wherever that is
    defined (``tests/test_written_law.py``); the one rewrite that holds on the data
    alone, ``|f|`` as ``f``, is made on the skeleton that predicts (:mod:`.signs`).
    ``operators``: the functions the user allows (``None``: any); the selected row is
    written with those alone, as its skeleton is (SymPy evaluates ``sin(x + pi/2)`` to
    ``cos(x)``: then the row is written as the skeleton reads, with its exact constants)."""

    scaling: Scaling
    symbols: tuple[sympy.Symbol, ...]
    constants: tuple[tuple[sympy.Symbol, float], ...] = ()
    operators: frozenset[str] | None = None

    def __call__(self, skeleton: Skeleton, constants: np.ndarray, exact: list | None = None) -> sympy.Expr:
        """The row's equation: as written, or with ``exact`` constants, the units folded
        into them and SymPy's automatic evaluation, ``1/sqrt(2*pi)`` held whole
        (:func:`.readable.whole_roots`; the selected row: the same expression each time,
        so after pickling too)."""
        if exact is None:
            return self.scaling.unscale_expression(skeleton.expression(constants, self.symbols), self.symbols)
        expression = tidy_numbers(skeleton.expression(exact, self.symbols, evaluate=True))
        unscaled = self.scaling.unscale_expression(expression, self.symbols, evaluate=True)
        written = folded(unscaled, self.operators)
        written = whole_roots(large_numbers_as_floats(named_constants(written, dict(self.constants))))
        if self.operators is None or function_tokens(written) <= self.operators:
            return written
        as_skeleton = self.scaling.unscale_expression(skeleton.expression(exact, self.symbols), self.symbols)
        return as_skeleton if function_tokens(as_skeleton) <= self.operators else self(skeleton, constants)

    def raw(self, skeleton: Skeleton, constants: np.ndarray) -> sympy.Expr:
        """The row over the raw features with its float constants, under SymPy's
        automatic evaluation (the scales folded into the constants)."""
        expression = skeleton.expression(constants, self.symbols, evaluate=True)
        return self.scaling.unscale_expression(expression, self.symbols, evaluate=True)

    def as_fitted(self, skeleton: Skeleton, constants: np.ndarray) -> sympy.Expr:
        """The row with its float constants, under SymPy's automatic evaluation
        (:meth:`raw`, the nested sums flattened) where that uses only the allowed
        ``operators``, else as written (milliseconds: no readable constants, no folding)."""
        expression = self.raw(skeleton, constants)
        if self.operators is None or function_tokens(expression) <= self.operators:
            return expression
        return self(skeleton, constants)

    def predict(self, skeleton: Skeleton, constants: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The row's prediction at the raw features ``X``, in the units of ``y``."""
        return self.scaling.unscale_y(evaluate(skeleton, constants, self.scaling.scale_X(X)))

    @staticmethod
    def latex(expression: sympy.Expr) -> str:
        """``expression`` in LaTeX (:func:`.export.to_latex`)."""
        return to_latex(expression)

    def numeric(self, expression: sympy.Expr) -> sympy.Expr:
        """``expression`` with the dimensional constants' values for their symbols."""
        if not self.constants:
            return expression
        return expression.xreplace({symbol: sympy.Float(value) for symbol, value in self.constants})

    @property
    def loss_scale(self) -> np.float64:
        """Losses in the search's units times this are in the units of ``y`` (inf for
        ``y`` near the largest float64)."""
        with np.errstate(over="ignore"):
            return np.float64(self.scaling.y_scale) ** 2


def snapping_noise(origin: str, noise: float) -> float:
    """The noise level under which a selected row of ``origin`` has its constants snapped
    within their error bars: ``noise``, but 0 for a row of
    :data:`..search.selection.table.FOLD_CHOSEN_ORIGINS` (the folds kept its features:
    constants snapped on the training error would choose them again)."""
    return 0.0 if origin in FOLD_CHOSEN_ORIGINS else noise


def write_selected(
    table: CandidateTable,
    problem: Problem,
    writer: Writer,
    end: Deadline | None = None,
    noise: float = 0.0,
    settings: SearchSettings | None = None,
    pace: float = 1.0,
) -> CandidateTable:
    """``table`` (from :func:`..search.selection.final.select`) with its selected row
    written: its constants re-spelled exactly where the fit allows (:func:`.readable.exact_constants`
    with ``settings``, default :class:`.SearchSettings`: on noisy targets within their error
    bars where the row's misfit is at most ``noise``; not for a row of
    :data:`..search.selection.table.FOLD_CHOSEN_ORIGINS`, the backward line, where only the
    exact-fit rules apply; with ``max_time``, they stop
    ``settings.selection_margin`` seconds before the fit's ``end``), its ``|f|``
    written ``f`` or ``-f`` where ``f`` has one sign on the data (:func:`.signs.signed`:
    ``predict`` runs that skeleton), its loss and its expression by ``writer``. Where
    the time left before the ``end`` does not hold :data:`READABLE_SECONDS_PER_TOKEN`
    per token of the row at the fit's ``pace`` (:meth:`..search.budget.Budget.pace`), it
    is written as it was fitted (:meth:`Writer.as_fitted`), its floats unchanged."""
    settings = SearchSettings() if settings is None else settings
    row = table.best_index
    skeleton, constants, _ = table.fitted[row]
    noise = snapping_noise(table.equations.loc[row, "origin"], noise)
    readable_end = None if end is None else Deadline(end.at - settings.selection_margin, end.clock)
    late = end is not None and not end.holds(READABLE_SECONDS_PER_TOKEN * len(skeleton) * pace)
    if late:  # no time for the readable form (SymPy's, which no clock cuts): as fitted
        values, exact = constants, None
    else:
        evaluations = Evaluations(READABLE_EVALUATIONS, readable_end)
        X, y, weights = problem.X, problem.y, problem.weights
        exact = exact_constants(skeleton, constants, X, y, weights, evaluations, noise, settings)
        skeleton, values, exact = signed(skeleton, np.array([float(c) for c in exact]), exact, problem.X)
    table.fitted[row] = (skeleton, values, exact)
    table.equations.loc[row, "skeleton"] = skeleton.sympy
    with np.errstate(over="ignore"):
        table.equations.loc[row, "loss"] = (
            mse(skeleton.program, problem.X, problem.y, values, problem.weights) * writer.loss_scale
        )
    table.equations.loc[row, "expression"] = writer.as_fitted(skeleton, values) if late else writer(*table.fitted[row])
    return table
