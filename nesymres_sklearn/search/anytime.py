"""The network's search, as steps of one plan that a deadline only cuts.

The plan decodes a narrow beam first (``first_beam`` of
:class:`.settings.SearchSettings`) and fits its candidates, then the full beam
(``size``) and fits the candidates it adds; the first step also fits the exact
polynomial of :mod:`.polynomial` when there is one, and the best fits of every step are
also tried with an outer linear scaling (:mod:`.linear_scaling`). Without a time budget
that is all (fixed work). With one, the same steps run until the budget's
``network_end``: the fits stop there (first starts in order, then further starts, see
:func:`.candidates.fit_candidates`), the narrow beam is decoded only while the time
left holds ``first_decode_seconds`` and the full one only while it holds it at the pace
of the narrow one (a decoding cannot be cut). So a budget
that holds the plan runs all of it, and a smaller one a prefix: its candidates are a
larger one's first ones, and selection over them never returns a better-scoring
equation.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import torch

from ..network.model import NeSymReSModel
from .budget import Budget, Step
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
    """The candidates and their fits, and the steps of the plan that ran."""

    candidates: list[Candidate]
    fits: list[ConstantFit]
    decoding_seconds: float
    fitting_seconds: float
    steps: list[Step]

    def fitted(self) -> list[Fitted]:
        """Each candidate with its fit."""
        return [Fitted(c.skeleton, fit.constants, fit.mse) for c, fit in zip(self.candidates, self.fits)]


def beam_widths(size: int, first_beam: int) -> tuple[int, ...]:
    """The widths the plan decodes: ``first_beam`` then ``size``, or ``size`` alone
    when it is not wider."""
    return (first_beam, size) if first_beam < size else (size,)


def search(
    model: NeSymReSModel,
    points: torch.Tensor,
    problem: Problem,
    request: SearchRequest,
    budget: Budget,
    runner: StartRunner | None = None,
    seen: set | None = None,
) -> SearchResult:
    """Candidates and their fits for the ``problem`` encoded as ``points``, until the
    ``budget``'s ``network_end`` (no first decoding once the time left does not hold
    ``settings.first_decode_seconds`` at the budget's :meth:`~.budget.Budget.pace`);
    a ``runner`` runs the constant fitting's starts in compiled code first
    (:func:`.fitting.constants.run_start`). Skeletons whose keys are in ``seen`` are not
    fitted again (it gains the new ones)."""
    end = budget.network_end
    n_features = problem.X.shape[1]
    seen = set() if seen is None else seen
    candidates: list[Candidate] = []
    fits: list[ConstantFit] = []
    steps: list[Step] = []
    seconds = {"decoding": 0.0, "fitting": 0.0}
    polynomial = exact_polynomial(problem.X, problem.y, problem.weights)
    extra = () if polynomial is None else (Candidate(polynomial, float("-inf"), "polynomial"),)
    widths = beam_widths(request.size, request.settings.first_beam)
    seconds_per_beam, undecoded = 0.0, False
    for step, width in enumerate(widths):
        # the first decoding runs while the time left holds first_decode_seconds (else the
        # identities and the route took it: the baseline and the exact polynomial then stand
        # alone); later ones while it holds them at the first one's pace
        late = end is not None and not end.holds(
            request.settings.first_decode_seconds * budget.pace() if step == 0 else 0.0
        )
        if step > 0 and end is not None and (late or undecoded or not end.holds(seconds_per_beam * width)):
            steps.append(Step(f"decode {width}", 0.0, "skipped: no time"))
            break
        moment, started = time.perf_counter(), budget.clock()
        if late:
            hypotheses = []
        elif request.decoding == "beam":
            hypotheses = decode(model, points, width, n_features)
        else:
            hypotheses = decode(model, points, width, n_features, "sample", seed=request.seed + step)
        seconds["decoding"] += time.perf_counter() - moment
        seconds_per_beam, undecoded = (budget.clock() - started) / width, late  # no pace: no later decoding
        steps.append(Step(f"decode {width}", budget.clock() - started, "skipped: no time" if late else "done"))
        new = skeleton_candidates(hypotheses, request.decoding, seen)
        for candidate in extra if step == 0 else ():
            if candidate.skeleton.key not in seen:
                seen.add(candidate.skeleton.key)
                new.append(candidate)
        moment, started = time.perf_counter(), budget.clock()
        new_fits = fit_candidates(new, problem, request, end, len(candidates), runner)
        cut = any(fit is None for fit in new_fits)
        new, new_fits = [c for c, f in zip(new, new_fits) if f is not None], [f for f in new_fits if f is not None]
        scaled, scaled_fits = scaled_candidates(new, new_fits, problem, seen, request.settings, end, runner)
        seconds["fitting"] += time.perf_counter() - moment
        steps.append(Step(f"fit {width}", budget.clock() - started, "cut" if cut else budget.status(end)))
        candidates.extend(new + scaled)
        fits.extend(new_fits + scaled_fits)
        logger.info(
            "Beam %d: %d new skeletons fitted, %d of them scaled (%d in all) after %.2fs; best fraction of "
            "variance unexplained %.3g",
            width,
            len(new) + len(scaled),
            len(scaled),
            len(candidates),
            budget.elapsed(),
            min((fit.mse for fit in fits), default=float("inf")) / problem.scale,
        )
    return SearchResult(candidates, fits, seconds["decoding"], seconds["fitting"], steps)
