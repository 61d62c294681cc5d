"""Larger batches at equal equations: does a scaled learning rate keep the held-out loss?
(a script, not a test).

A GPU step costs about the same host work at any batch size, so larger batches mean
more equations per GPU-minute; they pay only if the model learns as much per equation.
For each batch size ``B`` this trains the same model from the same start for the same
number of equations, with the peak rate scaled from ``--base-rate`` at
``--base-batch`` by ``(B / base) ** power`` (``--power 0.5``: square-root scaling, the
usual rule for Adam; 1: linear; 0: none) and warmup and cool-down at the same share of
the run, then measures every export on the same held-out batches
(:func:`pretraining.validate.validate_folder`). Writes a Markdown table.

Usage::

    python -m benchmarks.studies.batch_scaling --bank bank --out-dir runs/batch-scaling --model-size tiny \\
        --equations 384000 --batch-sizes 64 256 1024 --base-batch 64 --base-rate 4e-4 --power 0.5 \\
        --num-workers 0 --num-threads 1 --out benchmarks/results/pretraining/batch-scaling.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import pandas as pd
import torch

from pretraining.config import TrainConfig
from pretraining.data import BatchConfig
from pretraining.train import train
from pretraining.validate import validate_folder

VALIDATION_DATA = dict(batch_size=64, min_points=50, max_points=200, frequency_power=0.75)


def scaled_rate(batch_size: int, base_batch: int, base_rate: float, power: float) -> float:
    """The peak learning rate of ``batch_size`` from ``base_rate`` at ``base_batch``."""
    return base_rate * (batch_size / base_batch) ** power


def run_one(args: argparse.Namespace, batch_size: int) -> dict:
    """Train one run of ``args.equations`` equations at ``batch_size``; its validation."""
    steps = max(1, round(args.equations / batch_size))
    rate = scaled_rate(batch_size, args.base_batch, args.base_rate, args.power)
    out = args.out_dir / f"batch-{batch_size}"
    config = TrainConfig.from_dict(
        dict(
            bank=str(args.bank),
            out=str(out),
            seed=args.seed,
            device=args.device,
            num_workers=args.num_workers,
            num_threads=args.num_threads,
            progress=False,
            model_size=args.model_size,
            init_weights=args.init_weights,
            batch_size=batch_size,
            min_points=50,
            max_points=200,
            frequency_power=0.75,
            optimizer="adamw",
            weight_decay=0.01,
            learning_rate=rate,
            warmup_steps=max(1, round(args.warmup_share * steps)),
            cooldown_fraction=args.cooldown_fraction,
            max_steps=steps,
            eval_every=0,
            checkpoint_every=max(1, steps // 4),
            log_every=max(1, steps // 50),
        )
    )
    summary = train(config)
    held_out = validate_folder(out / "model", args.bank, BatchConfig(**VALIDATION_DATA), n_batches=args.n_val_batches)
    log = pd.read_csv(out / "log.csv")
    return dict(
        batch_size=batch_size,
        learning_rate=rate,
        steps=summary["step"],
        equations=summary["equations"],
        seconds=summary["elapsed_seconds"],
        median_rate=log["equations_per_second"].iloc[1:].median(),
        **held_out,
    )


def markdown(rows: list[dict], command: str) -> str:
    lines = [
        "# Batch size at equal equations",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"load average at the end {os.getloadavg()[0]:.1f}.  ",
        "Held-out loss and token accuracy: the bank's held-out split, the same batches for every run "
        f"({VALIDATION_DATA}).",
        "",
        "| batch | peak rate | steps | equations | seconds | median equations/s | held-out loss | token accuracy |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['batch_size']} | {row['learning_rate']:.3g} | {row['steps']} | {row['equations']:,} | "
            f"{row['seconds']:.0f} | {row['median_rate']:.0f} | {row['val_loss']:.4f} | {row['val_accuracy']:.4f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bank", type=Path, required=True)
    parser.add_argument("--out-dir", type=Path, required=True, help="one run folder per batch size")
    parser.add_argument("--model-size", default="tiny")
    parser.add_argument("--init-weights", help="start every run from these weights (default: from scratch)")
    parser.add_argument("--equations", type=int, default=384_000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--base-batch", type=int, default=64)
    parser.add_argument("--base-rate", type=float, default=4e-4)
    parser.add_argument("--power", type=float, default=0.5, help="0.5: square-root scaling; 1: linear; 0: none")
    parser.add_argument("--warmup-share", type=float, default=0.02)
    parser.add_argument("--cooldown-fraction", type=float, default=0.3)
    parser.add_argument("--n-val-batches", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--num-threads", type=int, default=1, help="torch threads of the training process")
    parser.add_argument("--out", type=Path, required=True, help="Markdown table")
    args = parser.parse_args(argv)
    rows = [run_one(args, batch_size) for batch_size in args.batch_sizes]
    command = "python -m benchmarks.studies.batch_scaling " + " ".join(sys.argv[1:] if argv is None else argv)
    text = markdown(rows, command)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
