"""The continuation of a fit: after its plan, candidate sources take turns until the
budget ends, a row is exact to rounding, or the user's stopping condition holds.

A :class:`Source` proposes new rows from the best rows so far (the network sampled
beyond its beam, Operon's islands restarted from new seeds, ...). The
:class:`Scheduler` asks the sources in turn, each in proportion to what it has added:
a source's *weight* is one plus the drops of the best selection score that its rows
made, and the next turn goes to the source that has spent least per weight (seconds on
the budget's clock with ``max_time``, turns at fixed work). Every turn is a step of
``plan_`` (``"continue: <source> <turn>"``). Without ``max_time`` the continuation runs
``steps`` turns (none by default: the plan alone, bit for bit), so a fixed-work fit is
reproducible; with it, the sources' turns are fixed work that the budget only cuts, so
a larger budget runs a smaller one's turns and more (on a clock that reads alike).
The turns end where the time left before the refinement's end holds the writing of
the rows they found (:func:`.selection.final.writing_seconds`) and, on a busy machine,
the reserve's work at the fit's pace (:meth:`.budget.Budget.pace`): the selection's
steps, which the reserve holds on an idle machine, take that much longer there.
No torch, no pyoperon: the sources bring their own.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .budget import Budget, Calibration, Deadline
from .fitted import CandidateRows
from .problem import Problem
from .selection.final import writing_seconds
from .selection.scores import log_fvu, pareto_front, scores

logger = logging.getLogger(__name__)


class Source(Protocol):
    """A candidate source of the continuation: a ``name`` (its steps' name in ``plan_``
    and its origin of rows) and its turns."""

    name: str

    def holds(self, deadline: Deadline | None, turn: int) -> bool:
        """Whether it has a ``turn``-th turn (0, 1, ...) and the time left before
        ``deadline`` holds it (the scheduler counts the turns: a fit that raises leaves
        the previous search's count)."""

    def propose(self, rows: CandidateRows, turn: int, deadline: Deadline | None) -> CandidateRows:
        """New rows over the fit's problem, its ``turn``-th call (0, 1, ...), from the
        ``rows`` so far, stopping at ``deadline``."""


@dataclass(frozen=True)
class StopCondition:
    """The user's ``early_stop_condition``: a loss (mean squared error in the units of
    ``y``) at or below which the search stops, or a callable of a row's loss and
    complexity that says when; ``None``: none. ``loss_scale`` turns the search's losses
    into the units of ``y``."""

    condition: float | Callable[[float, int], bool] | None
    loss_scale: float = 1.0

    def met(self, rows: CandidateRows) -> bool:
        """Whether a row of ``rows`` meets the condition."""
        if self.condition is None or not len(rows):
            return False
        losses = np.asarray(rows.losses, dtype=np.float64) * self.loss_scale
        if callable(self.condition):
            return any(
                bool(self.condition(float(loss), len(skeleton)))
                for loss, skeleton in zip(losses, rows.skeletons)
                if np.isfinite(loss)
            )
        return bool(np.nanmin(np.where(np.isfinite(losses), losses, np.inf)) <= self.condition)


@dataclass
class Shares:
    """What each source has spent (seconds or turns) and added (drops of the best score),
    its turns, and how many of its last turns in a row found no row (``empty``)."""

    spent: dict[str, float] = field(default_factory=dict)
    added: dict[str, float] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)
    empty: dict[str, int] = field(default_factory=dict)

    def weight(self, name: str) -> float:
        return 1.0 + self.added.get(name, 0.0)

    def next(self, names: list[str]) -> str:
        """The source that has spent least per weight (the first in ``names`` on ties)."""
        return min(names, key=lambda name: self.spent.get(name, 0.0) / self.weight(name))

    def record(self, name: str, spent: float, drop: float, n_rows: int = 1) -> None:
        self.spent[name] = self.spent.get(name, 0.0) + spent
        self.added[name] = self.added.get(name, 0.0) + max(0.0, drop)
        self.turns[name] = self.turns.get(name, 0) + 1
        self.empty[name] = 0 if n_rows else self.empty.get(name, 0) + 1

    def described(self) -> str:
        """Each source's share of what was spent, ``"operon 60%, network 40%"``."""
        total = sum(self.spent.values()) or 1.0
        return ", ".join(f"{name} {100 * spent / total:.0f}%" for name, spent in self.spent.items())


def row_scores(rows: CandidateRows, problem: Problem, complexity_penalty: float) -> np.ndarray:
    """The selection score of each row (:func:`.selection.scores.scores`)."""
    complexity = [len(skeleton) for skeleton in rows.skeletons]
    losses = np.asarray(rows.losses, dtype=np.float64)
    return scores(log_fvu(losses, problem.scale, problem.fvu_floor), complexity, complexity_penalty)


def best_score(rows: CandidateRows, problem: Problem, complexity_penalty: float) -> float:
    """The lowest selection score of ``rows`` (inf without a finite row)."""
    return float(np.min(row_scores(rows, problem, complexity_penalty))) if len(rows) else float("inf")


def trimmed(rows: CandidateRows, problem: Problem, complexity_penalty: float, keep: int) -> CandidateRows:
    """The ``keep`` best-scoring rows of ``rows`` and those on its Pareto front (at most
    ``keep`` of them, simplest first): what a long continuation hands to the selection,
    whose work grows with the rows."""
    if len(rows) <= keep:
        return rows
    losses = np.asarray(rows.losses, dtype=np.float64)
    complexity = np.array([len(skeleton) for skeleton in rows.skeletons])
    ranked = np.lexsort((complexity, row_scores(rows, problem, complexity_penalty)))
    front = np.flatnonzero(pareto_front(np.where(np.isfinite(losses), losses, np.inf), complexity))
    front = front[np.argsort(complexity[front], kind="stable")][:keep]
    return rows.at(sorted(set(ranked[:keep].tolist()) | set(front.tolist())))


@dataclass
class Scheduler:
    """Turns of the ``sources`` after the plan (see the module docstring).

    ``steps``: at most this many turns (``None``: until the budget ends, none without
    ``max_time``); ``keep``: the continuation's rows that reach the selection (its best
    and its front, :func:`trimmed`); ``kept``: the rows a turn may add (the user's
    operators and complexity); ``report``: called with a progress line at most once per
    ``report_every`` seconds of the budget's clock (``verbose``); ``least_charge``: the
    seconds a turn is charged at least, so that a source whose turns cost nothing does
    not take every turn; ``idle_turns``: a source whose last this many turns found no
    row has no more turns."""

    sources: list[Source]
    problem: Problem
    complexity_penalty: float
    budget: Budget
    stop: StopCondition = field(default_factory=lambda: StopCondition(None))
    steps: int | None = None
    keep: int = 32
    kept: Callable[[CandidateRows], CandidateRows] = lambda rows: rows  # noqa: E731
    report: Callable[[str], None] | None = None
    report_every: float = 1.0
    least_charge: float = 0.01
    idle_turns: int = 3
    shares: Shares = field(default_factory=Shares)

    def _turns_left(self, taken: int) -> bool:
        if self.steps is not None:
            return taken < self.steps
        return self.budget.max_time is not None

    def stopped(self, rows: CandidateRows) -> str | None:
        """Why the search stops at ``rows`` (an exact row, the user's condition), or ``None``."""
        finite = [loss for loss in rows.losses if np.isfinite(loss)]
        if finite and self.problem.is_exact_to_rounding(min(finite)):
            return "a row is exact to rounding"
        if self.stop.met(rows):
            return "early_stop_condition"
        return None

    def run(self, rows: CandidateRows) -> CandidateRows:
        """The new rows of the sources' turns, from the plan's ``rows``."""
        found, taken = CandidateRows(), 0
        last = self.budget.refinement_end
        best = best_score(rows, self.problem, self.complexity_penalty)
        reported = self.budget.clock()
        while self._turns_left(taken):
            every = CandidateRows()
            every.extend(rows)
            every.extend(found)
            why = self.stopped(every)
            if why is not None:
                self.budget.record("continue", 0.0, f"stopped: {why}")
                break
            # the selection writes every row: their time comes off the continuation's; at
            # the fit's pace (beside a busy core, about 2) the selection's own steps, which
            # the reserve holds on an idle machine, take that much longer too
            pace = self.budget.pace()
            kept = (pace - 1.0) * self.budget.reserve + pace * writing_seconds(found)
            end = None if last is None else Deadline(last.at - kept, last.clock)
            ready = [
                source.name
                for source in self.sources
                if self.shares.empty.get(source.name, 0) < self.idle_turns
                and source.holds(end, self.shares.turns.get(source.name, 0))
            ]
            if not ready:
                self.budget.record("continue", 0.0, "stopped: the time left holds no turn")
                break
            name = self.shares.next(ready)
            source = next(source for source in self.sources if source.name == name)
            turn = self.shares.turns.get(name, 0)
            started = self.budget.clock()
            new = self.kept(source.propose(every, turn, end))
            seconds = self.budget.clock() - started
            found.extend(new)
            found = trimmed(found, self.problem, self.complexity_penalty, self.keep)
            score = min(best, best_score(new, self.problem, self.complexity_penalty))
            charge = max(seconds, self.least_charge) if self.budget.max_time is not None else 1.0
            self.shares.record(name, charge, best - score if np.isfinite(best) else 0.0, len(new))
            best, taken = score, taken + 1
            self.budget.record(f"continue: {name} {turn}", seconds, self.budget.status(end))
            if self.report is not None and self.budget.clock() - reported >= self.report_every:
                reported = self.budget.clock()
                self.report(self.progress_line(rows, found))
        return found

    def progress_line(self, rows: CandidateRows, found: CandidateRows) -> str:
        """Time, best loss (in the units of ``y``) and its complexity, and the sources' shares."""
        every = CandidateRows()
        every.extend(rows)
        every.extend(found)
        if not len(every):
            return f"{self.budget.elapsed():.1f}s: no candidate yet; sources {self.shares.described()}"
        row = int(np.argmin(row_scores(every, self.problem, self.complexity_penalty)))
        loss, complexity = every.losses[row] * self.stop.loss_scale, len(every.skeletons[row])
        shares = self.shares.described()
        return f"{self.budget.elapsed():.1f}s: best loss {loss:.4g} at complexity {complexity}; sources {shares}"


#: The attributes of a source that its copies share (:meth:`ContinuationState.copied_sources`).
SHARED_BY_SOURCES = ("network", "problem")


@dataclass
class ContinuationState:
    """What a fit leaves for a ``warm_start`` fit on the same data: the data's
    ``fingerprint`` (:func:`data_fingerprint`), the subsampled ``points`` (``X``, ``y``,
    weights), the ``rows`` before the selection, the ``sources`` and their ``shares``, and
    the plan's fitted attributes that the continuation keeps (``columns``, ``inputs``,
    ``refinement``), the fit's ``calibration``, which its sources keep setting, and the plan's ``noise`` level."""

    fingerprint: str
    points: tuple
    rows: CandidateRows
    sources: list[Source]
    shares: Shares
    columns: np.ndarray
    inputs: list[str]
    refinement: dict | None
    calibration: Calibration
    noise: float

    def copied_sources(self) -> list[Source]:
        """Copies of the ``sources``, which a fit's turns advance (the network's sampler
        keeps the skeletons it drew): a fit that raises leaves this search's as they
        were. What they read stays shared: the network, the problem, the ``calibration``
        (a measurement, which the sources keep setting)."""
        shared = {id(self.calibration): self.calibration}
        for source in self.sources:
            for name in SHARED_BY_SOURCES:
                value = getattr(source, name, None)
                if value is not None:
                    shared[id(value)] = value
        return deepcopy(self.sources, shared)


def data_fingerprint(*parts) -> str:
    """A digest of the arrays and values in ``parts`` (``None`` included)."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            digest.update(repr((part.shape, part.dtype.str)).encode())
            digest.update(np.ascontiguousarray(part).tobytes())
        else:
            digest.update(repr(part).encode())
    return digest.hexdigest()
