"""From decoded hypotheses to fitted candidate equations.

Each hypothesis is a skeleton in prefix notation. Skeletons are de-duplicated up to
the order of the operands of sums and products. A skeleton without any placeholder is
also tried with placeholders attached by the paper's rule (``sin(x)`` can become
``c*sin(c*x + c)``) when that gives at most ``MAX_ATTACHED_CONSTANTS`` constants.
Then the constants of every candidate are fitted (:mod:`.constants`).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from ...expression.skeleton import Skeleton
from ..budget import Deadline
from ..decoding.hypothesis import Hypothesis
from ..problem import Problem
from ..settings import SearchRequest
from .constants import ConstantFit, StartRunner, fit_constants, ignoring_warnings, warnings_silenced_by_caller

# Longer skeletons are not tried with attached placeholders: fitting in many
# dimensions costs more than the candidate is likely to be worth.
MAX_ATTACHED_CONSTANTS = 8
# Always fitted, so that some candidate is finite whatever the network proposes.
BASELINE = ("c",)
#: Origins fitted even after the deadline: the baseline and the exact polynomial.
ALWAYS_FITTED = ("baseline", "polynomial")


@dataclass(frozen=True)
class Candidate:
    """A skeleton to fit, its decoding score and where it came from."""

    skeleton: Skeleton
    log_prob: float
    origin: str  # "beam", "sample", "attached", "baseline", "polynomial" or "scaled"

    @property
    def complexity(self) -> int:
        return len(self.skeleton)


def skeleton_candidates(hypotheses: list[Hypothesis], origin: str = "beam", seen: set | None = None) -> list[Candidate]:
    """Skeletons from the hypotheses, best hypothesis first, then the constant
    baseline ``c``, leaving out those whose key is in ``seen`` (which is updated)."""
    candidates = []
    seen = set() if seen is None else seen
    for hypothesis in [*hypotheses, Hypothesis(BASELINE, float("-inf"))]:
        skeleton = Skeleton(hypothesis.tokens)
        variants = [(skeleton, "baseline" if skeleton.tokens == BASELINE else origin)]
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
    problem: Problem,
    request: SearchRequest,
    deadline: Deadline | None,
    first_index: int = 0,
    runner: StartRunner | None = None,
) -> list[ConstantFit | None]:
    """Fit every candidate's constants, ``request.n_restarts`` starts each, until the
    ``deadline``; the starts of candidate ``j`` are seeded by ``(request.seed,
    first_index + j)``, so results do not depend on ``request.n_jobs``: that many
    threads of this process share the fits, also under a cluster's joblib backend (no
    process to start, no data to copy), each with its own copy of the ``runner``.

    The work is one fixed sequence that the deadline only cuts short: the first start
    of every candidate, in order, then the further starts of those not yet exact. A
    candidate whose first start has not begun by the deadline gets ``None``, except the
    ones of :data:`ALWAYS_FITTED` origins (cheap, and they keep some candidate finite).
    """
    rngs = [np.random.default_rng((request.seed, first_index + index)) for index in range(len(candidates))]
    own, caller = threading.local(), threading.get_ident()

    def thread_runner() -> StartRunner | None:
        if runner is None or threading.get_ident() == caller:
            return runner
        if not hasattr(own, "runner"):
            own.runner = copy.deepcopy(runner)
        return own.runner

    def fit(index: int, n_restarts: int, previous: ConstantFit | None) -> ConstantFit | None:
        candidate = candidates[index]
        always = candidate.origin in ALWAYS_FITTED
        if previous is None and deadline is not None and deadline.passed() and not always:
            return None
        return fit_constants(
            candidate.skeleton.program,
            problem.X,
            problem.y,
            n_restarts,
            rngs[index],
            None if always else deadline,  # a deadline would leave their first start's constants at 1
            problem.weights,
            request.settings.lm_x_scale,
            previous,
            thread_runner(),
            request.settings.start_range,
            problem.typical_share,
        )

    def fit_in_thread(index: int, n_restarts: int, previous: ConstantFit | None) -> ConstantFit | None:
        with warnings_silenced_by_caller():
            return fit(index, n_restarts, previous)

    def run(jobs: list[tuple[int, int, ConstantFit | None]]) -> list[ConstantFit | None]:
        if request.n_jobs in (None, 1):
            return [fit(*job) for job in jobs]
        with ignoring_warnings():  # for the threads too, which leave the filters alone
            return Parallel(n_jobs=request.n_jobs, backend="threading")(delayed(fit_in_thread)(*job) for job in jobs)

    fits = run([(index, 1, None) for index in range(len(candidates))])
    if request.n_restarts > 1:
        more = [index for index, found in enumerate(fits) if found is not None and not problem.is_exact(found.mse)]
        for index, found in zip(more, run([(index, request.n_restarts, fits[index]) for index in more])):
            fits[index] = found
    return fits
