"""The search as a whole: decode, fit, and, while time remains, draw more skeletons.

The first round decodes ``size`` skeletons (the model's beam search, or samples), adds
the exact polynomial of :mod:`.polynomial` when there is one, and fits them all; the
best fits of every round are also tried with an outer linear scaling
(:mod:`.linear_scaling`).
Without a time budget that is all (fixed work). With one, further rounds each sample
``samples_per_round`` more skeletons (:class:`.settings.SearchSettings`) with a new
seed and fit the new ones, until the budget's ``network_end`` (all of the budget for
the network alone; the fits of every round stop there too, so that a refinement gets
the rest), a fit is exact, or ``stale_rounds`` rounds in a row bring nothing new.

The first round is fixed work, fits included, whatever the budget: its duration is the
floor below which ``max_time`` cannot be honoured (see ``docs/usage.md``), and every
budget starts from the same candidates (each candidate's fit is seeded by its
position). Work then only accumulates, so a larger budget never ends with a worse best
candidate, only with more of them, and Operon, seeded by the first round alone, gets
the same seeds at every budget.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import torch

from ..network.model import NeSymReSModel
from .budget import Budget
from .candidates import Candidate, fit_candidates, skeleton_candidates
from .decoding import decode
from .fitting import ConstantFit
from .linear_scaling import scaled_candidates
from .polynomial import exact_polynomial
from .problem import Problem
from .settings import SearchRequest

logger = logging.getLogger(__name__)


@dataclass
class SearchResult:
    """The candidates and their fits, the first round's first (``first_round`` of
    them: fixed work, the same for every budget that lets that round finish)."""

    candidates: list[Candidate]
    fits: list[ConstantFit]
    rounds: int
    decoding_seconds: float
    fitting_seconds: float
    first_round: int


def search(
    model: NeSymReSModel, points: torch.Tensor, problem: Problem, request: SearchRequest, budget: Budget
) -> SearchResult:
    """Candidates and their fits for the ``problem`` encoded as ``points``, until the
    ``budget``'s ``network_end``."""
    rounds_end = budget.network_end
    n_features = problem.X.shape[1]
    settings = request.settings
    seen: set = set()
    candidates: list[Candidate] = []
    fits: list[ConstantFit] = []
    timings = {"decoding": 0.0, "fitting": 0.0}

    def run_round(hypotheses_for, origin, extra=(), deadline=rounds_end):
        moment = time.perf_counter()
        hypotheses = hypotheses_for()
        timings["decoding"] += time.perf_counter() - moment
        new = skeleton_candidates(hypotheses, origin, seen)
        for candidate in extra:
            if candidate.skeleton.key not in seen:
                seen.add(candidate.skeleton.key)
                new.append(candidate)
        moment = time.perf_counter()
        new_fits = fit_candidates(new, problem, request, deadline, len(candidates))
        scaled, scaled_fits = scaled_candidates(new, new_fits, problem, seen, settings, deadline)
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
    # The first round is fixed work: it runs to its end whatever the budget.
    if request.decoding == "beam":
        run_round(lambda: decode(model, points, request.size, n_features), "beam", extra, None)
    else:
        first = request.size, n_features, "sample"
        run_round(lambda: decode(model, points, *first, seed=request.seed), "sample", extra, None)
    first_round, rounds, stale = len(candidates), 1, 0
    while rounds_end is not None and not rounds_end.passed() and stale < settings.stale_rounds:
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
