"""The search as a whole: decode, fit, and, while time remains, draw more skeletons.

The first round decodes ``size`` skeletons (the model's beam search, or samples), adds
the exact polynomial of :mod:`.polynomial` when there is one, and fits them all; the
best fits of every round are also tried with an outer linear scaling
(:mod:`.linear_scaling`).
Without a time budget that is all (fixed work). With one, further rounds each sample
``SAMPLES_PER_ROUND`` more skeletons with a new seed and fit the new ones, until the
settings' share of the budget is spent (all of it for the network alone; the fits of
every round stop there too, so that a refinement gets the rest), a fit is exact, or
``STALE_ROUNDS`` rounds in a row bring nothing new. Work only ever
accumulates (a small budget only cuts the first round's fits shorter; each
candidate's fit is seeded by its position), so a larger budget never ends with a
worse best candidate, only with more of them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch

from ..network.model import NeSymReSModel
from .candidates import Candidate, fit_candidates, skeleton_candidates
from .decoding import decode
from .fitting import EXACT_FIT, ConstantFit, variance
from .linear_scaling import scaled_candidates
from .polynomial import exact_polynomial
from .settings import SearchSettings, network_deadline, search_deadline

logger = logging.getLogger(__name__)

SAMPLES_PER_ROUND = 64
STALE_ROUNDS = 3


@dataclass
class SearchResult:
    candidates: list[Candidate]
    fits: list[ConstantFit]
    rounds: int
    decoding_seconds: float
    fitting_seconds: float


def search(
    model: NeSymReSModel,
    points: torch.Tensor,
    X: np.ndarray,
    y: np.ndarray,
    settings: SearchSettings,
    seed: int,
    started: float,
    weights: np.ndarray | None = None,
) -> SearchResult:
    """Candidates and their fits for the data ``(X, y)`` encoded as ``points``
    (``weights``: sample weights, mean 1); ``started`` is the :func:`time.time` at
    which the budget began."""
    rounds_end = network_deadline(started, search_deadline(started, settings.max_time), settings.network_share)
    n_features = X.shape[1]
    exact = EXACT_FIT * (variance(y, weights) or 1.0)
    seen: set = set()
    candidates: list[Candidate] = []
    fits: list[ConstantFit] = []
    timings = {"decoding": 0.0, "fitting": 0.0}

    def run_round(hypotheses_for, origin, extra=()):
        moment = time.perf_counter()
        hypotheses = hypotheses_for()
        timings["decoding"] += time.perf_counter() - moment
        new = skeleton_candidates(hypotheses, origin, seen)
        for candidate in extra:
            if candidate.skeleton.key not in seen:
                seen.add(candidate.skeleton.key)
                new.append(candidate)
        moment = time.perf_counter()
        new_fits = fit_candidates(
            new, X, y, settings.n_restarts, seed, rounds_end, settings.n_jobs, len(candidates), weights
        )
        scaled, scaled_fits = scaled_candidates(new, new_fits, X, y, weights, seen, rounds_end)
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
            time.time() - started,
            min(fit.mse for fit in fits) / (variance(y, weights) or 1.0),
        )
        return len(new)

    polynomial = exact_polynomial(X, y, weights)
    extra = () if polynomial is None else (Candidate(polynomial, float("-inf"), "polynomial"),)
    if settings.decoding == "beam":
        run_round(lambda: decode(model, points, settings.size, n_features), "beam", extra)
    else:
        run_round(lambda: decode(model, points, settings.size, n_features, "sample", seed=seed), "sample", extra)
    rounds, stale = 1, 0
    while rounds_end is not None and time.time() < rounds_end and stale < STALE_ROUNDS:
        if min(fit.mse for fit in fits) <= exact:
            break
        round_seed = seed + rounds
        found = run_round(
            lambda s=round_seed: decode(model, points, SAMPLES_PER_ROUND, n_features, "sample", seed=s), "sample"
        )
        stale = 0 if found else stale + 1
        rounds += 1
    return SearchResult(candidates, fits, rounds, timings["decoding"], timings["fitting"])
