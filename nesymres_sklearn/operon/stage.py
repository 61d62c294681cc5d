"""The estimator's Operon stage: the network's best fits seed Operon, whose models join
the candidates."""

from __future__ import annotations

import logging
import time

from ..search.budget import Budget, Calibration
from ..search.fitted import CandidateRows
from ..search.problem import Problem
from .islands import refinement_rows
from .refine import refine
from .settings import OperonSettings, minimum_seconds
from .trees import operon_symbols

logger = logging.getLogger(__name__)


def refine_candidates(
    rows: CandidateRows,
    problem: Problem,
    settings: OperonSettings,
    seed: int,
    budget: Budget,
    operators: frozenset[str] | None = None,
    calibration: Calibration | None = None,
) -> tuple[CandidateRows, dict | None]:
    """Operon's models as rows (origin ``"operon"``) and what ran (the estimator's
    ``refinement_``); no rows and ``None`` when a row already fits exactly or the time
    left before the ``budget``'s ``refinement_end`` does not hold Operon's first
    generation at the ``calibration``'s pace (:func:`.settings.minimum_seconds`), which its timed chunks set.

    Operon is seeded with the finite rows, best first, and runs its chunks of
    generations until ``refinement_end`` (:mod:`.refine`), with the allowed
    ``operators`` only (our tokens; ``None``: its whole function set). What ran goes to
    the ``budget``'s plan."""
    found = CandidateRows()
    if problem.is_exact(min(rows.losses)):
        logger.info("Operon skipped: a candidate of the network fits exactly.")
        budget.record("operon", 0.0, "skipped: a candidate fits exactly")
        return found, None
    end = budget.refinement_end
    calibration = Calibration() if calibration is None else calibration
    if end is not None and end.left() < minimum_seconds(settings, len(problem.y), calibration):
        logger.info("Operon skipped: the time left does not hold its first generation.")
        budget.record("operon", 0.0, "skipped: no time")
        return found, None
    moment, started = time.perf_counter(), budget.clock()
    seeds = rows.best_first()
    symbols = operon_symbols(operators)
    refined = refine(problem.X, problem.y, seeds, settings, seed, end, problem.weights, symbols, calibration)
    found = refinement_rows(refined, problem)
    logger.info(
        "Operon: %d seeds, %d generations, %d evaluations in %.2fs",
        refined.n_seeds,
        refined.generations,
        refined.evaluations,
        time.perf_counter() - moment,
    )
    unit = f"operon: {refined.generations} of {settings.generations} generations"
    budget.record(unit, budget.clock() - started, "done" if refined.generations >= settings.generations else "cut")
    return found, {
        "seeds": refined.n_seeds,
        "generations": refined.generations,
        "evaluations": refined.evaluations,
        "best_contains_a_seed": refined.from_seed,
    }
