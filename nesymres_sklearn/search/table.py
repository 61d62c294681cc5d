"""The candidate table: rows as the stages gather them, then sorted and selected
(:mod:`.selection`) into what the estimator shows as ``equations_``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import sympy

from ..expression.skeleton import Skeleton
from .budget import Deadline
from .problem import Problem
from .pruning import prune_best
from .selection import best_index, candidate_table


@dataclass
class CandidateTable:
    """``equations`` (best first), the ``fitted`` skeletons and constants behind its
    rows (with the exact constants of a row once they are re-spelled), and the row of
    the selected equation."""

    equations: pd.DataFrame
    fitted: list[tuple[Skeleton, np.ndarray, list | None]]
    best_index: int


class CandidateRows:
    """Candidates as the stages gather them: skeleton, constants and loss (mean
    squared error in the search's units), decoding score, origin, and whether the row
    came from fixed work (the same for every budget above the floor), which alone may
    seed Operon."""

    def __init__(self):
        self.skeletons, self.constants, self.losses, self.log_probs, self.origins = [], [], [], [], []
        self.fixed_work: list[bool] = []

    def __len__(self) -> int:
        return len(self.skeletons)

    def add(
        self, skeleton: Skeleton, constants, loss: float, log_prob: float, origin: str, fixed_work: bool = True
    ) -> None:
        for column, value in zip(self._columns(), (skeleton, constants, loss, log_prob, origin, fixed_work)):
            column.append(value)

    def extend(self, other: CandidateRows) -> None:
        for column, values in zip(self._columns(), other._columns()):
            column.extend(values)

    def _columns(self) -> tuple[list, ...]:
        return self.skeletons, self.constants, self.losses, self.log_probs, self.origins, self.fixed_work

    def best_first(self, fixed_work_only: bool = False) -> list[tuple[Skeleton, np.ndarray]]:
        """Skeletons and constants of the finite fits (of fixed work only, if asked),
        lowest loss first."""
        order = np.argsort(self.losses, kind="stable")
        return [
            (self.skeletons[i], self.constants[i])
            for i in order
            if np.isfinite(self.losses[i]) and (self.fixed_work[i] or not fixed_work_only)
        ]

    def add_pruned(self, problem: Problem, complexity_penalty: float, deadline: Deadline | None) -> None:
        """The best-scoring row with the parts that do not pay for their tokens dropped
        (:func:`.pruning.prune_best`), as a row of the same origin (until ``deadline``)."""
        pruned = prune_best(
            self.skeletons,
            self.constants,
            self.losses,
            problem.X,
            problem.y,
            complexity_penalty,
            problem.weights,
            deadline,
        )
        if pruned is not None:
            row, skeleton, constants, loss = pruned
            self.add(skeleton, constants, loss, self.log_probs[row], self.origins[row], self.fixed_work[row])

    def table(
        self,
        complexity_penalty: float,
        variance: float,
        loss_scale: float,
        expression: Callable[[Skeleton, np.ndarray], sympy.Expr],
    ) -> CandidateTable:
        """The rows sorted by score (:func:`.selection.candidate_table`, with the
        variance of ``y`` in the search's units); the table's ``loss`` is multiplied
        by ``loss_scale`` (into the units of ``y``) and its ``expression`` written by
        ``expression``."""
        rows = [
            {
                "expression": expression(skeleton, values),
                "skeleton": skeleton.sympy,
                "loss": loss,
                "complexity": len(skeleton),
                "log_prob": log_prob,
                "origin": origin,
            }
            for skeleton, values, loss, log_prob, origin, _ in zip(*self._columns())
        ]
        equations, order = candidate_table(rows, complexity_penalty, variance)
        with np.errstate(over="ignore"):
            equations["loss"] *= loss_scale
        fitted = [(self.skeletons[i], np.asarray(self.constants[i], dtype=np.float64), None) for i in order]
        try:
            best = best_index(equations)
        except ValueError:
            raise ValueError(
                "No candidate equation is finite on the training data: every one overflows or is undefined at "
                "some points. Look for extreme values in X and y (e.g. magnitudes near 1e308, or features spanning "
                "hundreds of orders of magnitude), and transform or rescale them (e.g. take logs) before fitting."
            ) from None
        return CandidateTable(equations, fitted, best)
