"""The selection stage: from every fitted candidate to ``equations_`` and the selected
equation, written over the features in the units of the data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy

from ...expression.export import evaluate, to_latex
from ...expression.operators import function_tokens
from ...expression.skeleton import Skeleton
from ..budget import Deadline
from ..fitting.constants import Evaluations, least_squares_run, mse, polish
from ..problem import Problem
from ..scaling import Scaling
from ..settings import SearchSettings
from .folding import folded
from .held_out import held_out_choice
from .readable import (
    READABLE_EVALUATIONS,
    exact_constants,
    large_numbers_as_floats,
    named_constants,
    tidy_numbers,
    whole_roots,
)
from .signs import signed
from .table import CandidateRows, CandidateTable

# With max_time, the pruning stops in time to write the rows: WRITING_SECONDS plus
# WRITING_SECONDS_PER_TOKEN for each token of the rows before the fit's end (twice the
# 2 ms and 20 us measured on the 2-core development machine over 28 tables of 37-62
# rows), and SELECTION_MARGIN before that; the readable constants stop SELECTION_MARGIN
# before the end.
WRITING_SECONDS = 0.005
WRITING_SECONDS_PER_TOKEN = 4e-5
SELECTION_MARGIN = 0.02
# The selected row's constants get one float64 Levenberg-Marquardt run of at most this
# many evaluations: a row fitted in float32 (Operon's runs and models) ends at float64's
# optimum, as a user comparing them with a least-squares fit of the same equation expects.
SELECTED_POLISH_EVALUATIONS = 50


def polished(skeleton: Skeleton, constants: np.ndarray, problem: Problem) -> np.ndarray:
    """``constants`` after one float64 Levenberg-Marquardt run (fixed work), where that
    lowers the MSE, then Gauss-Newton steps while they lower it (:func:`.polish`, on
    unweighted data): converged well past the run's tolerances, so fits that started
    from float32 constants rounded differently end at the same float64 optimum."""
    if skeleton.n_constants == 0:
        return constants
    loss = mse(skeleton.program, problem.X, problem.y, constants, problem.weights)
    found = least_squares_run(
        skeleton.program, problem.X, problem.y, constants, weights=problem.weights,
        evaluations=Evaluations(SELECTED_POLISH_EVALUATIONS),
    )  # fmt: skip
    if found is not None:
        found_loss = mse(skeleton.program, problem.X, problem.y, found, problem.weights)
        if found_loss < loss:
            constants, loss = found, found_loss
    if problem.weights is not None or not np.isfinite(loss):
        return constants
    return polish(skeleton.program, problem.X, problem.y, constants, loss)[0]


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

    def predict(self, skeleton: Skeleton, constants: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The row's prediction at the raw features ``X``, in the units of ``y``."""
        return self.scaling.unscale_y(evaluate(skeleton, constants, self.scaling.scale_X(X)))

    @staticmethod
    def latex(expression: sympy.Expr) -> str:
        """``expression`` in LaTeX (:func:`.expression.export.to_latex`)."""
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


def writing_seconds(rows: CandidateRows) -> float:
    """The time the selection keeps for writing ``rows`` (:data:`WRITING_SECONDS_PER_TOKEN`)."""
    return WRITING_SECONDS + WRITING_SECONDS_PER_TOKEN * sum(len(skeleton) for skeleton in rows.skeletons)


def select(
    rows: CandidateRows,
    problem: Problem,
    complexity_penalty: float,
    writer: Writer,
    seed: int,
    keep: Callable[[CandidateRows], CandidateRows] | None = None,
    end: Deadline | None = None,
    settings: SearchSettings | None = None,
    noise: float = float("nan"),
) -> CandidateTable:
    """The table of ``rows``: the best row pruned, rows with variables the data do not
    support set aside (shuffled with ``seed``), then only the rows that ``keep`` returns
    (such as the dimensionally consistent ones) and that restate no better row
    (:meth:`.CandidateRows.without_restatements`), the selected constants polished in
    float64 (:func:`polished`) and re-spelled exactly where the fit allows, its ``|f|``
    written ``f`` or ``-f`` where ``f`` has one sign on the data (:func:`.signs.signed`:
    ``predict`` runs that skeleton). Fixed work
    that no clock cuts (each step's refits share a number of evaluations): the same
    rows always give the same equation; but with ``max_time``, the fit's ``end`` stops
    the pruning in time to write the rows, and the readable constants in time to finish.
    With ``settings`` and no exact row, held-out folds choose among the Pareto front's
    rows (:mod:`.held_out`; ``noise``: the estimated noise level, in the search's units)."""
    pruning_end = None if end is None else Deadline(end.at - writing_seconds(rows) - SELECTION_MARGIN, end.clock)
    rows.add_pruned(problem, complexity_penalty, seed, pruning_end)
    if keep is not None:
        rows = keep(rows)
    rows = rows.without_restatements(problem, complexity_penalty)
    table = rows.table(complexity_penalty, problem.scale, writer.loss_scale, writer)
    row = table.best_index
    skeleton, constants, _ = table.fitted[row]
    if settings is not None and not problem.is_exact(
        mse(skeleton.program, problem.X, problem.y, constants, problem.weights)
    ):
        evaluations = Evaluations(settings.held_out_evaluations)  # fixed work, as the held-out errors
        row = table.best_index = held_out_choice(table, problem, settings, seed, noise, evaluations)
        skeleton, constants, _ = table.fitted[row]
    constants = polished(skeleton, constants, problem)
    readable_end = None if end is None else Deadline(end.at - SELECTION_MARGIN, end.clock)
    evaluations = Evaluations(READABLE_EVALUATIONS, readable_end)
    exact = exact_constants(skeleton, constants, problem.X, problem.y, problem.weights, evaluations)
    skeleton, values, exact = signed(skeleton, np.array([float(c) for c in exact]), exact, problem.X)
    table.fitted[row] = (skeleton, values, exact)
    table.equations.loc[row, "skeleton"] = skeleton.sympy
    with np.errstate(over="ignore"):
        table.equations.loc[row, "loss"] = (
            mse(skeleton.program, problem.X, problem.y, values, problem.weights) * writer.loss_scale
        )
    table.equations.loc[row, "expression"] = writer(*table.fitted[row])
    return table
