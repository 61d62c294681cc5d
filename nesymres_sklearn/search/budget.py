"""The time budget of one ``fit``: when each stage ends.

With ``max_time``, a fit has four moments, all on one clock: its start, the end of the
network's rounds (their constant fitting included), the end of the refinement
(Operon), and the final end. The refinement ends ``reserve`` seconds before the final
end, kept for the selection, whose refits share a number of evaluations and stop at
the final end (:func:`.selection.final.select`: without ``max_time`` the selected
equation does not depend on the clock, with it the promise holds); the network
takes ``network_share`` of the time up to the refinement's end when a refinement
follows, all of it otherwise. Without ``max_time`` no stage has a deadline (fixed
work). Every stage asks the :class:`Budget` (or the :class:`Deadline` it hands out),
so a test drives a whole fit with one injected clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


def wall_clock() -> float:
    """The default clock: seconds since the epoch (:func:`time.time`)."""
    return time.time()


@dataclass(frozen=True)
class Deadline:
    """A moment ``at`` of ``clock`` after which a stage starts nothing new."""

    at: float
    clock: Callable[[], float] = wall_clock

    def passed(self) -> bool:
        return self.clock() > self.at

    def left(self) -> float:
        """Seconds until the deadline (negative once it passed)."""
        return self.at - self.clock()

    def halfway(self) -> Deadline:
        """The deadline halfway between now and this one."""
        return Deadline(self.at - 0.5 * self.left(), self.clock)


@dataclass(frozen=True)
class Budget:
    """When the stages of one fit end (see the module docstring).

    ``max_time``: seconds for the whole fit, ``None`` for fixed work; ``refined``:
    whether a refinement (Operon) follows the network; ``network_share``: the
    network's share of the time before the refinement's end when one follows;
    ``reserve_share`` and ``reserve_seconds``: kept at the end for the selection, this
    share of ``max_time`` but at most this many seconds.
    """

    started: float
    max_time: float | None
    refined: bool = False
    network_share: float = 0.5
    reserve_share: float = 0.2
    reserve_seconds: float = 0.3
    clock: Callable[[], float] = wall_clock

    @classmethod
    def start(cls, max_time: float | None, refined: bool, clock: Callable[[], float] = wall_clock, **split) -> Budget:
        """A budget that starts now (``split``: the fields that divide it)."""
        return cls(clock(), max_time, refined, clock=clock, **split)

    def elapsed(self) -> float:
        return self.clock() - self.started

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
        """When the network's rounds and their constant fitting stop."""
        share = self.network_share if self.refined else 1.0
        return None if self.max_time is None else self._after(share * (self.max_time - self.reserve))

    @property
    def end(self) -> Deadline | None:
        """When the fit ends."""
        return None if self.max_time is None else self._after(self.max_time)
