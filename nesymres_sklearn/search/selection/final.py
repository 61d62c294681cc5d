"""The selection stage: from every fitted candidate to ``equations_`` and the selected
row, its constants polished; the writer of the law (:mod:`..writing.writer`) then
writes it over the features in the units of the data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import sympy

from ...expression.skeleton import Skeleton
from ..budget import Deadline
from ..fitted import CandidateRows, mse
from ..fitting.constants import Evaluations, least_squares_run, polish
from ..problem import Problem
from ..settings import SearchSettings
from .held_out import held_out_choice
from .scores import log_fvu, lowest, scores
from .table import CandidateTable, add_pruned, tabulate, without_restatements

# With max_time, the pruning stops in time to write the rows: WRITING_SECONDS plus
# WRITING_SECONDS_PER_TOKEN for each token of the rows before the fit's end (twice the
# 2 ms and 20 us measured on the 2-core development machine over 28 tables of 37-62
# rows), and SearchSettings.selection_margin before that; the readable constants stop
# that margin before the end (:func:`..writing.writer.write_selected`).
WRITING_SECONDS = 0.005
WRITING_SECONDS_PER_TOKEN = 4e-5
# With max_time, the selected row is written readably (its exact constants, tidied and
# folded by SymPy: work that no clock cuts) only where the time left holds this per token
# of the row before the fit's end (:func:`..writing.writer.write_selected`), and the pruning
# keeps that time for the best-scoring row: a 50-token row of 20 features took 32 ms on the
# 2-core development machine (0.6 ms per token), 2-5 times that beside a busy core or with
# SymPy's cache cold.
READABLE_SECONDS_PER_TOKEN = 1e-3
# Under noise, where the best-scoring row's misfit is the noise's, its constants are snapped
# within their error bars (:func:`..writing.readable.exact_constants`, refits of at most
# READABLE_EVALUATIONS evaluations): the selection keeps this per point and token of the row
# for it besides, at most SNAPPING_MAX_SHARE of the time left (a 38-token row on 500
# points took 73 ms on the 2-core development machine, 3.8 us per point and token).
SNAPPING_SECONDS_PER_POINT_TOKEN = 4e-6
SNAPPING_MAX_SHARE = 0.5
# The selected row's constants get one float64 Levenberg-Marquardt run of at most this
# many evaluations: a row fitted in float32 (Operon's runs and models) ends at float64's
# optimum, as a user comparing them with a least-squares fit of the same equation expects.
SELECTED_POLISH_EVALUATIONS = 50
# With max_time and no exact row, the pruning stops in time for the held-out choice:
# this per point at the fit's pace (its rows' held-out errors and the column test took
# 26 ms on diabetes' 331 points on the 2-core development machine), at most
# HELD_OUT_MAX_SHARE of the time left to the selection.
HELD_OUT_SECONDS_PER_POINT = 1e-4
HELD_OUT_MAX_SHARE = 0.5


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


class RowWriter(Protocol):
    """What the selection asks of the writer of the law (:class:`..writing.writer.Writer`):
    a row written (``writer(skeleton, constants)``), and the factor of losses into ``y``'s units."""

    loss_scale: float

    def __call__(self, skeleton: Skeleton, constants: np.ndarray, exact: list | None = None) -> sympy.Expr: ...


def writing_seconds(rows: CandidateRows) -> float:
    """The time the selection keeps for writing ``rows`` (:data:`WRITING_SECONDS_PER_TOKEN`)."""
    return WRITING_SECONDS + WRITING_SECONDS_PER_TOKEN * sum(len(skeleton) for skeleton in rows.skeletons)


def _snapped(loss: float, problem: Problem, noise: float, settings: SearchSettings) -> bool:
    """Whether a row of ``loss`` would have its constants snapped within their error bars:
    inexact, its misfit at most ``settings.noise_ratio`` times the ``noise``, and
    ``settings.snap_level`` above 0 (:func:`..writing.readable.exact_constants`)."""
    return (
        settings.snap_level > 0
        and np.isfinite(noise)
        and not problem.is_exact(loss)
        and loss <= (settings.noise_ratio * noise) ** 2
    )


def _pruning_end(
    rows: CandidateRows, problem: Problem, end: Deadline | None, settings: SearchSettings | None, pace: float
) -> Deadline | None:
    """When the pruning stops: at ``end``, or where the held-out choice will run (with
    ``settings``, no exact row) early enough to leave it :data:`HELD_OUT_SECONDS_PER_POINT`
    per point at the fit's ``pace``, at most :data:`HELD_OUT_MAX_SHARE` of the time left."""
    if end is None or settings is None or any(problem.is_exact(loss) for loss in rows.losses):
        return end
    left = max(end.at - end.clock(), 0.0)
    held_out = min(HELD_OUT_MAX_SHARE * left, pace * HELD_OUT_SECONDS_PER_POINT * len(problem.y))
    return Deadline(end.at - held_out, end.clock)


def select(
    rows: CandidateRows,
    problem: Problem,
    complexity_penalty: float,
    writer: RowWriter,
    seed: int,
    keep: Callable[[CandidateRows], CandidateRows] | None = None,
    end: Deadline | None = None,
    settings: SearchSettings | None = None,
    noise: float = float("nan"),
    pace: float = 1.0,
) -> CandidateTable:
    """The table of ``rows``: the best row pruned, rows with variables the data do not
    support set aside (shuffled with ``seed``), then only the rows that ``keep`` returns
    (such as the dimensionally consistent ones) and that restate no better row
    (:func:`.table.without_restatements`), the selected row's constants polished in
    float64 (:func:`polished`); :func:`..writing.writer.write_selected` then writes it.
    Fixed work that no clock cuts (each step's refits share a number of evaluations):
    the same rows always give the same equation; but with ``max_time``, the fit's
    ``end`` stops the pruning in time to write the rows (``writer`` writes each) and to
    choose on held-out points (:func:`_pruning_end`), and the held-out choice (then the
    lowest score's row) and the polish in time to write the best-scoring row readably.
    With ``settings`` and no exact row, held-out folds choose among the Pareto front's
    rows (:mod:`.held_out`; ``noise``: the estimated noise level, in the search's units);
    without, the knobs of the pruning and the variable test are :class:`.SearchSettings`'
    defaults. ``pace``: the fit's :meth:`.budget.Budget.pace`, by which the time kept for
    writing the rows grows on a busy machine. Under noise, the time kept for the selected
    row's writing holds the snapping of its constants too (:data:`SNAPPING_SECONDS_PER_POINT_TOKEN`)."""
    knobs = SearchSettings() if settings is None else settings
    readable = 0.0  # the best-scoring row's readable writing (the pruning only shortens it)
    if end is not None and len(rows):
        fvus = log_fvu(np.asarray(rows.losses, dtype=np.float64), problem.scale, problem.fvu_floor)
        best = lowest(scores(fvus, np.array([len(skeleton) for skeleton in rows.skeletons]), complexity_penalty))
        readable = READABLE_SECONDS_PER_TOKEN * len(rows.skeletons[best]) * pace
        if _snapped(rows.losses[best], problem, noise, knobs):
            snapping = SNAPPING_SECONDS_PER_POINT_TOKEN * len(problem.y) * len(rows.skeletons[best]) * pace
            readable += min(snapping, SNAPPING_MAX_SHARE * max(end.at - end.clock(), 0.0))
    tail = readable + knobs.selection_margin  # after the choice: the selected row's readable writing
    choice_end = None if end is None else Deadline(end.at - tail, end.clock)
    pruning_end = None if end is None else Deadline(end.at - tail - writing_seconds(rows) * pace, end.clock)
    add_pruned(rows, problem, complexity_penalty, seed, _pruning_end(rows, problem, pruning_end, settings, pace), knobs)
    if keep is not None:
        rows = keep(rows)
    rows = without_restatements(rows, problem, complexity_penalty)
    table = tabulate(rows, complexity_penalty, problem.scale, writer.loss_scale, writer, problem.fvu_floor)
    row = table.best_index
    skeleton, constants, _ = table.fitted[row]
    if choice_end is not None and choice_end.passed():
        return table  # no time left for the held-out choice nor the polish: the best score, as fitted
    if settings is not None and not problem.is_exact(
        mse(skeleton.program, problem.X, problem.y, constants, problem.weights)
    ):
        evaluations = Evaluations(settings.held_out_evaluations, choice_end)  # fixed work, as the held-out errors
        row = table.best_index = held_out_choice(table, problem, settings, seed, noise, evaluations, choice_end)
        skeleton, constants, _ = table.fitted[row]
    table.fitted[row] = (skeleton, polished(skeleton, constants, problem), None)
    return table
