"""The time budget of one ``fit``: when each stage of its plan ends, and what ran.

A fit runs one plan of work, the same with and without ``max_time`` (see
``docs/usage.md``): the network's steps (decodings, each followed by its constant
fits), its second looks, Operon's chunks of generations, the selection. Without
``max_time`` the plan runs to its end (fixed work) and no stage has a deadline. With
it, the plan is cut, never changed: a fit has four moments on one monotonic clock, its
start, the end of the network's stages, the end of the refinement (Operon) and the
final end. The refinement ends ``reserve`` seconds before the final end, kept for the
selection; the network's stages end where the time left still holds the refinement's
whole work (``refinement_seconds``, its estimate), but no earlier than
``network_share`` of the time before the refinement's end. So a budget that holds the
whole plan cuts nothing, and its fit is the fixed-work fit. Every stage asks the
:class:`Budget` (or a :class:`Deadline` it hands out), so a test drives a whole fit
with one injected clock, and every stage records in ``Budget.plan`` what it ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: The fit's pace (:meth:`Budget.pace`) counts at most this: where the process waited for
#: a cluster's workers, their work is not its CPU time.
MAX_PACE = 4.0


def monotonic_clock() -> float:
    """The default clock: :func:`time.perf_counter`, the clock of the timings."""
    return time.perf_counter()


def process_clock() -> float:
    """The default clock of the pace: :func:`time.process_time`, this process's CPU seconds."""
    return time.process_time()


@dataclass(frozen=True)
class Deadline:
    """A moment ``at`` of ``clock`` after which a stage starts nothing new."""

    at: float
    clock: Callable[[], float] = monotonic_clock

    def passed(self) -> bool:
        return self.clock() > self.at

    def left(self) -> float:
        """Seconds until the deadline (negative once it passed)."""
        return self.at - self.clock()

    def holds(self, seconds: float) -> bool:
        """Whether the time left holds ``seconds`` of work."""
        return self.left() >= seconds

    def halfway(self) -> Deadline:
        """The deadline halfway between now and this one."""
        return Deadline(self.at - 0.5 * self.left(), self.clock)


@dataclass
class Calibration:
    """The machine's pace as one fit measures it, for splitting that fit's budget:
    Operon's seconds per model evaluated per point. It starts from the development
    machine's (2,000 models on 128 points in 0.067 s) and each timed run of Operon on at
    least ``min_points`` points sets it (on fewer, a generation's fixed cost inflates it),
    on the process's own timer, not the budget's clock, which a test may drive. Each
    fit has its own, so no fit's pace carries into another; ``plan_`` reports it."""

    operon_seconds_per_evaluation_point: float = 2.6e-7
    min_points: int = 100

    def operon_seconds(self, evaluations: float, n_points: int) -> float:
        """Seconds for ``evaluations`` models on ``n_points`` at this pace."""
        return evaluations * n_points * self.operon_seconds_per_evaluation_point

    def measured(self, seconds: float, evaluations: int, n_points: int) -> None:
        """A timed run: ``evaluations`` models on ``n_points`` took ``seconds``."""
        if n_points >= self.min_points:
            self.operon_seconds_per_evaluation_point = seconds / (max(1, evaluations) * n_points)


@dataclass(frozen=True)
class Step:
    """One unit of the plan as it ran: its name, its seconds, and how it ended
    (``"done"``, ``"cut"`` by a deadline, or ``"skipped: <why>"``)."""

    unit: str
    seconds: float
    status: str


@dataclass(frozen=True)
class Budget:
    """When the stages of one fit end (see the module docstring); made by
    :meth:`.settings.SearchSettings.budget`.

    ``max_time``: seconds for the whole fit, ``None`` for fixed work;
    ``refinement_seconds``: the refinement's whole work as estimated (0 without one);
    ``network_share``: the network's least share of the time before the refinement's
    end; ``reserve_share`` and ``reserve_seconds``: kept at the end for the selection,
    this share of ``max_time`` but at most this many seconds; ``plan``: the steps run so far;
    ``cpu_clock``: the process's CPU seconds, for the :meth:`pace` (``cpu_started``: at the start).
    """

    started: float
    max_time: float | None
    refinement_seconds: float
    network_share: float
    reserve_share: float
    reserve_seconds: float
    clock: Callable[[], float] = monotonic_clock
    plan: list[Step] = field(default_factory=list, compare=False, repr=False)
    cpu_clock: Callable[[], float] = process_clock
    cpu_started: float | None = None

    def __post_init__(self):
        if self.cpu_started is None:
            object.__setattr__(self, "cpu_started", self.cpu_clock())

    @classmethod
    def until(cls, deadline: Deadline | None) -> Budget:
        """A budget whose stages all end at ``deadline``, on its clock (``None``: fixed work)."""
        if deadline is None:
            return cls(monotonic_clock(), None, 0.0, 1.0, 0.0, 0.0)
        return cls(deadline.clock(), deadline.left(), 0.0, 1.0, 0.0, 0.0, clock=deadline.clock)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def pace(self) -> float:
        """Seconds of the clock per second of this process's work since the start,
        between 1 and :data:`MAX_PACE`: about 2 where another process shares the core
        (the costs measured on an idle machine, which the steps that no clock cuts are
        judged by, take that much longer); 1 before any work, or where threads worked in
        parallel."""
        cpu = self.cpu_clock() - self.cpu_started
        return min(MAX_PACE, max(1.0, self.elapsed() / cpu)) if cpu > 0 else 1.0

    def _after(self, seconds: float) -> Deadline:
        return Deadline(self.started + seconds, self.clock)

    @property
    def reserve(self) -> float:
        """Seconds kept for the selection at the end."""
        return 0.0 if self.max_time is None else min(self.reserve_share * self.max_time, self.reserve_seconds)

    @property
    def refinement_end(self) -> Deadline | None:
        """When the search stops, the refinement included: the reserve before the end."""
        return None if self.max_time is None else self._after(self.max_time - self.reserve)

    @property
    def network_end(self) -> Deadline | None:
        """When the network's stages stop: where the time left holds the refinement's
        whole work, but not before ``network_share`` of the time before its end."""
        if self.max_time is None:
            return None
        search = self.max_time - self.reserve
        return self._after(max(self.network_share * search, search - self.refinement_seconds))

    @property
    def end(self) -> Deadline | None:
        """When the fit ends."""
        return None if self.max_time is None else self._after(self.max_time)

    def record(self, unit: str, seconds: float, status: str = "done") -> None:
        """Add a step of the plan as it ran."""
        self.plan.append(Step(unit, seconds, status))

    def status(self, deadline: Deadline | None) -> str:
        """``"cut"`` when ``deadline`` has passed (the step stopped at it), else ``"done"``."""
        return "cut" if deadline is not None and deadline.passed() else "done"
