"""Operon's genetic programming, seeded with the network's fitted candidates.

pyoperon's scikit-learn ``SymbolicRegressor`` has no seeding parameter, but it can
continue from a population (``warm_start``): a fit with ``generations=0`` builds the
random initial population, the seeds replace its worst parents (the first
``population_size`` entries of ``individuals_``; the rest is the offspring pool), and
each further fit runs a chunk of generations from there. The chunks grow by one
generation each, 1, 2, 3, ... up to ``max_chunk_generations`` of
:class:`.OperonSettings`, until ``generations`` have run, with and without a deadline
(one plan). With one (Operon's own ``max_time`` counts whole seconds only), a chunk
runs only when the time left holds it at the rate measured so far, times that rate's
growth over the last chunk (:func:`chunk_seconds`: as the population evolves its models
lengthen, and a generation's cost grew 1.4x a chunk on 512 points at 60 s). The chunks
do not depend on the clock, and the same chunks from the same seeds give the same
populations, so a larger budget continues the run of a smaller one instead of starting
another, and a budget that holds them all runs the fixed work.

The result is Operon's best model after every chunk and its final Pareto front,
written back as our skeletons (:mod:`.trees`) with their constants refitted in double
precision (Operon computes in single precision). The best model of every chunk
is kept, so a larger budget's candidates include a smaller one's (its final front
aside).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyoperon as op
from pyoperon.sklearn import SymbolicRegressor

from ..expression.skeleton import Skeleton
from ..search.budget import Calibration, Deadline
from ..search.fitting.constants import least_squares_run
from .settings import OperonSettings
from .trees import OPERON_SYMBOLS, NotConvertible, from_operon, to_operon

# Relative difference tolerated between a seed's values in Operon (float32) and ours.
SEED_TOLERANCE = 1e-3


@dataclass
class Refinement:
    """Operon's candidates as skeletons with fitted constants, and what was run."""

    skeletons: list[Skeleton]
    constants: list[np.ndarray]
    n_seeds: int
    generations: int
    evaluations: int
    #: Whether Operon's best model contains a seed's structure (see :func:`contains_structure`).
    from_seed: bool = False


# Seeds shorter than this (``x_1``, ``c*x_1``) are part of almost any model; they do not
# count when asking whether a model descends from a seed.
MIN_SEED_STRUCTURE = 4


def _structure(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Tokens with each weighted variable ``mul c x_i`` read as ``x_i`` (Operon puts a
    weight on every variable, and evolves it)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i : i + 2] == ("mul", "c") and i + 2 < len(tokens) and tokens[i + 2].startswith("x_"):
            out.append(tokens[i + 2])
            i += 3
        else:
            out.append(tokens[i])
            i += 1
    return tuple(out)


def contains_structure(model: Skeleton, seeds: list[Skeleton]) -> bool:
    """Whether a seed of at least ``MIN_SEED_STRUCTURE`` tokens appears in ``model`` as a
    subtree, constants and variable weights aside (both written as Operon writes them)."""
    written = _structure(model.tokens)
    for seed in seeds:
        pattern = _structure(seed.tokens)
        if len(pattern) >= MIN_SEED_STRUCTURE and any(
            written[i : i + len(pattern)] == pattern for i in range(len(written) - len(pattern) + 1)
        ):
            return True
    return False


def _regressor(settings: OperonSettings, seed: int, symbols: str = OPERON_SYMBOLS) -> SymbolicRegressor:
    return SymbolicRegressor(
        allowed_symbols=symbols,
        population_size=settings.population_size,
        pool_size=settings.population_size,
        generations=0,
        max_evaluations=2**62,
        max_length=settings.max_length,
        optimizer_iterations=settings.optimizer_iterations,
        n_threads=1,
        random_state=seed,
    )


def _seed_trees(seeds, X: np.ndarray, hashes: list[int]) -> list[op.Tree]:
    """Operon trees of the seeds that convert and evaluate like ours on ``X``."""
    dataset = op.Dataset(np.asfortranarray(np.column_stack([X, np.zeros(len(X))])))
    rows = op.Range(0, len(X))
    table = op.DispatchTable()
    trees = []
    for skeleton, constants in seeds:
        try:
            tree = to_operon(skeleton, constants, hashes)
        except NotConvertible:
            continue
        with np.errstate(all="ignore"):
            ours = skeleton.program(X, constants)
            theirs = np.asarray(op.Evaluate(table, tree, dataset, rows), dtype=np.float64)
        if np.all(np.isfinite(ours)) and np.allclose(theirs, ours, rtol=SEED_TOLERANCE, atol=SEED_TOLERANCE):
            trees.append(tree)
    return trees


def chunks(settings: OperonSettings) -> Iterator[int]:
    """Generations of each chunk: 1, 2, 3, ... up to ``max_chunk_generations``, then
    that many, until ``generations`` have run (the last chunk takes the rest)."""
    done = 0
    for size in itertools.count(1):
        if done >= settings.generations:
            return
        chunk = min(size, settings.max_chunk_generations, settings.generations - done)
        done += chunk
        yield chunk


def chunk_seconds(chunk: int, per_generation: float, previous: float | None) -> float:
    """The seconds a ``chunk`` of generations is expected to take: the last chunk's seconds
    ``per_generation``, times their growth over the chunk before's (``previous``; ``None``
    after the first chunk), a growth never taken below 1."""
    growth = 1.0 if previous is None or previous <= 0 else max(1.0, per_generation / previous)
    return chunk * per_generation * growth


def refine(
    X: np.ndarray,
    y: np.ndarray,
    seeds: list[tuple[Skeleton, np.ndarray]],
    settings: OperonSettings,
    seed: int,
    deadline: Deadline | None = None,
    weights: np.ndarray | None = None,
    symbols: str = OPERON_SYMBOLS,
    calibration: Calibration | None = None,
) -> Refinement:
    """Run Operon on ``(X, y)`` from a population seeded with ``seeds`` (best first),
    until the ``deadline``, with the function set ``symbols`` (Operon's
    ``allowed_symbols``). Operon's own search is unweighted; ``weights`` weight the
    final refit of the constants. Timed chunks set the ``calibration``'s pace."""
    regressor = _regressor(settings, seed, symbols)
    moment = None if deadline is None else deadline.clock()
    regressor.fit(X, y)
    # the initial population costs about what a generation does: the first chunk's estimate
    seconds_per_generation = None if deadline is None else deadline.clock() - moment
    previous = None  # the chunk before's seconds per generation
    hashes = list(regressor.variables_)  # in feature order
    trees = _seed_trees(seeds[: math.floor(settings.max_seed_share * settings.population_size)], X, hashes)
    parents = regressor.individuals_[: settings.population_size]
    worst_first = np.argsort([-individual.GetFitness(0) for individual in parents], kind="stable")
    for slot, tree in zip(worst_first, trees):
        individual = op.Individual()
        individual.Genotype = tree
        regressor.individuals_[int(slot)] = individual
    feature_of_hash = {h: i for i, h in enumerate(hashes)}
    generations = evaluations = 0
    bests = []
    for chunk in chunks(settings):
        if deadline is not None:
            left = deadline.left()
            if left <= 0 or left < chunk_seconds(chunk, seconds_per_generation, previous):
                break
        regressor.set_params(warm_start=True, generations=chunk)
        moment, started = None if deadline is None else deadline.clock(), time.perf_counter()
        regressor.fit(X, y)
        generations += regressor.stats_["generations"]
        evaluations += regressor.stats_["evaluation_count"]
        if deadline is not None:
            previous = None if not bests else seconds_per_generation  # the initial population's is no rate
            seconds_per_generation = (deadline.clock() - moment) / max(1, regressor.stats_["generations"])
            if calibration is not None:
                calibration.measured(time.perf_counter() - started, regressor.stats_["evaluation_count"], len(X))
        bests.append(from_operon(regressor.model_, feature_of_hash))
    seeded = [from_operon(tree, feature_of_hash)[0] for tree in trees]
    # the last chunk's best is the final model; without a chunk, the initial population's
    found = [*reversed(bests)] or [from_operon(regressor.model_, feature_of_hash)]
    found += [from_operon(entry["tree"], feature_of_hash) for entry in regressor.pareto_front_]
    skeletons, constants, seen = [], [], set()
    for skeleton, values in found:
        if skeleton.key in seen:
            continue
        seen.add(skeleton.key)
        # The run keeps the lowest-cost constants it evaluated, Operon's own included.
        # (until the deadline: Operon's own float32 constants after it)
        refitted = (
            least_squares_run(skeleton.program, X, y, values, weights=weights, deadline=deadline)
            if len(values)
            else values
        )
        if refitted is None:
            refitted = values
        skeletons.append(skeleton)
        constants.append(np.asarray(refitted, dtype=np.float64))
    return Refinement(
        skeletons, constants, len(trees), generations, evaluations, contains_structure(found[0][0], seeded)
    )
