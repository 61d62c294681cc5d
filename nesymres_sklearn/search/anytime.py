"""The search as a whole: decode, fit, and, while time remains, draw more skeletons.

The first round decodes ``size`` skeletons (the model's beam search, or samples), adds
the exact polynomial of :mod:`.polynomial` when there is one, and fits them; the
best fits of every round are also tried with an outer linear scaling
(:mod:`.linear_scaling`).
Without a time budget that is all (fixed work). With one, further rounds each sample
``samples_per_round`` more skeletons (:class:`.settings.SearchSettings`) with a new
seed and fit the new ones, until the budget's ``network_end`` (all of the budget for
the network alone; the fits of every round stop there too, so that a refinement gets
the rest), a fit is exact, or ``stale_rounds`` rounds in a row bring nothing new. A
round starts only while the time left holds a decoding as long as the last one and
the part of the selection of all candidates so far and its own that the budget's
reserve does not hold (:data:`SELECTION_SECONDS_PER_CANDIDATE`).

The work is one fixed, seeded sequence that the deadline only cuts short: the first
round's candidates in beam order (first starts, then further starts, see
:func:`.candidates.fit_candidates`), then the sampled rounds. A larger budget runs a
longer prefix of it, so its candidates include a smaller one's and selection over them
never returns a worse-scoring equation. Only a budget below
``FULL_BEAM_SECONDS`` narrows the beam (:func:`first_round_size`), so that decoding
alone does not spend it, and a beam wider than ``MAX_BEAMS_PER_SECOND`` times the
budget is cut to that (``beam_size=1000, max_time=1`` decoded for 1.37 s and left no
time to fit: issue 53).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..network.model import NeSymReSModel
from .budget import Budget
from .decoding.registry import decode
from .fitted import Fitted
from .fitting.candidates import Candidate, fit_candidates, skeleton_candidates
from .fitting.constants import ConstantFit, StartRunner
from .fitting.linear_scaling import scaled_candidates
from .fitting.polynomial import exact_polynomial
from .problem import Problem
from .settings import SearchRequest

logger = logging.getLogger(__name__)


@dataclass
class SearchResult:
    """The candidates and their fits, the first round's first (``first_round`` of
    them: the candidates that may seed Operon)."""

    candidates: list[Candidate]
    fits: list[ConstantFit]
    rounds: int
    decoding_seconds: float
    fitting_seconds: float
    first_round: int

    def fitted(self) -> list[Fitted]:
        """Each candidate with its fit."""
        return [Fitted(c.skeleton, fit.constants, fit.mse) for c, fit in zip(self.candidates, self.fits)]


# Budgets of at least this many seconds decode the full beam; smaller ones a beam in
# proportion (a beam of 32 decodes in 0.05-0.1 s on one core of the development machine).
FULL_BEAM_SECONDS = 1.0
# The selection's seconds per candidate (writing it in SymPy is most of them): 1.0 ms on
# the idle 2-core development machine (541 candidates in 0.53 s), about twice that beside
# two CPU-bound processes, where 1.5 ms still let 1 and 3 s fits overrun.
SELECTION_SECONDS_PER_CANDIDATE = 0.003
MIN_BEAM = 4
# The widest beam a second of budget decodes and fits: a beam of 256 took 0.56 s with its
# fits on the development machine, 1000 took 1.37 s and left no time to fit.
MAX_BEAMS_PER_SECOND = 128


def first_round_size(size: int, max_time: float | None) -> int:
    """Beams (or samples) of the first round: ``size``, or for a ``max_time`` below
    ``FULL_BEAM_SECONDS`` that share of it, and at most ``MAX_BEAMS_PER_SECOND`` times
    ``max_time``, at least ``MIN_BEAM`` (a function of the budget, not of the clock, so
    a fit stays reproducible)."""
    if max_time is None:
        return size
    share = size if max_time >= FULL_BEAM_SECONDS else round(size * max_time / FULL_BEAM_SECONDS)
    return min(size, max(MIN_BEAM, min(share, round(MAX_BEAMS_PER_SECOND * max_time))))


def search(
    model: NeSymReSModel,
    points: torch.Tensor,
    problem: Problem,
    request: SearchRequest,
    budget: Budget,
    runner: StartRunner | None = None,
    after_first_round: Callable[[SearchResult], None] | None = None,
) -> SearchResult:
    """Candidates and their fits for the ``problem`` encoded as ``points``, until the
    ``budget``'s ``network_end``; a ``runner`` runs the constant fitting's starts in
    compiled code first (:func:`.fitting.constants.run_start`); ``after_first_round``
    is given the first round's result before any further round starts (on the same
    clock: the time it takes is the further rounds' loss)."""
    rounds_end = budget.network_end
    n_features = problem.X.shape[1]
    settings = request.settings
    seen: set = set()
    candidates: list[Candidate] = []
    fits: list[ConstantFit] = []
    timings = {"decoding": 0.0, "fitting": 0.0, "last_decoding": 0.0}

    def run_round(hypotheses_for, origin, extra=()):
        moment, started = time.perf_counter(), budget.clock()
        hypotheses = hypotheses_for()
        timings["decoding"] += time.perf_counter() - moment
        timings["last_decoding"] = budget.clock() - started
        new = skeleton_candidates(hypotheses, origin, seen)
        for candidate in extra:
            if candidate.skeleton.key not in seen:
                seen.add(candidate.skeleton.key)
                new.append(candidate)
        moment = time.perf_counter()
        new_fits = fit_candidates(new, problem, request, rounds_end, len(candidates), runner)
        new, new_fits = [c for c, f in zip(new, new_fits) if f is not None], [f for f in new_fits if f is not None]
        scaled, scaled_fits = scaled_candidates(new, new_fits, problem, seen, settings, rounds_end, runner)
        timings["fitting"] += time.perf_counter() - moment
        candidates.extend(new + scaled)
        fits.extend(new_fits + scaled_fits)
        logger.info(
            "%s round: %d new skeletons fitted, %d of them scaled (%d in all) after %.2fs; best fraction of "
            "variance unexplained %.3g",
            origin,
            len(new) + len(scaled),
            len(scaled),
            len(candidates),
            budget.elapsed(),
            min(fit.mse for fit in fits) / problem.scale,
        )
        return len(new)

    polynomial = exact_polynomial(problem.X, problem.y, problem.weights)
    extra = () if polynomial is None else (Candidate(polynomial, float("-inf"), "polynomial"),)
    size = first_round_size(request.size, budget.max_time)
    if request.decoding == "beam":
        run_round(lambda: decode(model, points, size, n_features), "beam", extra)
    else:
        run_round(lambda: decode(model, points, size, n_features, "sample", seed=request.seed), "sample", extra)
    first_round, rounds, stale = len(candidates), 1, 0
    if after_first_round is not None:
        after_first_round(
            SearchResult(list(candidates), list(fits), 1, timings["decoding"], timings["fitting"], first_round)
        )

    def time_for_a_round() -> bool:
        selection = (len(candidates) + settings.samples_per_round) * SELECTION_SECONDS_PER_CANDIDATE
        return rounds_end.left() > timings["last_decoding"] + max(0.0, selection - budget.reserve)

    while rounds_end is not None and stale < settings.stale_rounds and time_for_a_round():
        if problem.is_exact(min(fit.mse for fit in fits)):
            break
        round_seed = request.seed + rounds
        found = run_round(
            lambda s=round_seed: decode(model, points, settings.samples_per_round, n_features, "sample", seed=s),
            "sample",
        )
        stale = 0 if found else stale + 1
        rounds += 1
    return SearchResult(candidates, fits, rounds, timings["decoding"], timings["fitting"], first_round)
