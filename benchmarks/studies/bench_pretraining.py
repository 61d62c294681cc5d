"""Throughput of the pretraining pipeline on this machine (a script, not a test).

Measures: skeleton bank generation (skeletons/s, per core), batch sampling
(equations/s on one core at 200 points per equation), training (equations/s per
model size on the CPU, batches made in the loop) and the steady rate of the real
training command (``pretraining.train``, small model) with its default thread counts
against an oversubscribed setting: the rate of every ``--log-every`` window, after the
first. Writes a Markdown table to ``benchmarks/results/pretraining_benchmark.md``.

Usage::

    python -m benchmarks.studies.bench_pretraining [--n-skeletons 1000] [--train-steps 3] [--steady-steps 400]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from nesymres_sklearn.network.model import MODEL_SIZES, NeSymReSModel, config_for_size
from pretraining.bank import SkeletonBank, build_bank
from pretraining.data import BatchConfig, EquationSampler, batch_rng

RESULTS = Path(__file__).resolve().parents[1] / "results" / "pretraining_benchmark.md"


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


def bench_batches(bank: SkeletonBank, n_points: int, batch_size: int, n_batches: int) -> dict:
    sampler = EquationSampler(bank, BatchConfig(batch_size=batch_size, min_points=n_points, max_points=n_points))
    sampler.batch(batch_rng(0, 0, 0))
    start = time.perf_counter()
    for index in range(1, n_batches + 1):
        sampler.batch(batch_rng(0, 0, index))
    seconds = time.perf_counter() - start
    return dict(n_points=n_points, batch_size=batch_size, per_second=n_batches * batch_size / seconds)


def bench_training(bank: SkeletonBank, size: str, batch_size: int, n_points: int, steps: int) -> dict:
    torch.manual_seed(0)
    config = config_for_size(size)
    model = NeSymReSModel(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    sampler = EquationSampler(bank, BatchConfig(batch_size=batch_size, min_points=n_points, max_points=n_points))
    batches = [sampler.batch(batch_rng(0, 0, i)) for i in range(steps + 1)]

    def step(batch):
        targets = batch["targets"]
        _, loss = model(batch["points"], targets[:, :-1], targets[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    step(batches[0])  # warm-up
    start = time.perf_counter()
    for batch in batches[1:]:
        step(batch)
    seconds = (time.perf_counter() - start) / steps
    points = sum(b["points"].shape[1] for b in batches[1:]) / steps
    return dict(
        size=size,
        parameters=sum(p.numel() for p in model.parameters()),
        batch_size=batch_size,
        points=points,
        seconds_per_step=seconds,
        per_second=batch_size / seconds,
    )


# (loader workers, training threads): the command's defaults, then more threads than cores.
STEADY_SETTINGS = ((1, None), (0, None), (1, 2 * (os.cpu_count() or 1)))
STEADY_WINDOW = 25


def bench_steady(bank: Path, run: Path, num_workers: int, num_threads: int | None, steps: int) -> dict:
    """Equations/s of each ``STEADY_WINDOW``-step window of ``pretraining.train`` (the first left out)."""
    command = [
        sys.executable, "-m", "pretraining.train", "--bank", str(bank), "--out", str(run), "--model-size", "small",
        "--batch-size", "64", "--min-points", "50", "--max-points", "200", "--max-steps", str(steps),
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-skeletons", type=int, default=1000)
    parser.add_argument("--train-steps", type=int, default=3)
    parser.add_argument("--train-batch-size", type=int, default=64)
    parser.add_argument("--steady-steps", type=int, default=400, help="steps of each pretraining.train run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n_cores = os.cpu_count()
    arguments = " ".join(sys.argv[1:] if argv is None else argv)
    lines = [
        "# Pretraining throughput",
        "",
        f"Command: `python -m benchmarks.studies.bench_pretraining {arguments}`  ",
        f"Machine: {platform.processor() or platform.machine()}, {n_cores} cores, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), Python {platform.python_version()}, no GPU.  ",
        "Load average at the start (1/5/15 min): " + " / ".join(f"{v:.1f}" for v in os.getloadavg()) + ".",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        lines += [
            "## Skeleton bank generation (`pretraining.bank`)",
            "",
            "| joblib workers | skeletons | trees | seconds | skeletons/s | skeletons/s per core | trees/s per core |",
            "|---|---|---|---|---|---|---|",
        ]
        folder = None
        for n_jobs in sorted({1, n_cores}):
            folder = Path(tmp) / f"bank{n_jobs}"
            n = args.n_skeletons if n_jobs == n_cores else max(args.n_skeletons // 2, 100)
            r = bench_bank(folder, n, n_jobs)
            print(r, flush=True)
            lines.append(
                f"| {r['n_jobs']} | {r['skeletons']} | {r['trees']} | {r['seconds']:.1f} | "
                f"{r['per_second']:.1f} | {r['per_core']:.1f} | {r['trees_per_core']:.1f} |"
            )
        bank = SkeletonBank(folder)
        lines += [
            "",
            "## Batch sampling (`pretraining.data`, one core)",
            "",
            "| points per equation | batch size | equations/s |",
            "|---|---|---|",
        ]
        for n_points in (200, 500):
            r = bench_batches(bank, n_points, 150, 20)
            print(r, flush=True)
            lines.append(f"| {r['n_points']} | {r['batch_size']} | {r['per_second']:.0f} |")
        lines += [
            "",
            f"## Training on this CPU (batch {args.train_batch_size}, 200 points drawn, "
            f"Adam + clipping, fp32, mean of {args.train_steps} steps after a warm-up)",
            "",
            "| size | parameters | mean points kept | s/step | equations/s |",
            "|---|---|---|---|---|",
        ]
        for size in ("tiny", "small", "medium", "paper"):
            assert size in MODEL_SIZES
            r = bench_training(bank, size, args.train_batch_size, 200, args.train_steps)
            print(r, flush=True)
            lines.append(
                f"| {r['size']} | {r['parameters']:,} | {r['points']:.0f} | "
                f"{r['seconds_per_step']:.2f} | {r['per_second']:.0f} |"
            )
        lines += [
            "",
            f"## Steady training rate (`pretraining.train`, small model, batch 64, 50-200 points, "
            f"{args.steady_steps} steps; equations/s of each {STEADY_WINDOW}-step window after the first)",
            "",
            "Default threads: `max(1, cores - workers)` for the training process, one per loader worker.",
            "",
            "| loader workers | training threads | windows | median | lowest | highest |",
            "|---|---|---|---|---|---|",
        ]
        for num_workers, num_threads in STEADY_SETTINGS:
            r = bench_steady(folder, Path(tmp) / f"run{num_workers}-{num_threads}", num_workers, num_threads,
                             args.steady_steps)  # fmt: skip
            print(r, flush=True)
            lines.append(
                f"| {r['workers']} | {r['threads']} | {r['windows']} | {r['median']:.0f} | {r['low']:.0f} | "
                f"{r['high']:.0f} |"
            )
    load = os.getloadavg()
    lines += [
        "",
        f"Load average at the end (1/5/15 min): {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"on {n_cores} cores (other processes share the machine; higher load means lower numbers).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
