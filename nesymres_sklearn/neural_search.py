"""The network's part of ``fit``: load the model, encode the points, run the search,
and write its candidates over all features (:mod:`.search.variables.routing`).

This is the only module of the estimator's path that needs torch. The estimator
imports it on its first ``fit``, so unpickling a fitted estimator and predicting with
it need NumPy, SciPy and SymPy only.
"""

from __future__ import annotations

import ctypes
import os
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import torch

from . import original  # noqa: F401  (registers the authors' encoding, search and checkpoints)
from .network.encoding import encode_points, get_encoding
from .network.model import NeSymReSModel
from .network.weights import ModelSource, load_model, resolve_device
from .operon.plan import constant_runner
from .search.anytime import FULL_BEAM_SECONDS, SearchResult, search
from .search.budget import Budget
from .search.exhaustive import exhaustive_candidates, library, simplicity
from .search.inverted import inverted_candidates
from .search.problem import Problem
from .search.reciprocal import reciprocal_candidates
from .search.selection.table import CandidateRows
from .search.settings import SearchRequest
from .search.variables.assembly import kept_fits
from .search.variables.residual import residual_candidates
from .search.variables.routing import Route
from .shared_setting import SharedSetting

_torch_threads = SharedSetting()

# Budgets of at least this many seconds (and fixed work) take the network's second looks
# (:data:`SECOND_LOOKS`): a function of the budget, so their rows are the same for all of
# them (the full beam's budgets).
SECOND_LOOK_MIN_SECONDS = FULL_BEAM_SECONDS
# The exhaustive search takes 0.3-0.6 s for each way up on the development machine; at
# 1 s it would start after the other looks and spend Operon's share without finishing.
EXHAUSTIVE_MIN_SECONDS = 2.0


def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    return lambda: torch.set_num_threads(before)


@contextmanager
def _single_thread_on_cpu(device: torch.device):
    """Decode with one intra-op thread on CPU, restoring the setting afterwards.

    Beam search runs many tiny operations; extra threads only add synchronisation
    (on the 2-core development machine a beam-32 search took 0.2 s with one thread
    and up to 14 s with two while another process was busy). Fits running in threads
    of one process share the setting (:class:`.SharedSetting`).
    """
    if device.type != "cpu":
        yield
        return
    with _torch_threads.held(_one_thread):
        yield


def _after_fork_in_child() -> None:
    """A forked child starts with one intra-op thread: the parent's OpenMP and MKL
    thread pools are not fork-safe (the shared setting forgets the parent's fits itself)."""
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _mkl_free_buffers():
    """MKL's ``mkl_serv_free_buffers`` in torch's CPU library (``None`` where torch
    does not link MKL)."""
    try:
        library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
        return library.mkl_serv_free_buffers
    except (OSError, AttributeError):
        return None


# MKL keeps memory buffers per thread, with bookkeeping that a child forked after
# fits in several threads inherits half-made: a fit there then spun forever in MKL's
# allocator (2 of 16 trials). Freeing the buffers just before every fork leaves the child
# a clean allocator (none of 16 runs hung: ``benchmarks/studies/fork_safety.py``).
_free_mkl_buffers = _mkl_free_buffers()


def _before_fork() -> None:
    if _free_mkl_buffers is not None:
        _free_mkl_buffers()


os.register_at_fork(before=_before_fork)


def load_network(model: str | os.PathLike, revision: str | None, device: str) -> NeSymReSModel:
    """The estimator's ``model`` on its ``device`` (loaded once per process), and the
    exhaustive search's expressions (built once per process, in 0.2-0.3 s: with the
    model, not inside a fit's look, where no deadline could cut it)."""
    library()
    return load_model(ModelSource.parse(model, revision), device=resolve_device(device))


def propose_and_fit(
    network: NeSymReSModel,
    problem: Problem,
    request: SearchRequest,
    budget: Budget,
    after_first_round: Callable[[SearchResult], None] | None = None,
) -> SearchResult:
    """Candidates for the ``problem`` (already in the network's units, see
    :mod:`.search.scaling`) with their fitted constants (``after_first_round``: see
    :func:`.search.anytime.search`); warns when the numbers lie outside what the number
    encoding represents well."""
    X, y = problem.X, problem.y
    encoding = get_encoding(network.config.encoding)
    message = encoding.range_warning(np.abs(np.concatenate([X.ravel(), y])))
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)
    device = next(network.parameters()).device
    runner = constant_runner(problem, request.settings.constant_optimizer)
    points = torch.from_numpy(encode_points(X, y, network.config.n_variables, network.config.encoding))
    with _single_thread_on_cpu(device):
        return search(network, points.to(device), problem, request, budget, runner, after_first_round)


@dataclass(frozen=True)
class NetworkRows:
    """The network's fitted candidates over all features, its decoding ``rounds`` and
    the seconds spent in ``encoding``, ``decoding``, ``constant_fitting`` and each of
    the :data:`SECOND_LOOKS`."""

    rows: CandidateRows
    rounds: int
    timings: dict[str, float]


def network_rows(
    network: NeSymReSModel, problem: Problem, route: Route, request: SearchRequest, budget: Budget
) -> NetworkRows:
    """The candidates of the network for what it reads of ``problem`` (``route``), over
    all features, with the linear and power-law ones when it does not see them all, and
    those of the :data:`SECOND_LOOKS` that apply, taken after the first round."""
    looks = [name for name, (applies, _) in SECOND_LOOKS.items() if applies(route, request, budget)]
    found_rows = {name: CandidateRows() for name in SECOND_LOOKS}
    seconds = dict.fromkeys(SECOND_LOOKS, 0.0)

    def look_again(first: SearchResult) -> None:
        for name in looks:
            moment = time.perf_counter()
            found_rows[name] = SECOND_LOOKS[name][1](network, problem, route, request, budget, first)
            seconds[name] = time.perf_counter() - moment
            if any(problem.is_exact_to_rounding(loss) for loss in found_rows[name].losses):
                break  # the looks after an exact one would only add slower candidates

    moment = time.perf_counter()
    found = propose_and_fit(network, route.problem, request, budget, look_again if looks else None)
    spent = found.decoding_seconds + found.fitting_seconds + sum(seconds.values())
    encoding = max(0.0, time.perf_counter() - moment - spent)
    rows = CandidateRows()
    for index, (candidate, fitted) in enumerate(zip(found.candidates, found.fitted())):
        fixed_work = index < found.first_round
        rows.add(
            route.back(fitted, problem), log_prob=candidate.log_prob, origin=candidate.origin, fixed_work=fixed_work
        )
    for name in SECOND_LOOKS:
        rows.extend(found_rows[name])
    rows.extend(route.all_feature_rows(problem, request.complexity_penalty))
    timings = {"encoding": encoding, "decoding": found.decoding_seconds, "constant_fitting": found.fitting_seconds}
    return NetworkRows(rows, found.rounds, timings | seconds)


def _first_round_solver(network: NeSymReSModel, request: SearchRequest, budget: Budget):
    """``Problem -> [(skeleton, constants, loss)]``: the network's first round on it,
    its fits stopping at the budget's ``network_end``."""
    first_round_only = replace(request, settings=replace(request.settings, stale_rounds=0))

    def solve(part: Problem):
        return propose_and_fit(network, part, first_round_only, budget).fitted()

    return solve


def _best_first(first: SearchResult) -> int | None:
    """Index of the first round's best fit (``None`` without fits)."""
    return int(np.argmin([fit.mse for fit in first.fits])) if first.fits else None


def residual_rows(
    network: NeSymReSModel, problem: Problem, route: Route, request: SearchRequest, budget: Budget, first: SearchResult
) -> CandidateRows:
    """Candidates that add the network's fits of the first round's residual to its best
    fit, over all features (:mod:`.search.variables.residual`; origin ``"residual"``)."""
    rows = CandidateRows()
    best = _best_first(first)
    if best is None:
        return rows
    fitted = route.back(first.fitted()[best], problem)
    runner = constant_runner(problem, request.settings.constant_optimizer)
    solve = _first_round_solver(network, request, budget)
    n_variables = network.config.n_variables
    found = residual_candidates(
        problem, fitted, route.columns, n_variables, request.seed, solve, budget.network_end, runner
    )
    for fitted in found:
        rows.add(fitted, origin="residual")
    return rows


def _first_round_inexact(first: SearchResult, route: Route) -> bool:
    """Whether the first round has fits and its best is not exact on what the network reads."""
    best = _best_first(first)
    return best is not None and not route.problem.is_exact(first.fits[best].mse)


def exhaustive_rows(
    network: NeSymReSModel, problem: Problem, route: Route, request: SearchRequest, budget: Budget, first: SearchResult
) -> CandidateRows:
    """Every small expression of the one variable the network reads, scaled and fitted
    (:mod:`.search.exhaustive`; origin ``"exhaustive"``), and of its reciprocal
    (:mod:`.search.inverted`: a group has no preferred way up), over all features: the
    simpler exact one (:func:`.exhaustive.simplicity`) when either way up has one, else
    the fits of both; none after a first round exact to rounding.

    It is the last look, taken when the others found nothing exact to rounding (the
    network's forms of a law read more naturally than the search's smallest one), and it
    may run until the refinement's end: Operon adds little where a law of one variable is
    exact, and its share is the time this search needs."""
    rows = CandidateRows()
    if any(route.problem.is_exact_to_rounding(fit.mse) for fit in first.fits):
        return rows
    keys: list[tuple] = []

    def solve(part: Problem):
        found = exhaustive_candidates(part, budget.refinement_end)
        keys.extend(simplicity(skeleton) for skeleton, _, _ in found)
        return found

    found = solve(route.problem) + inverted_candidates(route.problem, solve)
    exact = [index for index, (_, _, loss) in enumerate(found) if route.problem.is_exact_to_rounding(loss)]
    if exact:  # the simpler way up (each gives one exact fit at most)
        found = [found[min(exact, key=lambda index: keys[index])]]
    for fitted in found:
        rows.add(route.back(fitted, problem), origin="exhaustive")
    return rows


def reciprocal_rows(
    network: NeSymReSModel, problem: Problem, route: Route, request: SearchRequest, budget: Budget, first: SearchResult
) -> CandidateRows:
    """Candidates ``c/g`` from the network's fits ``g`` of ``1/y`` over what it reads,
    over all features (:mod:`.search.reciprocal`; origin ``"reciprocal"``); none after
    an exact first round."""
    rows = CandidateRows()
    if not _first_round_inexact(first, route):
        return rows
    runner = constant_runner(route.problem, request.settings.constant_optimizer)
    solve = _first_round_solver(network, request, budget)
    for fitted in reciprocal_candidates(route.problem, solve, budget.network_end, runner):
        rows.add(route.back(fitted, problem), origin="reciprocal")
    return rows


def inverted_rows(
    network: NeSymReSModel, problem: Problem, route: Route, request: SearchRequest, budget: Budget, first: SearchResult
) -> CandidateRows:
    """The network's kept fits (the best and the best-scoring, as the other looks keep)
    of ``y`` over the reciprocals of what it reads, and with the reciprocal look
    (:func:`reciprocal_rows`) its ``c/g`` of ``1/y`` there too, over all features
    (:mod:`.search.inverted`; origin ``"inverted"``); none after an exact first round."""
    rows = CandidateRows()
    if not _first_round_inexact(first, route):
        return rows
    solve = _first_round_solver(network, request, budget)
    reciprocal = _reciprocal_applies(route, request, budget)

    def solve_inverted(part: Problem):
        found = kept_fits(solve(part), part)
        if reciprocal:
            runner = constant_runner(part, request.settings.constant_optimizer)
            found += reciprocal_candidates(part, solve, budget.network_end, runner)
        return found

    for fitted in inverted_candidates(route.problem, solve_inverted):
        rows.add(route.back(fitted, problem), origin="inverted")
    return rows


def _reciprocal_applies(route: Route, request: SearchRequest, budget: Budget) -> bool:
    wanted = request.settings.reciprocal
    return (wanted is True or (wanted == "units" and request.reads_groups)) and _second_look_budget(budget)


def _second_look_budget(budget: Budget, minimum: float = SECOND_LOOK_MIN_SECONDS) -> bool:
    return (budget.max_time or np.inf) >= minimum


#: The network's second looks, taken after its first round, in this order, until one is
#: exact: their names (the origin of their rows and their key in ``timings_``), when
#: each applies and what it adds. Their searches are a first round each (the last, the
#: exhaustive search, is not the network's), their fits stop at the budget's
#: ``network_end`` (the exhaustive search's at ``refinement_end``), and their rows are
#: fixed work (all budgets that take them do), so they may seed Operon.
SECOND_LOOKS = {
    "residual": (
        lambda route, request, budget: (
            request.settings.residual and route.reads_the_most_relevant and _second_look_budget(budget)
        ),
        residual_rows,
    ),
    "reciprocal": (_reciprocal_applies, reciprocal_rows),
    "inverted": (
        lambda route, request, budget: (
            request.reads_groups and request.settings.inverted_groups and _second_look_budget(budget)
        ),
        inverted_rows,
    ),
    "exhaustive": (
        lambda route, request, budget: (
            request.settings.exhaustive
            and route.problem.X.shape[1] == 1
            and _second_look_budget(budget, EXHAUSTIVE_MIN_SECONDS)
        ),
        exhaustive_rows,
    ),
}


def decomposed_rows(
    network: NeSymReSModel, problem: Problem, request: SearchRequest, budget: Budget
) -> tuple[CandidateRows, float]:
    """With more features than the network's variables (and
    ``search_settings.decompose``), equations assembled from separable parts that the
    network solves (:mod:`.search.variables.decomposition`; origin ``"decomposed"``),
    and the seconds it took. Each part's search is its first round only (fixed work, on
    the fit's clock); none starts after ``budget.network_end``."""
    rows = CandidateRows()
    n_variables = network.config.n_variables
    if not request.settings.decompose or problem.X.shape[1] <= n_variables:
        return rows, 0.0
    # Imported when the stage runs (it is off by default).
    from .search.variables.decomposition import decomposed_candidates

    moment = time.perf_counter()
    fixed_work = replace(budget, max_time=None)

    def solve(part: Problem):
        return propose_and_fit(network, part, request, fixed_work).fitted()

    parts = decomposed_candidates(problem, n_variables, request.seed, solve, budget.network_end)
    for fitted in parts:
        rows.add(fitted, origin="decomposed")
    return rows, time.perf_counter() - moment
