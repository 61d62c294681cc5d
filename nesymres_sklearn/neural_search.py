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
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from . import original  # noqa: F401  (registers the authors' encoding, search and checkpoints)
from .network.encoding import encode_points, get_encoding
from .network.model import NeSymReSModel
from .network.weights import ModelSource, load_model, resolve_device
from .operon.plan import constant_runner
from .search.anytime import SearchResult, search
from .search.budget import Budget
from .search.fitted import CandidateRows, Fitted
from .search.looks import LookContext, take_looks
from .search.looks.exhaustive import library
from .search.looks.residual import residual_candidates
from .search.noise import smoothed
from .search.problem import Problem
from .search.scheduler import row_scores
from .search.settings import SearchRequest
from .search.variables.features import by_relevance, on_features, other_subsets, relevance
from .search.variables.partial_line import PartialLine, ranked_subsets, ranking_points
from .search.variables.routing import Route
from .shared_setting import SharedSetting

_torch_threads = SharedSetting()


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
    reads: Problem | None = None,
    seen: set | None = None,
) -> SearchResult:
    """Candidates for the ``problem`` (already in the network's units, see
    :mod:`.search.scaling`) with their fitted constants (:func:`.search.anytime.search`);
    the network reads the points of ``reads`` (default: ``problem``'s), and skeletons in
    ``seen`` are not fitted again. Warns when the numbers lie outside what the number
    encoding represents well."""
    X, y = (problem if reads is None else reads).X, (problem if reads is None else reads).y
    encoding = get_encoding(network.config.encoding)
    message = encoding.range_warning(np.abs(np.concatenate([X.ravel(), y])))
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)
    device = next(network.parameters()).device
    runner = constant_runner(problem, request.settings.constant_optimizer)
    points = torch.from_numpy(encode_points(X, y, network.config.n_variables, network.config.encoding))
    with _single_thread_on_cpu(device):
        return search(network, points.to(device), problem, request, budget, runner, seen)


@dataclass(frozen=True)
class NetworkRows:
    """The network's fitted candidates over all features and the seconds spent in
    ``encoding``, ``decoding``, ``constant_fitting`` and each of the second looks
    (:data:`.search.looks.SECOND_LOOKS`)."""

    rows: CandidateRows
    timings: dict[str, float]


def network_rows(
    network: NeSymReSModel, problem: Problem, route: Route, request: SearchRequest, budget: Budget
) -> NetworkRows:
    """The candidates of the network for what it reads of ``problem`` (``route``), over
    all features, with the linear and power-law ones when it does not see them all, and
    those of the second looks that apply, taken after its first decodings (each while
    the time left holds their seconds and the route's); the steps that ran go to the
    ``budget``'s plan."""
    moment = time.perf_counter()
    reads = smoothed(route.problem, request.settings) if request.settings.network_reads_smoothed else None
    found = propose_and_fit(network, route.problem, request, budget, reads)
    budget.plan.extend(found.steps)
    encoding = max(0.0, time.perf_counter() - moment - found.decoding_seconds - found.fitting_seconds)

    def solve(part: Problem) -> list[Fitted]:
        return propose_and_fit(network, part, request, budget).fitted()

    def runner_for(part: Problem):
        return constant_runner(part, request.settings.constant_optimizer)

    context = LookContext(
        problem, route, request, found.fitted(), solve, network.config.n_variables, budget.network_end, runner_for
    )
    decoding = sum(step.seconds for step in found.steps if step.unit.startswith("decode"))
    routing = sum(step.seconds for step in budget.plan if step.unit == "route")  # a look ranks the features again
    looked, seconds = take_looks(context, budget, decoding + routing)
    rows = CandidateRows()
    for candidate, fitted in zip(found.candidates, found.fitted()):
        rows.add(route.back(fitted, problem), log_prob=candidate.log_prob, origin=candidate.origin)
    rows.extend(looked)
    rows.extend(route.all_feature_rows(problem, request.complexity_penalty))
    timings = {"encoding": encoding, "decoding": found.decoding_seconds, "constant_fitting": found.fitting_seconds}
    return NetworkRows(rows, timings | seconds)


def decomposed_rows(
    network: NeSymReSModel, problem: Problem, request: SearchRequest, budget: Budget
) -> tuple[CandidateRows, float]:
    """With more features than the network's variables (and
    ``search_settings.decompose``), equations assembled from separable parts that the
    network solves (:mod:`.search.variables.decomposition`; origin ``"decomposed"``),
    and the seconds it took. Each part's search runs in full (fixed work, on the fit's
    clock); none starts after ``budget.network_end``."""
    rows = CandidateRows()
    n_variables = network.config.n_variables
    if not request.settings.decompose or problem.X.shape[1] <= n_variables:
        return rows, 0.0
    # Imported when the stage runs (it is off by default).
    from .search.variables.decomposition import decomposed_candidates

    moment = time.perf_counter()
    fixed_work = replace(budget, max_time=None)

    def solve(part: Problem) -> list[Fitted]:
        return propose_and_fit(network, part, request, fixed_work).fitted()

    parts = decomposed_candidates(problem, n_variables, request.seed, solve, budget.network_end, request.settings)
    for fitted in parts:
        rows.add(fitted, origin="decomposed")
    return rows, time.perf_counter() - moment


def _single_decoding(request: SearchRequest, **changes) -> SearchRequest:
    """``request`` decoding its ``size`` skeletons at once (no narrower first beam), with ``changes``."""
    return replace(request, settings=replace(request.settings, first_beam=request.size), **changes)


def _decodings(result: SearchResult) -> list[float]:
    """The seconds of each decoding of ``result``: a source's pace."""
    return [step.seconds for step in result.steps if step.unit.startswith("decode")]


@dataclass
class NetworkSampler:
    """The network sampled beyond its beam, a source of the continuation
    (:mod:`.search.scheduler`): each turn draws ``request.size`` skeletons (decoding
    ``"sample"``, a seed of its own) while reading all of ``problem``'s points (even
    turns) or a random half of them (odd turns), fits those not drawn before on all the
    points, and writes them over all features with ``back``; a turn starts while the
    time left holds a decoding at the pace of the last (``decoding_seconds``: at first,
    the plan's)."""

    network: NeSymReSModel
    problem: Problem
    request: SearchRequest
    back: Callable[[list[Fitted]], CandidateRows]
    decoding_seconds: float = 0.0
    seen: set = field(default_factory=set)
    name: str = "network"

    def holds(self, deadline, turn: int) -> bool:
        """Whether the time left holds a decoding (which cannot be cut) at the pace of the last."""
        return deadline is None or deadline.holds(self.decoding_seconds)

    def propose(self, rows: CandidateRows, turn: int, deadline) -> CandidateRows:
        rng = np.random.default_rng([self.request.seed, turn])
        reads = self.problem
        if turn % 2:
            half = np.sort(rng.choice(len(self.problem.y), size=len(self.problem.y) // 2, replace=False))
            weights = None if self.problem.weights is None else self.problem.weights[half]
            reads = Problem(self.problem.X[half], self.problem.y[half], weights)
        request = _single_decoding(self.request, decoding="sample", seed=int(rng.integers(2**31)))
        found = propose_and_fit(self.network, self.problem, request, Budget.until(deadline), reads, set(self.seen))
        self.seen.update(candidate.skeleton.key for candidate in found.candidates)  # fitted (a cut fit may come again)
        self.decoding_seconds = max([self.decoding_seconds, *_decodings(found)])
        return self.back(found.fitted())


@dataclass
class SubsetLook:
    """The network on other subsets of the features, a source of the continuation where
    it read only the most relevant ones, ``read`` (:attr:`.Route.reads_the_most_relevant`):
    turn ``k`` reads the ``k``-th other subset of as many features, drawn from the
    ``settings.subset_features`` most relevant (:func:`.variables.features.other_subsets`,
    ranked by the route's ``scores``), decodes ``request.size`` skeletons, fits them on all
    the points and writes them over all the features of ``problem``. A turn starts while
    subsets are left and the time left holds a decoding at the pace of the last."""

    network: NeSymReSModel
    problem: Problem
    request: SearchRequest
    read: np.ndarray
    scores: np.ndarray
    decoding_seconds: float = 0.0
    name: str = "subsets"
    subsets: list[np.ndarray] = field(init=False)

    def __post_init__(self):
        self.subsets = other_subsets(self.scores, len(self.read), self.read, self.request.settings.subset_features)

    def holds(self, deadline, turn: int) -> bool:
        return turn < len(self.subsets) and (deadline is None or deadline.holds(self.decoding_seconds))

    def propose(self, rows: CandidateRows, turn: int, deadline) -> CandidateRows:
        written = CandidateRows()
        if turn >= len(self.subsets):
            return written
        subset = self.subsets[turn]
        part = Problem(self.problem.X[:, subset], self.problem.y, self.problem.weights)
        found = propose_and_fit(
            self.network, part, _single_decoding(self.request, seed=self.request.seed + turn), Budget.until(deadline)
        )
        self.decoding_seconds = max([self.decoding_seconds, *_decodings(found)])
        for skeleton, constants, loss in found.fitted():
            written.add(Fitted(on_features(skeleton, subset), constants, loss), origin=self.name)
        return written


@dataclass
class PartialLineLook:
    """The network on ``y`` less the line of all but a few features, a source of the
    continuation with more features than the network reads
    (:mod:`.search.variables.partial_line`). The first turn ranks the subsets of one to
    three of the ``settings.subset_features`` most relevant features (``scores``: the
    route's, else computed then on the ranking's points,
    :func:`.search.variables.features.relevance`); a ranking that ``deadline`` cuts is
    not kept (the next turn ranks again). Each turn then decodes on the next subset, and
    the sums ``g + line + c`` of its fits ``g`` join, refitted on ``y``; a subset is read
    once a decoding of it ran. A turn starts while subsets are left and the time left
    holds a decoding at the pace of the last."""

    network: NeSymReSModel
    problem: Problem
    request: SearchRequest
    scores: np.ndarray | None
    decoding_seconds: float = 0.0
    name: str = "partial line"
    subsets: list[tuple[int, ...]] | None = None
    read: int = 0  # how many of the subsets were decoded

    def holds(self, deadline, turn: int) -> bool:
        left = self.subsets is None or self.read < len(self.subsets)
        return left and (deadline is None or deadline.holds(self.decoding_seconds))

    def propose(self, rows: CandidateRows, turn: int, deadline) -> CandidateRows:
        found = CandidateRows()
        settings = self.request.settings
        if self.subsets is None:
            if self.scores is None:
                points = ranking_points(self.problem, self.request.seed)
                self.scores = relevance(points.X, points.y, self.request.seed)[0]
            pool = by_relevance(self.scores)[: settings.subset_features]
            self.subsets = ranked_subsets(
                self.problem,
                pool,
                self.network.config.n_variables,
                settings.held_out_folds,
                settings.held_out_standard_errors,
                self.request.seed,
                deadline,
            )
            if self.subsets is None:  # cut: ranked again on the next turn
                return found
        while self.read < len(self.subsets):
            partial = PartialLine.of(self.problem, self.subsets[self.read])
            if partial is not None:
                break
            self.read += 1  # its model's columns are not finite
        else:
            return found
        request = _single_decoding(self.request, seed=self.request.seed + self.read)
        result = propose_and_fit(self.network, partial.part(self.problem), request, Budget.until(deadline))
        self.read += any(step.unit.startswith("decode") and step.status == "done" for step in result.steps)
        self.decoding_seconds = max([self.decoding_seconds, *_decodings(result)])
        runner = constant_runner(self.problem, settings.constant_optimizer)
        for fitted in partial.candidates(
            result.fitted(), self.problem, settings.parts_complexity_penalty, deadline, runner
        ):
            found.add(fitted, origin=self.name)
        return found


@dataclass
class ResidualLook:
    """The network's look at what the best rows so far leave unexplained, a source of the
    continuation: turn ``k`` takes the ``k``-th best-scoring skeleton among the rows
    (cycling), the network reads the features most relevant to its residual, and the
    sums ``f + g + c`` of its fits ``g`` join, refitted on ``y``
    (:func:`.search.looks.residual.residual_candidates`, one step of backfitting), with
    the residual's line the first time a skeleton is looked at (``lined``). A turn starts
    while the time left holds a decoding at the pace of the last."""

    network: NeSymReSModel
    problem: Problem
    request: SearchRequest
    decoding_seconds: float = 0.0
    name: str = "residual"
    lined: set = field(default_factory=set)

    def holds(self, deadline, turn: int) -> bool:
        return deadline is None or deadline.holds(self.decoding_seconds)

    def propose(self, rows: CandidateRows, turn: int, deadline) -> CandidateRows:
        found = CandidateRows()
        order = np.argsort(row_scores(rows, self.problem, self.request.complexity_penalty), kind="stable")
        distinct: dict = {}  # each skeleton at its best row, best first
        for i in order:
            if np.isfinite(rows.losses[i]):
                distinct.setdefault(rows.skeletons[i].key, i)
        distinct = list(distinct.values())
        if not distinct:
            return found
        row = distinct[turn % len(distinct)]
        first = Fitted(rows.skeletons[row], rows.constants[row], rows.losses[row])
        request = _single_decoding(self.request, seed=self.request.seed + turn)
        decodings: list[float] = []

        def solve(part: Problem) -> list[Fitted]:
            result = propose_and_fit(self.network, part, request, Budget.until(deadline))
            decodings.extend(_decodings(result))
            return result.fitted()

        runner = constant_runner(self.problem, self.request.settings.constant_optimizer)
        n_variables = self.network.config.n_variables
        line = first.skeleton.key not in self.lined  # a skeleton's residual line joins once
        self.lined.add(first.skeleton.key)
        for fitted in residual_candidates(
            self.problem, first, np.arange(0), n_variables, request.seed, solve, deadline, runner, line=line
        ):
            found.add(fitted, origin=self.name)
        self.decoding_seconds = max([self.decoding_seconds, *decodings])
        return found
