"""From decoded hypotheses to fitted candidate equations.

Each hypothesis is a skeleton in prefix notation. Skeletons are de-duplicated up to
the order of the operands of sums and products. A skeleton without any placeholder is
also tried with placeholders attached by the paper's rule (``sin(x)`` can become
``c*sin(c*x + c)``) when that gives at most ``MAX_ATTACHED_CONSTANTS`` constants.
Then the constants of every candidate are fitted with BFGS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from ..expression.skeleton import Skeleton
from .beam import Hypothesis
from .fitting import ConstantFit, fit_constants

# Longer skeletons are not tried with attached placeholders: BFGS in many
# dimensions costs more than the candidate is likely to be worth.
MAX_ATTACHED_CONSTANTS = 8
# Always fitted, so that some candidate is finite whatever the network proposes.
BASELINE = ("c",)


@dataclass(frozen=True)
class Candidate:
    """A skeleton to fit, its decoding score and where it came from."""

    skeleton: Skeleton
    log_prob: float
    origin: str  # "beam", "attached" or "baseline"

    @property
    def complexity(self) -> int:
        return len(self.skeleton)


def skeleton_candidates(hypotheses: list[Hypothesis]) -> list[Candidate]:
    """Unique skeletons from the hypotheses, best hypothesis first, then the
    constant baseline ``c``."""
    candidates, seen = [], set()
    for hypothesis in [*hypotheses, Hypothesis(BASELINE, float("-inf"))]:
        skeleton = Skeleton(hypothesis.tokens)
        variants = [(skeleton, "baseline" if skeleton.tokens == BASELINE else "beam")]
        if skeleton.n_constants == 0:
            attached = skeleton.with_constants_attached()
            if attached.n_constants <= MAX_ATTACHED_CONSTANTS:
                variants.append((attached, "attached"))
        for variant, origin in variants:
            if variant.key not in seen:
                seen.add(variant.key)
                candidates.append(Candidate(variant, hypothesis.log_prob, origin))
    return candidates


def fit_candidates(
    candidates: list[Candidate],
    X: np.ndarray,
    y: np.ndarray,
    n_restarts: int,
    seed: int,
    max_time: float | None,
    n_jobs: int | None,
) -> list[ConstantFit]:
    """Fit every candidate's constants; the i-th start of candidate j is seeded by
    ``(seed, j)``, so results do not depend on ``n_jobs``."""
    deadline = None if max_time is None else time.time() + max_time
    jobs = (
        delayed(fit_constants)(
            candidate.skeleton.program, X, y, n_restarts, np.random.default_rng((seed, index)), deadline
        )
        for index, candidate in enumerate(candidates)
    )
    if n_jobs in (None, 1):
        return [function(*args, **kwargs) for function, args, kwargs in jobs]
    return Parallel(n_jobs=n_jobs)(jobs)
