"""Operon's islands, a source of the continuation (:mod:`..search.scheduler`): each turn
restarts Operon from new seeds, its population seeded with the best rows so far, on
``n_workers`` islands at once.

The islands run through joblib: in this process when there is one, else in threads
(pyoperon releases the GIL), or on a dask cluster's workers inside
``joblib.parallel_config(backend="dask")`` (``docs/cluster.md``). Inside a configured
process pool (loky, multiprocessing: a benchmark's, a grid search's) they stay in threads:
a pool started for every turn took seconds and ran past the fit's end. An island on another
worker reads its own clock: it gets the seconds left, not the fit's deadline. A turn's
islands run ``generations * 2**turn`` generations (at most 8 times Operon's), in
Operon's growing chunks, which the deadline only cuts.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field, replace

import numpy as np
from joblib import Parallel, delayed
from joblib.parallel import LokyBackend, MultiprocessingBackend, get_active_backend

from ..search.budget import Calibration, Deadline
from ..search.fitted import CandidateRows, Fitted, mse
from ..search.problem import Problem
from .refine import Refinement, refine
from .settings import OperonSettings, minimum_seconds


def refinement_rows(refined: Refinement, problem: Problem) -> CandidateRows:
    """Operon's models as rows of origin ``"operon"``, their losses on ``problem``."""
    rows = CandidateRows()
    for skeleton, values in zip(refined.skeletons, refined.constants):
        loss = mse(skeleton.program, problem.X, problem.y, values, problem.weights)
        rows.add(Fitted(skeleton, values, loss), origin="operon")
    return rows


def island(problem: Problem, seeds, settings: OperonSettings, seed: int, seconds: float | None, symbols: str):
    """One island on this worker's clock: Operon from ``seed`` with the ``seeds``, for at
    most ``seconds`` (``None``: its whole work)."""
    deadline = None if seconds is None else Deadline(time.perf_counter() + seconds)
    return refine(problem.X, problem.y, seeds, settings, seed, deadline, problem.weights, symbols)


def island_backend() -> str | None:
    """``"threading"`` where joblib's active backend is a pool of local processes, else
    ``None``: threads by default, a cluster's backend where one is configured."""
    backend, _ = get_active_backend(prefer="threads")
    return "threading" if isinstance(backend, (LokyBackend, MultiprocessingBackend)) else None


@dataclass
class OperonIslands:
    """Operon restarted on ``n_workers`` islands per turn (see the module docstring)."""

    problem: Problem
    settings: OperonSettings
    seed: int
    symbols: str
    n_workers: int = 1
    calibration: Calibration = field(default_factory=Calibration)
    name: str = "operon"

    def holds(self, deadline: Deadline | None, turn: int) -> bool:
        """Whether the time left holds a first generation (for more islands than cores:
        as many as share a core, one after the other)."""
        rounds = math.ceil(self.n_workers / (os.cpu_count() or 1))
        seconds = rounds * minimum_seconds(self.settings, len(self.problem.y), self.calibration)
        return deadline is None or deadline.holds(seconds)

    def island_seed(self, turn: int, worker: int) -> int:
        """The seed of island ``worker`` of ``turn``: new for every island, the same in every run."""
        return int(np.random.SeedSequence([self.seed, turn, worker]).generate_state(1)[0] % 2**31)

    def propose(self, rows: CandidateRows, turn: int, deadline: Deadline | None) -> CandidateRows:
        growth = min(2**turn, self.settings.max_growth)
        settings = replace(self.settings, generations=self.settings.generations * growth)
        seeds = rows.best_first()
        if self.n_workers == 1:  # in this process, on the fit's own clock
            refined = [
                refine(
                    self.problem.X,
                    self.problem.y,
                    seeds,
                    settings,
                    self.island_seed(turn, 0),
                    deadline,
                    self.problem.weights,
                    self.symbols,
                    self.calibration,
                )
            ]
        else:
            seconds = None if deadline is None else max(0.0, deadline.left())
            refined = Parallel(n_jobs=self.n_workers, backend=island_backend(), prefer="threads")(
                delayed(island)(self.problem, seeds, settings, self.island_seed(turn, w), seconds, self.symbols)
                for w in range(self.n_workers)
            )
        found = CandidateRows()
        for refinement in refined:
            found.extend(refinement_rows(refinement, self.problem))
        return found
