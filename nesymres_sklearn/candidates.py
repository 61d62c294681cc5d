"""From beam-search hypotheses to fitted candidate equations.

Each hypothesis is a skeleton in prefix notation. Skeletons are de-duplicated by
their SymPy form; a skeleton without any placeholder is also tried with placeholders
attached by the paper's rule (so ``sin(x)`` can become ``c*sin(c*x + c)``). Then the
constants of every candidate are fitted with BFGS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import sympy
from joblib import Parallel, delayed

from .beam import Hypothesis
from .evaluate import PrefixProgram
from .fitting import ConstantFit, fit_constants
from .prefix import prefix_to_sympy
from .skeleton import attach_constants, count_constants

_NOT_REAL = (sympy.zoo, sympy.nan, sympy.oo, -sympy.oo, sympy.I)
_SYMPY_FAILURES = (ArithmeticError, TypeError, ValueError, RecursionError)
# Always fitted, so that some candidate is finite whatever the network proposes.
BASELINE = ("c",)


@dataclass(frozen=True)
class Candidate:
    """A skeleton to fit: prefix tokens, its SymPy form and where it came from."""

    tokens: tuple[str, ...]
    skeleton: sympy.Expr
    log_prob: float
    origin: str  # "beam", "attached" or "baseline"

    @property
    def complexity(self) -> int:
        return len(self.tokens)


def skeleton_candidates(hypotheses: list[Hypothesis]) -> list[Candidate]:
    """Unique real skeletons from the hypotheses, best hypothesis first, then the
    constant baseline ``c``."""
    candidates, seen = [], set()
    for hypothesis in [*hypotheses, Hypothesis(BASELINE, float("-inf"))]:
        origin = "baseline" if hypothesis.tokens == BASELINE else "beam"
        variants = [(hypothesis.tokens, origin)]
        if count_constants(hypothesis.tokens) == 0:
            variants.append((tuple(attach_constants(hypothesis.tokens)[0]), "attached"))
        for tokens, origin in variants:
            try:
                skeleton = prefix_to_sympy(tokens)
            except _SYMPY_FAILURES:  # SymPy cannot even evaluate the skeleton
                continue
            key = sympy.srepr(skeleton)
            if key in seen or skeleton.has(*_NOT_REAL):
                continue
            seen.add(key)
            candidates.append(Candidate(tuple(tokens), skeleton, hypothesis.log_prob, origin))
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
        delayed(_fit_one)(candidate.tokens, X, y, n_restarts, (seed, index), deadline)
        for index, candidate in enumerate(candidates)
    )
    if n_jobs in (None, 1):
        return [function(*args, **kwargs) for function, args, kwargs in jobs]
    return Parallel(n_jobs=n_jobs)(jobs)


def _fit_one(tokens, X, y, n_restarts, seed, deadline) -> ConstantFit:
    return fit_constants(PrefixProgram(tokens), X, y, n_restarts, np.random.default_rng(seed), deadline)
