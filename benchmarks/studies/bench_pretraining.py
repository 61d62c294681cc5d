"""Throughput of the pretraining pipeline on this machine (a script, not a test).

One mode per subcommand, each writing its own Markdown table (default
``benchmarks/results/pretraining/pretraining-<mode>.md``; ``--out`` overrides it). Every table heads
with the command line, the machine (cores, torch version and threads) and the load
average at the start, and ends with the load average at the end.

``loop``
    The training loop alone, on batches made beforehand (generation excluded), model on
    the CPU: the host time per step of the library's step
    (:func:`pretraining.train.train_step`: half-precision codes expanded in the step,
    fused optimiser, the loss summed on the device); ``--compile`` adds it through
    ``torch.compile``, ``--tiny-batch`` the same at batch 2 with 10 points, where compute
    is negligible and the time is the per-step host overhead (dispatch, optimiser, syncs)
    that bounds a GPU run. A second table breaks the step down by operator
    (``torch.profiler``, self CPU time; with ``--tiny-batch`` a third at batch 2). The
    step before its rework (commit f647fb9) against after is in the committed
    ``benchmarks/results/pretraining/pretraining-loop.md``.
``data``
    The data alone: ``N`` DataLoader workers (:func:`pretraining.data.batch_loader`) on
    a bank of realistic size, batches as in the GPU runs (256 equations, 50-200 points,
    frequency weighting to the power 0.75), equations/s in total and per worker after a
    warm-up, and one process calling :meth:`EquationSampler.batch` directly.
``bank``
    Skeleton bank generation (skeletons/s, per core).
``sampling``
    Batch sampling (equations/s on one core at 200 and 500 points per equation).
``sizes``
    Training per model size on the CPU (the library step, pre-made batches).
``steady``
    The steady rate of the real training command (``pretraining.train``) with its
    default thread counts against an oversubscribed setting: the rate of every
    ``--log-every`` window after the first.
``all``
    ``bank``, ``sampling``, ``sizes`` and ``steady`` in one go, into
    ``benchmarks/results/pretraining/pretraining-benchmark.md`` (also when no mode is given).

``sampling``, ``sizes``, ``steady`` and ``loop`` use ``--bank FOLDER``, or else a
temporary bank of ``--n-skeletons`` skeletons built first.

Usage::

    python -m benchmarks.studies.bench_pretraining loop [--model-size small] [--batch-size 256] [--points 125]
        [--steps 20] [--warmup-steps 3] [--threads 1] [--compile] [--tiny-batch] [--bank FOLDER]
    python -m benchmarks.studies.bench_pretraining data --bank FOLDER [--bank-size 600000] [--workers 1 2]
        [--batch-size 256] [--min-points 50] [--max-points 200] [--frequency-power 0.75]
    python -m benchmarks.studies.bench_pretraining bank [--n-skeletons 1000]
    python -m benchmarks.studies.bench_pretraining sampling [--bank FOLDER]
    python -m benchmarks.studies.bench_pretraining sizes [--bank FOLDER] [--train-steps 3] [--train-batch-size 64]
    python -m benchmarks.studies.bench_pretraining steady [--bank FOLDER] [--steady-steps 400] [--model-size small]
        [--batch-size 64]
    python -m benchmarks.studies.bench_pretraining all [--n-skeletons 1000] [--train-steps 3] [--steady-steps 400]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from nesymres_sklearn.network.model import MODEL_SIZES, config_for_size
from pretraining import data as pretraining_data
from pretraining.bank import SkeletonBank, build_bank
from pretraining.config import TrainConfig
from pretraining.data import BatchConfig, BatchStream, EquationSampler, batch_loader, batch_rng
from pretraining.runtime import Ranks, autocast_dtype
from pretraining.train import Runtime, State, learning_rate, loss_function, make_state, train_step

RESULTS = Path(__file__).resolve().parents[1] / "results" / "pretraining"
OUTPUTS = {
    "loop": "pretraining-loop.md",
    "data": "pretraining-data.md",
    "bank": "pretraining-bank.md",
    "sampling": "pretraining-sampling.md",
    "sizes": "pretraining-sizes.md",
    "steady": "pretraining-steady.md",
    "all": "pretraining-benchmark.md",
}
SEED = 0


# --- the table's head and foot -----------------------------------------------------


def _load() -> str:
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def header(title: str, argv: list[str]) -> list[str]:
    """Title, command line, machine and load average at the start."""
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return [
        f"# {title}",
        "",
        f"Command: `python -m benchmarks.studies.bench_pretraining {shlex.join(argv)}`  ",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), Python {platform.python_version()}, {gpu}.  ",
        f"Load average at the start (1/5/15 min): {_load()}.",
        "",
    ]


def footer() -> list[str]:
    return [
        "",
        f"Load average at the end (1/5/15 min): {_load()} on {os.cpu_count()} cores "
        "(other processes share the machine; higher load means lower numbers).",
    ]


@contextlib.contextmanager
def bank_folder(bank: Path | None, n_skeletons: int):
    """``bank``, or a temporary bank of ``n_skeletons`` built on all cores."""
    if bank is not None:
        yield Path(bank)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cores = os.cpu_count() or 1
        folder = Path(tmp) / "bank"
        build_bank(folder, n_skeletons=n_skeletons, n_heldout=0, seed=SEED, n_jobs=cores, chunk_size=25,
                   chunks_per_shard=8 * cores)  # fmt: skip
        yield folder


def _bank_line(bank: SkeletonBank, given: Path | None, prefix: bool = False) -> str:
    where = f"`{given}`" if given is not None else "a temporary bank built for this run"
    first = " (the first of the bank)" if prefix else ""
    return f"Bank: {where}, {len(bank):,} training skeletons{first}, {bank.n_variables} variables."


# --- bank generation, batch sampling -----------------------------------------------


def bench_bank(folder: Path, n_skeletons: int, n_jobs: int) -> dict:
    start = time.perf_counter()
    metadata = build_bank(
        folder, n_skeletons=n_skeletons, n_heldout=0, seed=0, n_jobs=n_jobs, chunk_size=25, chunks_per_shard=8 * n_jobs
    )
    seconds = time.perf_counter() - start
    counts = metadata["counts"]["train"]
    return dict(
        n_jobs=n_jobs,
        skeletons=counts["accepted"],
        trees=counts["attempts"],
        seconds=seconds,
        per_second=counts["accepted"] / seconds,
        per_core=counts["accepted"] / seconds / n_jobs,
        trees_per_core=counts["attempts"] / seconds / n_jobs,
    )


def bank_section(tmp: Path, n_skeletons: int) -> tuple[list[str], Path]:
    """The bank generation table, and the bank made on all cores."""
    lines = [
        "## Skeleton bank generation (`pretraining.bank`)",
        "",
        "| joblib workers | skeletons | trees | seconds | skeletons/s | skeletons/s per core | trees/s per core |",
        "|---|---|---|---|---|---|---|",
    ]
    cores = os.cpu_count() or 1
    folder = None
    for n_jobs in sorted({1, cores}):
        folder = tmp / f"bank{n_jobs}"
        n = n_skeletons if n_jobs == cores else max(n_skeletons // 2, 100)
        r = bench_bank(folder, n, n_jobs)
        print(r, flush=True)
        lines.append(
            f"| {r['n_jobs']} | {r['skeletons']} | {r['trees']} | {r['seconds']:.1f} | "
            f"{r['per_second']:.1f} | {r['per_core']:.1f} | {r['trees_per_core']:.1f} |"
        )
    return lines, folder


def bench_batches(bank: SkeletonBank, n_points: int, batch_size: int, n_batches: int) -> dict:
    sampler = EquationSampler(bank, BatchConfig(batch_size=batch_size, min_points=n_points, max_points=n_points))
    sampler.batch(batch_rng(0, 0, 0))
    start = time.perf_counter()
    for index in range(1, n_batches + 1):
        sampler.batch(batch_rng(0, 0, index))
    seconds = time.perf_counter() - start
    return dict(n_points=n_points, batch_size=batch_size, per_second=n_batches * batch_size / seconds)


def sampling_section(bank: SkeletonBank) -> list[str]:
    lines = [
        "## Batch sampling (`pretraining.data`, one core)",
        "",
        "| points per equation | batch size | equations/s |",
        "|---|---|---|",
    ]
    for n_points in (200, 500):
        r = bench_batches(bank, n_points, 150, 20)
        print(r, flush=True)
        lines.append(f"| {r['n_points']} | {r['batch_size']} | {r['per_second']:.0f} |")
    return lines


# --- the training step --------------------------------------------------------------


def library_loop_iteration(
    state: State, config: TrainConfig, runtime: Runtime, compile: bool = False
) -> Callable[[dict], torch.Tensor]:
    """One iteration of :func:`pretraining.train.run_steps` on a step that is not a
    control step: the learning rate, :func:`~pretraining.train.train_step`, the clock,
    and the loss added to the meter's sum on the device (not read)."""
    loss = loss_function(state.model, compile=compile)
    meter = {"loss": 0.0}

    def iteration(batch: dict) -> torch.Tensor:
        value, _ = train_step(batch, loss, state, config, runtime, learning_rate(state, config))
        runtime.clock()
        state.step += 1
        meter["loss"] = meter["loss"] + value
        return value

    return iteration


def loop_config(model_size: str, batch_size: int, points: int, threads: int) -> TrainConfig:
    return TrainConfig.from_dict(
        dict(model_size=model_size, batch_size=batch_size, min_points=points, max_points=points, device="cpu",
             num_threads=threads, seed=SEED, num_workers=0)
    )  # fmt: skip


def cpu_runtime(config: TrainConfig) -> Runtime:
    device = torch.device("cpu")
    return Runtime(Ranks(), device, autocast_dtype(config.optimisation.precision, device), Path(tempfile.gettempdir()))


def make_batches(sampler: EquationSampler, n_batches: int, batch_size: int | None = None) -> list[dict]:
    """Batches ``0..n_batches-1`` of stream 0, as the loader makes them (``codes``, ``targets``)."""
    return [sampler.batch(batch_rng(SEED, 0, index), batch_size) for index in range(n_batches)]


@dataclass
class Contender:
    """A loop iteration timed on its batches."""

    label: str
    iteration: Callable[[dict], torch.Tensor]
    batches: list[dict]
    seconds: list[float] = field(default_factory=list)
    first_seconds: float = math.nan
    warmup_seconds: float = math.nan
    first_loss: float = math.nan

    @property
    def batch_size(self) -> int:
        return len(self.batches[0]["targets"])

    @property
    def mean_points(self) -> float:
        return float(np.mean([batch["codes"].shape[1] for batch in self.batches]))

    def summary(self) -> dict:
        q1, median, q3 = np.percentile(self.seconds, [25, 50, 75])
        return dict(median=median, q1=q1, q3=q3, per_second=self.batch_size / median)


def time_contenders(contenders: list[Contender], warmup: int, steps: int) -> None:
    """Warm-up steps for each (the first timed alone; each starts from the same RNG
    state), then ``steps`` timed steps, the contenders taking turns at every step so
    that they share the machine's load."""
    for contender in contenders:
        torch.manual_seed(SEED)
        start = time.perf_counter()
        loss = contender.iteration(contender.batches[0])
        contender.first_seconds = time.perf_counter() - start
        contender.first_loss = float(loss)
        for index in range(1, warmup):
            contender.iteration(contender.batches[index % len(contender.batches)])
        contender.warmup_seconds = time.perf_counter() - start
    for index in range(warmup, warmup + steps):
        for contender in contenders:
            batch = contender.batches[index % len(contender.batches)]
            start = time.perf_counter()
            contender.iteration(batch)
            contender.seconds.append(time.perf_counter() - start)


def profile_iteration(iteration: Callable, batches: list[dict], steps: int, top: int = 12) -> tuple[list[dict], dict]:
    """The ``top`` operators by self CPU time over ``steps`` steps (``torch.profiler``),
    per step, and the totals per step."""
    from torch.profiler import ProfilerActivity, profile

    iteration(batches[0])  # the profiler's own warm-up
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for index in range(steps):
            iteration(batches[index % len(batches)])
    events = list(profiler.key_averages())
    total = sum(event.self_cpu_time_total for event in events)
    rows = [
        dict(
            op=event.key,
            calls=event.count / steps,
            self_ms=event.self_cpu_time_total / 1000 / steps,
            share=100 * event.self_cpu_time_total / total if total else math.nan,
            total_ms=event.cpu_time_total / 1000 / steps,
        )
        for event in sorted(events, key=lambda event: event.self_cpu_time_total, reverse=True)[:top]
    ]
    totals = dict(self_ms=total / 1000 / steps, calls=sum(event.count for event in events) / steps)
    return rows, totals


def _profile_table(title: str, rows: list[dict], totals: dict, steps: int) -> list[str]:
    lines = [
        title,
        "",
        f"Self CPU time of all operators: {totals['self_ms']:.2f} ms per step (mean of {steps} profiled steps, "
        f"profiler overhead included), {totals['calls']:.0f} operator calls per step (all nesting levels).",
        "",
        "| operator | calls per step | self CPU ms per step | share of self CPU | CPU ms per step with children |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['op']}` | {r['calls']:.0f} | {r['self_ms']:.3f} | {r['share']:.1f}% | {r['total_ms']:.3f} |"
        )
    return lines


def bench_loop(args, bank: SkeletonBank) -> tuple[list[str], dict]:
    """The ``loop`` tables: host time per step, and the profile of the step. Also
    returns the contenders' results by label."""
    config = loop_config(args.model_size, args.batch_size, args.points, args.threads)
    model_config = config_for_size(args.model_size, bank.n_variables)
    runtime = cpu_runtime(config)
    sampler = EquationSampler(bank, config.data, model_config.n_variables, max_length=model_config.max_length)
    n_distinct = min(args.warmup_steps + args.steps, args.distinct_batches)
    batches = make_batches(sampler, n_distinct)
    state = make_state(config, model_config, runtime)
    step_iteration = library_loop_iteration(state, config, runtime)
    contenders = [Contender("step", step_iteration, batches)]
    if args.compile:
        compiled = library_loop_iteration(make_state(config, model_config, runtime), config, runtime, compile=True)
        contenders.append(Contender("step, compiled", compiled, batches))
    time_contenders(contenders, args.warmup_steps, args.steps)
    tiny = []
    if args.tiny_batch:
        tiny_config = loop_config(args.model_size, 2, 10, args.threads)
        tiny_sampler = EquationSampler(
            bank, tiny_config.data, model_config.n_variables, max_length=model_config.max_length
        )
        tiny_batches = make_batches(tiny_sampler, min(args.warmup_steps + args.tiny_steps, args.distinct_batches))
        tiny = [
            Contender(f"{contender.label}, tiny batch", contender.iteration, tiny_batches) for contender in contenders
        ]
        time_contenders(tiny, args.warmup_steps, args.tiny_steps)
    parameters = sum(p.numel() for p in state.model.parameters())
    lines = [
        _bank_line(bank, args.bank),
        "",
        f"Model {args.model_size} ({parameters:,} parameters) on the CPU, fp32, {torch.get_num_threads()} torch "
        f"thread(s). Batches made beforehand with `EquationSampler.batch` ({n_distinct} distinct, used in turn; "
        f"{args.points} points drawn per equation, each batch cut to its fewest valid points), generation excluded.",
        "",
        "Timed per step (`time.perf_counter`), one loop iteration without logging: "
        "`pretraining.train.learning_rate` + `train_step` (fused Adam, `clip_grad_norm_(foreach=True)`, "
        "`points_from_codes` in the loss) + the clock + the loss added on the device. "
        f"{args.warmup_steps} warm-up step(s) each (the first reported alone, compilation included), then the "
        "contenders take turns at every step; median and interquartile range of the timed steps. The loss at the "
        "first step (same initial weights, same batch) checks that the contenders train on the same data; the "
        "tiny-batch rows go on with the same models.",
        "",
        "## Host time per step",
        "",
        "| step | batch | mean points kept | timed steps | median ms/step | IQR ms (25-75%) | equations/s | "
        "first step s | loss at the first step |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    results = {}
    for contender in contenders + tiny:
        r = contender.summary()
        results[contender.label] = dict(
            r, first_loss=contender.first_loss, first_seconds=contender.first_seconds,
            warmup_seconds=contender.warmup_seconds,
        )  # fmt: skip
        lines.append(
            f"| {contender.label} | {contender.batch_size} | {contender.mean_points:.0f} | {len(contender.seconds)} | "
            f"{1000 * r['median']:.2f} | {1000 * r['q1']:.2f}-{1000 * r['q3']:.2f} | {r['per_second']:.0f} | "
            f"{contender.first_seconds:.3f} | {contender.first_loss:.6f} |"
        )
    lines.append("")
    if args.compile:
        for suffix in ("", ", tiny batch") if tiny else ("",):
            ratio = results[f"step, compiled{suffix}"]["median"] / results[f"step{suffix}"]["median"]
            lines.append(f"- step, compiled{suffix}: {ratio:.2f} times the median time of the uncompiled step.")
        lines.append(
            f"- torch.compile: first step {results['step, compiled']['first_seconds']:.1f} s and "
            f"{args.warmup_steps} warm-up step(s) {results['step, compiled']['warmup_seconds']:.1f} s, compilation "
            f"included (uncompiled: {results['step']['first_seconds']:.2f} s and "
            f"{results['step']['warmup_seconds']:.2f} s)."
        )
    lines.append(
        "- On the CPU the copies to the device are no-ops and `points_from_codes` is real work; on a GPU the "
        "expansion is a few kernels."
    )
    if args.profile_steps:
        rows, totals = profile_iteration(step_iteration, batches, args.profile_steps)
        lines += [""] + _profile_table(
            f"## Where the step spends its host time (batch {args.batch_size}, top {len(rows)} operators "
            "by self CPU time)",
            rows,
            totals,
            args.profile_steps,
        )
        if tiny:
            rows, totals = profile_iteration(step_iteration, tiny[0].batches, args.profile_steps)
            lines += [""] + _profile_table(
                f"## Where the step spends its host time at batch 2 (top {len(rows)} operators)",
                rows,
                totals,
                args.profile_steps,
            )
    return lines, results


# --- the data alone ----------------------------------------------------------------


def data_sampler(args, bank: SkeletonBank) -> EquationSampler:
    """A sampler as :func:`pretraining.train.make_data` makes it, with a fresh cache."""
    model_config = config_for_size(args.model_size, bank.n_variables)
    config = BatchConfig(batch_size=args.batch_size, min_points=args.min_points, max_points=args.max_points,
                         weighting=args.weighting, frequency_power=args.frequency_power)  # fmt: skip
    return EquationSampler(bank, config, model_config.n_variables, max_length=model_config.max_length)


def bench_direct(sampler: EquationSampler, warmup: int, n_batches: int) -> dict:
    """Batches made by calling :meth:`EquationSampler.batch` in this process."""
    for index in range(warmup):
        sampler.batch(batch_rng(SEED, 0, index))
    equations, points = 0, 0
    start = time.perf_counter()
    for index in range(warmup, warmup + n_batches):
        batch = sampler.batch(batch_rng(SEED, 0, index))
        equations += len(batch["targets"])
        points += batch["codes"].shape[1]
    seconds = time.perf_counter() - start
    cache = sampler._skeleton.cache_info()  # the compile cache (benchmark code may look inside)
    return dict(workers=0, batches=n_batches, equations=equations, seconds=seconds, points=points / n_batches,
                hits=cache.hits, misses=cache.misses)  # fmt: skip


def bench_loader(sampler: EquationSampler, n_workers: int, warmup: int, n_batches: int) -> dict:
    """Batches from ``batch_loader`` with ``n_workers`` processes; the first ``warmup``
    (worker start-up included) are not timed."""
    stream = BatchStream(sampler, SEED, stream=0, start=0, stop=warmup + n_batches)
    batches = iter(batch_loader(stream, num_workers=n_workers))
    for _ in range(warmup):
        next(batches)
    equations, points, count = 0, 0, 0
    start = time.perf_counter()
    for batch in batches:
        equations += len(batch["targets"])
        points += batch["codes"].shape[1]
        count += 1
    seconds = time.perf_counter() - start
    del batches
    return dict(workers=n_workers, batches=count, equations=equations, seconds=seconds, points=points / count)


def bench_data(args, bank: SkeletonBank) -> tuple[list[str], list[dict]]:
    workers = args.workers or sorted({1, os.cpu_count() or 1})
    rows = []
    r = bench_direct(data_sampler(args, bank), args.warmup_batches, args.batches)
    print(r, flush=True)
    rows.append(r)
    for n_workers in workers:
        r = bench_loader(data_sampler(args, bank), n_workers, args.warmup_batches * n_workers, args.batches * n_workers)
        print(r, flush=True)
        rows.append(r)
    direct = rows[0]
    lookups = direct["hits"] + direct["misses"]
    lines = [
        _bank_line(bank, args.bank, prefix=args.bank_size is not None),
        "",
        f"Batches of {args.batch_size} equations, {args.min_points}-{args.max_points} points drawn per batch, "
        f"{args.weighting} weighting"
        + (f" to the power {args.frequency_power}" if args.weighting == "frequency" else "")
        + f", targets up to the {args.model_size} model's length. Each process is warmed up with "
        f"{args.warmup_batches} batch(es) (worker start-up included), then times {args.batches} batches; "
        "DataLoader workers compute with one torch thread each; nothing consumes the batches.",
        "",
        "## Data loading (`pretraining.data`, no training)",
        "",
        "| processes | batches timed | seconds | mean points kept | equations/s | equations/s per worker |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        label = "1 (this process, `EquationSampler.batch`)" if r["workers"] == 0 else f"{r['workers']} worker(s)"
        rate = r["equations"] / r["seconds"]
        lines.append(
            f"| {label} | {r['batches']} | {r['seconds']:.3f} | {r['points']:.0f} | {rate:.0f} | "
            f"{rate / max(r['workers'], 1):.0f} |"
        )
    lines += [
        "",
        f"Compile cache (`EquationSampler`'s lru_cache of `_COMPILED_SKELETONS` = "
        f"{pretraining_data._COMPILED_SKELETONS:,} compiled skeletons, one per process, starting empty): in this "
        f"process {direct['misses']:,} misses in {lookups:,} look-ups ({100 * direct['misses'] / max(lookups, 1):.1f}%)"
        f" over {args.warmup_batches + args.batches} batches. It misses more on a large bank: a skeleton drawn for "
        "the first time (or evicted, once a bank has more skeletons than the cache holds) is compiled again, so "
        "rates measured on a small bank overstate those of a large one, and every worker warms its own cache.",
    ]
    return lines, rows


# --- training per model size, steady rate of the training command ------------------


def bench_training(bank: SkeletonBank, size: str, batch_size: int, n_points: int, steps: int) -> dict:
    """The library's loop iteration on pre-made batches (one warm-up step)."""
    config = loop_config(size, batch_size, n_points, torch.get_num_threads())
    model_config = config_for_size(size, bank.n_variables)
    runtime = cpu_runtime(config)
    sampler = EquationSampler(bank, config.data, model_config.n_variables, max_length=model_config.max_length)
    state = make_state(config, model_config, runtime)
    contender = Contender(size, library_loop_iteration(state, config, runtime), make_batches(sampler, steps + 1))
    time_contenders([contender], 1, steps)
    seconds = float(np.mean(contender.seconds))
    return dict(
        size=size,
        parameters=sum(p.numel() for p in state.model.parameters()),
        batch_size=batch_size,
        points=float(np.mean([b["codes"].shape[1] for b in contender.batches[1:]])),
        seconds_per_step=seconds,
        per_second=batch_size / seconds,
    )


def sizes_section(bank: SkeletonBank, sizes: list[str], batch_size: int, steps: int) -> list[str]:
    lines = [
        f"## Training on this CPU (batch {batch_size}, 200 points drawn, `pretraining.train.train_step`: "
        f"fused Adam + clipping, fp32, mean of {steps} steps after a warm-up, batches made beforehand)",
        "",
        "| size | parameters | mean points kept | s/step | equations/s |",
        "|---|---|---|---|---|",
    ]
    for size in sizes:
        r = bench_training(bank, size, batch_size, 200, steps)
        print(r, flush=True)
        lines.append(
            f"| {r['size']} | {r['parameters']:,} | {r['points']:.0f} | "
            f"{r['seconds_per_step']:.2f} | {r['per_second']:.0f} |"
        )
    return lines


# (loader workers, training threads): the command's defaults, then more threads than cores.
STEADY_SETTINGS = ((1, None), (0, None), (1, 2 * (os.cpu_count() or 1)))
STEADY_WINDOW = 25


def bench_steady(
    bank: Path, run: Path, num_workers: int, num_threads: int | None, steps: int, model_size: str = "small",
    batch_size: int = 64,
) -> dict:  # fmt: skip
    """Equations/s of each ``STEADY_WINDOW``-step window of ``pretraining.train`` (the first left out)."""
    command = [
        sys.executable, "-m", "pretraining.train", "--bank", str(bank), "--out", str(run), "--model-size", model_size,
        "--batch-size", str(batch_size), "--min-points", "50", "--max-points", "200", "--max-steps", str(steps),
        "--num-workers", str(num_workers), "--log-every", str(STEADY_WINDOW), "--eval-every", str(10 * steps),
        "--checkpoint-every", str(10 * steps), "--no-progress",
    ]  # fmt: skip
    if num_threads is not None:
        command += ["--num-threads", str(num_threads)]
    environment = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    subprocess.run(command, check=True, env=environment, capture_output=True)
    rates = pd.read_csv(run / "log.csv")["equations_per_second"].iloc[1:]
    return dict(
        workers=num_workers,
        threads="default" if num_threads is None else str(num_threads),
        windows=len(rates),
        median=rates.median(),
        low=rates.min(),
        high=rates.max(),
    )


def steady_section(bank: Path, tmp: Path, steps: int, model_size: str = "small", batch_size: int = 64) -> list[str]:
    lines = [
        f"## Steady training rate (`pretraining.train`, {model_size} model, batch {batch_size}, 50-200 points, "
        f"{steps} steps; equations/s of each {STEADY_WINDOW}-step window after the first)",
        "",
        "Default threads: `max(1, cores - workers)` for the training process, one per loader worker.",
        "",
        "| loader workers | training threads | windows | median | lowest | highest |",
        "|---|---|---|---|---|---|",
    ]
    for num_workers, num_threads in STEADY_SETTINGS:
        run = tmp / f"run{num_workers}-{num_threads}"
        r = bench_steady(bank, run, num_workers, num_threads, steps, model_size, batch_size)
        print(r, flush=True)
        lines.append(
            f"| {r['workers']} | {r['threads']} | {r['windows']} | {r['median']:.0f} | {r['low']:.0f} | "
            f"{r['high']:.0f} |"
        )
    return lines


# --- command line ------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")

    def mode(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = modes.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--out", type=Path, default=RESULTS / OUTPUTS[name], help="Markdown file to write")
        return sub

    def bank_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--bank", type=Path, help="skeleton bank folder (default: build a temporary one)")
        sub.add_argument("--n-skeletons", type=int, default=1000, help="size of the temporary bank")

    sizes = tuple(MODEL_SIZES)
    loop = mode("loop", "host time per training step of the library's step (CPU)")
    bank_options(loop)
    loop.add_argument("--model-size", default="small", choices=sizes)
    loop.add_argument("--batch-size", type=int, default=256)
    loop.add_argument("--points", type=int, default=125, help="points drawn per equation (fixed)")
    loop.add_argument("--steps", type=int, default=20, help="timed steps of each contender")
    loop.add_argument("--warmup-steps", type=int, default=3, help="untimed steps first (at least 1)")
    loop.add_argument("--threads", type=int, default=1, help="torch threads")
    loop.add_argument("--compile", action="store_true", help="also time the library step through torch.compile")
    loop.add_argument("--tiny-batch", action="store_true", help="also time the step(s) at batch 2, 10 points")
    loop.add_argument("--tiny-steps", type=int, default=100, help="timed steps at the tiny batch")
    loop.add_argument("--profile-steps", type=int, default=5, help="steps profiled (0: no profile)")
    loop.add_argument("--distinct-batches", type=int, default=16, help="at most this many batches, used in turn")

    data = mode("data", "data loading alone: DataLoader workers and one process on a bank")
    data.add_argument("--bank", type=Path, required=True, help="skeleton bank folder (realistic size)")
    data.add_argument("--bank-size", type=int, help="use the first BANK_SIZE skeletons only")
    data.add_argument("--workers", type=int, nargs="+", help="numbers of loader workers (default: 1 and the cores)")
    data.add_argument("--batch-size", type=int, default=256)
    data.add_argument("--min-points", type=int, default=50)
    data.add_argument("--max-points", type=int, default=200)
    data.add_argument("--weighting", default="frequency", choices=pretraining_data.WEIGHTINGS)
    data.add_argument("--frequency-power", type=float, default=0.75)
    data.add_argument("--model-size", default="small", choices=sizes, help="the model whose max_length applies")
    data.add_argument("--warmup-batches", type=int, default=2, help="untimed batches per process")
    data.add_argument("--batches", type=int, default=16, help="timed batches per process")

    bank = mode("bank", "skeleton bank generation")
    bank.add_argument("--n-skeletons", type=int, default=1000)

    sampling = mode("sampling", "batch sampling on one core")
    bank_options(sampling)

    train_sizes = mode("sizes", "training per model size on the CPU")
    bank_options(train_sizes)
    train_sizes.add_argument("--sizes", nargs="+", default=["tiny", "small", "medium", "paper"], choices=sizes)
    train_sizes.add_argument("--train-steps", type=int, default=3)
    train_sizes.add_argument("--train-batch-size", type=int, default=64)

    steady = mode("steady", "steady rate of the pretraining.train command")
    bank_options(steady)
    steady.add_argument("--steady-steps", type=int, default=400, help="steps of each pretraining.train run")
    steady.add_argument("--model-size", default="small", choices=sizes)
    steady.add_argument("--batch-size", type=int, default=64)

    every = mode("all", "bank, sampling, sizes and steady in one go")
    every.add_argument("--n-skeletons", type=int, default=1000)
    every.add_argument("--train-steps", type=int, default=3)
    every.add_argument("--train-batch-size", type=int, default=64)
    every.add_argument("--steady-steps", type=int, default=400, help="steps of each pretraining.train run")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Options of the mode; without a mode (the command line of earlier versions), ``all``."""
    if not argv or (argv[0] not in OUTPUTS and argv[0] not in ("-h", "--help")):
        argv = ["all", *argv]
    args = _parser().parse_args(argv)
    if args.mode == "loop" and (args.warmup_steps < 1 or args.steps < 1):
        raise SystemExit("loop: need --warmup-steps >= 1 and --steps >= 1.")
    return args


def run_mode(args) -> list[str]:
    """The Markdown lines of the mode's table, head and foot excluded."""
    if args.mode == "loop":
        with bank_folder(args.bank, args.n_skeletons) as folder:
            return bench_loop(args, SkeletonBank(folder))[0]
    if args.mode == "data":
        return bench_data(args, SkeletonBank(args.bank, "train", limit=args.bank_size))[0]
    with tempfile.TemporaryDirectory() as tmp:
        if args.mode == "bank":
            return bank_section(Path(tmp), args.n_skeletons)[0]
        if args.mode == "all":
            lines, folder = bank_section(Path(tmp), args.n_skeletons)
            bank = SkeletonBank(folder)
            lines += [""] + sampling_section(bank)
            lines += [""] + sizes_section(bank, ["tiny", "small", "medium", "paper"], args.train_batch_size,
                                          args.train_steps)  # fmt: skip
            return lines + [""] + steady_section(folder, Path(tmp), args.steady_steps)
        with bank_folder(args.bank, args.n_skeletons) as folder:
            bank = SkeletonBank(folder)
            if args.mode == "sampling":
                return [_bank_line(bank, args.bank), ""] + sampling_section(bank)
            if args.mode == "sizes":
                return [_bank_line(bank, args.bank), ""] + sizes_section(
                    bank, args.sizes, args.train_batch_size, args.train_steps
                )
            return [_bank_line(bank, args.bank), ""] + steady_section(
                folder, Path(tmp), args.steady_steps, args.model_size, args.batch_size
            )


TITLES = {
    "loop": "Training loop: host time per step",
    "data": "Pretraining data: equations/s of the loader workers",
    "bank": "Skeleton bank generation",
    "sampling": "Batch sampling",
    "sizes": "Training per model size",
    "steady": "Steady training rate",
    "all": "Pretraining throughput",
}


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    threads = torch.get_num_threads()
    if args.mode == "loop":
        torch.set_num_threads(args.threads)
    try:
        lines = header(TITLES[args.mode], argv) + run_mode(args) + footer()
    finally:
        torch.set_num_threads(threads)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
