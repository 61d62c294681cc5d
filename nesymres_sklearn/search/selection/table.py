"""The candidate table: the rows as the stages gathered them (:class:`..fitted.CandidateRows`)
pruned, without restatements, sorted and selected (:mod:`.scores`) into what the
estimator shows as ``equations_``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import sympy

from ...expression.program import PrefixProgram
from ...expression.skeleton import Skeleton
from ..exactness import FVU_FLOOR, is_restatement, restatement_reach
from ..fitted import CandidateRows, Fitted
from ..fitting.constants import Evaluations, least_squares_run
from ..problem import Problem
from ..settings import SearchSettings
from .pruning import prune, prune_best, variable_replaced
from .scores import best_index, candidate_table, log_fvu, lowest, scores
from .variable_support import negligible_variables, unsupported_variables

# Rounds of setting aside unsupported variables, at most.
MAX_SUPPORT_ROUNDS = 3
# Residual evaluations that the refits of the pruning and the variable test share: a
# bound on their work that does not depend on the clock, so that the same rows always
# give the same selected equation (about 20 ms on 200 points of a 10-token equation).
SELECTION_EVALUATIONS = 600


@dataclass
class CandidateTable:
    """``equations`` (best first), the ``fitted`` skeletons and constants behind its
    rows (with the exact constants of a row once they are re-spelled), and the row of
    the selected equation."""

    equations: pd.DataFrame
    fitted: list[tuple[Skeleton, np.ndarray, list | None]]
    best_index: int


#: The plain models' origins (:mod:`..variables.plain`): they compete on held-out points
#: even off the front, where rows that fitted the training points closer hide them, and
#: a variable set aside for another row stays in them (the held-out choice tests each).
PLAIN_ORIGINS = ("linear", "backward", "polynomial")
#: The plain models that are lines: the model of data whose only law is a line plus noise.
LINE_ORIGINS = ("linear", "backward")
#: The plain model whose features the held-out folds chose (backward elimination): the
#: held-out choice keeps it where any of its features passes the shuffled copies, and its
#: constants stay as fitted under noise (:func:`...writing.writer.write_selected`).
FOLD_CHOSEN_ORIGINS = ("backward",)


def _kept(rows: CandidateRows) -> list[int]:
    """The rows that use no variable set aside by :func:`add_pruned`, and the plain models'."""
    return [i for i in range(len(rows)) if rows.origins[i] in PLAIN_ORIGINS or not rows.is_set_aside(i)]


def add_pruned(
    rows: CandidateRows,
    problem: Problem,
    complexity_penalty: float,
    seed: int = 0,
    deadline=None,
    settings: SearchSettings | None = None,
) -> None:
    """The best-scoring row with the parts that do not pay for their tokens dropped
    (:func:`.pruning.prune_best`), as a row of the same origin. While that best row
    fits only approximately and uses a variable that the data do not support
    (:mod:`.variable_support`), or uses a negligible one (exact or not), the rows that
    use it are set aside and the row with the variable replaced by a constant (its mean,
    or where the test found a better one, a quantile of its column; refitted, pruned) joins. The refits share
    ``SELECTION_EVALUATIONS`` residual evaluations; no clock is read but the
    ``deadline`` of a fit with ``max_time`` (:class:`.Evaluations`). The ``settings``
    (default :class:`.SearchSettings`) give the pruning's ``pruning_score_rise`` and
    the test's ``support_gain_ratio`` and ``support_max_gain``."""
    settings = SearchSettings() if settings is None else settings
    rise, ratio, gain = settings.pruning_score_rise, settings.support_gain_ratio, settings.support_max_gain
    evaluations = Evaluations(SELECTION_EVALUATIONS, deadline)
    for _ in range(MAX_SUPPORT_ROUNDS):
        kept = [i for i in range(len(rows)) if not rows.is_set_aside(i)]
        pruned = prune_best(
            [rows.skeletons[i] for i in kept],
            [rows.constants[i] for i in kept],
            [rows.losses[i] for i in kept],
            problem.X,
            problem.y,
            complexity_penalty,
            problem.weights,
            evaluations,
            rise,
        )
        if pruned is not None:
            row, fitted = pruned
            rows.derive(kept[row], fitted)
            kept.append(len(rows) - 1)
        best = kept[_lowest_score(rows, kept, complexity_penalty, problem.scale, problem.fvu_floor)]
        skeleton, constants, loss = rows.skeletons[best], rows.constants[best], rows.losses[best]
        unsupported = negligible_variables(
            skeleton, constants, problem.X, problem.y, loss, problem.scale, problem.weights
        )
        if not (unsupported or problem.is_exact(loss) or evaluations.spent):
            unsupported = unsupported_variables(
                skeleton,
                constants,
                problem.X,
                problem.y,
                problem.scale,
                problem.weights,
                seed,
                evaluations,
                ratio,
                gain,
            )
        if not unsupported:
            return
        reduced = _without(rows, best, unsupported, problem, complexity_penalty, evaluations, rise)
        if reduced is None:
            return
        rows.set_aside.update(unsupported)
        rows.derive(best, reduced)


def without_restatements(rows: CandidateRows, problem: Problem, complexity_penalty: float) -> CandidateRows:
    """The rows without those that predict as a better-scoring row does on the
    points of ``problem`` (:func:`.exactness.is_restatement`: ``x0*(1.0*sin(x1))``
    beside ``x0*sin(x1)``). Two such rows have square roots of their losses at most
    the root of the tolerance apart, so only those pairs are compared."""
    kept = _kept(rows)
    losses = np.array([rows.losses[i] for i in kept], dtype=np.float64)
    order = np.asarray(kept)[np.argsort(
        scores(
            log_fvu(losses, problem.scale, problem.fvu_floor),
            [len(rows.skeletons[i]) for i in kept],
            complexity_penalty,
        ),
        kind="stable",
    )]  # fmt: skip
    reach = restatement_reach(problem.scale)
    distinct: list[tuple[float, np.ndarray]] = []  # root loss and predictions of the rows kept
    dropped = set()
    for i in order:
        if not np.isfinite(rows.losses[i]):
            continue
        with np.errstate(all="ignore"):
            predicted = rows.skeletons[i].program(problem.X, np.asarray(rows.constants[i], dtype=np.float64))
        if not np.all(np.isfinite(predicted)):
            continue
        root = float(np.sqrt(rows.losses[i]))
        if any(
            abs(root - other_root) <= reach
            and is_restatement(float(np.average((predicted - other) ** 2, weights=problem.weights)), problem.scale)
            for other_root, other in distinct
        ):
            dropped.add(int(i))
        else:
            distinct.append((root, predicted))
    return rows.at([i for i in range(len(rows)) if i not in dropped])


def _lowest_score(
    rows: CandidateRows, kept: list[int], complexity_penalty: float, variance: float, floor: float
) -> int:
    """Position in ``kept`` of the row of ``rows`` with the lowest selection score (fits
    below the fraction of variance unexplained ``floor`` tie)."""
    losses = np.array([rows.losses[i] for i in kept], dtype=np.float64)
    fvus = log_fvu(losses, variance, floor)
    return lowest(scores(fvus, [len(rows.skeletons[i]) for i in kept], complexity_penalty))


def _without(rows: CandidateRows, row, replacements, problem, complexity_penalty, evaluations, rise) -> Fitted | None:
    """Row ``row`` with each variable of ``replacements`` replaced by its constant there,
    refitted and pruned (``rise``: :func:`.pruning.prune`'s ``max_score_rise``); ``None``
    when it is not finite."""
    tokens, values = list(rows.skeletons[row].tokens), rows.constants[row]
    for variable, value in replacements.items():
        tokens, values = variable_replaced(tokens, values, variable, problem.X, problem.weights, value)
    program = PrefixProgram(tokens)
    refitted = least_squares_run(
        program, problem.X, problem.y, values, weights=problem.weights, evaluations=evaluations
    )
    values = values if refitted is None else refitted
    pruned = prune(
        Skeleton(tuple(tokens)), values, problem.X, problem.y, complexity_penalty, problem.weights, evaluations, rise
    )
    return pruned if np.isfinite(pruned.loss) else None


def tabulate(
    rows: CandidateRows,
    complexity_penalty: float,
    variance: float,
    loss_scale: float,
    expression: Callable[[Skeleton, np.ndarray], sympy.Expr],
    floor: float = FVU_FLOOR,
) -> CandidateTable:
    """The rows sorted by score (:func:`.selection.candidate_table`, with the
    variance of ``y`` in the search's units and the ``floor`` at which fits tie,
    :attr:`.problem.Problem.fvu_floor`); the table's ``loss`` is multiplied
    by ``loss_scale`` (into the units of ``y``) and its ``expression`` written by
    ``expression``. Rows that use a variable set aside by :func:`add_pruned` are
    left out, but for the plain models' (:data:`PLAIN_ORIGINS`)."""
    kept = _kept(rows)
    # Every row is written as is, under one switch of SymPy's evaluation: SymPy clears
    # its caches at every switch (1 ms), which the rows' own switches then do not make.
    with sympy.evaluate(False):
        written = [
            {
                "expression": expression(rows.skeletons[i], rows.constants[i]),
                "skeleton": rows.skeletons[i].sympy,
                "loss": rows.losses[i],
                "complexity": len(rows.skeletons[i]),
                "log_prob": rows.log_probs[i],
                "origin": rows.origins[i],
            }
            for i in kept
        ]
    equations, order = candidate_table(written, complexity_penalty, variance, floor)
    order = np.asarray(kept)[order]
    with np.errstate(over="ignore"):
        equations["loss"] *= loss_scale
    fitted = [(rows.skeletons[i], np.asarray(rows.constants[i], dtype=np.float64), None) for i in order]
    try:
        best = best_index(equations)
    except ValueError:
        raise ValueError(
            "No candidate equation is finite on the training data: every one overflows or is undefined at "
            "some points. Look for extreme values in X and y (e.g. magnitudes near 1e308, or features spanning "
            "hundreds of orders of magnitude), and transform or rescale them (e.g. take logs) before fitting."
        ) from None
    return CandidateTable(equations, fitted, best)
