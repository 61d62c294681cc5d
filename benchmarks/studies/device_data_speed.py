"""Equations/s per core of the device generator on the CPU against the host's (a script).

The host's generator (:class:`pretraining.data.EquationSampler`, what each DataLoader
worker runs: NumPy, one core) and the device generator
(:class:`pretraining.device_data.DeviceSampler` with ``--device cpu`` and one torch
thread, so also one core) make the same batches (256 equations, 50-200 points,
frequency weighting to the power 0.75, the GPU windows' settings) from the same bank,
in turns of ``--turn`` batches so that both see the same load on a shared machine. The
host's compile cache is warmed first with ``--warmup-batches`` batches (a worker of a
long run has its cache warm), and its misses over the timed batches are reported.

Usage::

    python -m benchmarks.studies.device_data_speed --bank-pack pretraining/banks/bank-1m-*.npz \\
        --batches 64 --out benchmarks/results/pretraining/device-data-speed.md
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import torch

from nesymres_sklearn.network.model import config_for_size
from pretraining.bank import SkeletonBank
from pretraining.bank_pack import unpack_bank
from pretraining.data import BatchConfig, EquationSampler, batch_rng
from pretraining.device_data import DeviceSampler, batch_generator

SEED = 0
RESULTS = Path(__file__).resolve().parents[1] / "results" / "pretraining"


def _load() -> str:
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--bank", type=Path, help="skeleton bank folder")
    source.add_argument("--bank-pack", type=Path, nargs="+", help="packed bank files (unpacked to a temporary folder)")
    parser.add_argument("--bank-size", type=int, help="the first skeletons of the bank only")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--min-points", type=int, default=50)
    parser.add_argument("--max-points", type=int, default=200)
    parser.add_argument("--frequency-power", type=float, default=0.75)
    parser.add_argument("--model-size", default="small", help="the targets' length limit is this model's")
    parser.add_argument("--batches", type=int, default=64, help="timed batches of each contender")
    parser.add_argument("--turn", type=int, default=4, help="batches of one contender before the next one's")
    parser.add_argument("--warmup-batches", type=int, default=64, help="untimed host batches (its compile cache)")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"], help="device generator precisions")
    parser.add_argument("--out", type=Path, default=RESULTS / "device-data-speed.md")
    return parser


def measure(args, bank: SkeletonBank) -> list[str]:
    """The table's lines: both generators timed in turns (torch's threads as they are set)."""
    model_config = config_for_size(args.model_size, bank.n_variables)
    config = BatchConfig(batch_size=args.batch_size, min_points=args.min_points, max_points=args.max_points,
                         frequency_power=args.frequency_power)  # fmt: skip
    options = dict(n_variables=model_config.n_variables, max_length=model_config.max_length)
    host = EquationSampler(bank, config, **options)
    started = time.perf_counter()
    devices = {name: DeviceSampler(bank, config, device="cpu", dtype=getattr(torch, name), **options)
               for name in args.dtypes}  # fmt: skip
    setup = (time.perf_counter() - started) / len(devices)
    makers = {"host": lambda i: host.batch(batch_rng(SEED, 0, i))}
    for name, sampler in devices.items():
        makers[name] = lambda i, sampler=sampler: sampler.batch(batch_generator(SEED, 0, i, "cpu"))
    for index in range(args.warmup_batches):
        host.batch(batch_rng(SEED, 0, index))
    for name in devices:
        makers[name](0)
    cache_before = host._skeleton.cache_info()  # the compile cache (benchmark code may look inside)
    totals = {name: dict(seconds=0.0, equations=0, points=0, batches=0) for name in makers}
    for turn in range(0, args.batches, args.turn):
        for name, make in makers.items():
            for index in range(turn, min(turn + args.turn, args.batches)):
                start = time.perf_counter()
                batch = make(args.warmup_batches + index)
                totals[name]["seconds"] += time.perf_counter() - start
                totals[name]["equations"] += len(batch["targets"])
                totals[name]["points"] += batch["codes"].shape[1]
                totals[name]["batches"] += 1
        print({name: round(t["equations"] / t["seconds"]) for name, t in totals.items()}, flush=True)
    cache = host._skeleton.cache_info()
    misses = cache.misses - cache_before.misses
    lookups = misses + cache.hits - cache_before.hits
    host_rate = totals["host"]["equations"] / totals["host"]["seconds"]
    lines = [
        f"Bank: {len(bank):,} training skeletons, {bank.n_variables} variables. Batches of {args.batch_size} "
        f"equations, {args.min_points}-{args.max_points} points drawn per batch, frequency weighting to the power "
        f"{args.frequency_power}, targets up to the {args.model_size} model's length. One core each: the host "
        "generator is NumPy in this process (what each loader worker runs), the device generator runs on the CPU "
        f"with one torch thread. {args.batches} batches each, in turns of {args.turn}; the host's compile cache was "
        f"warmed with {args.warmup_batches} batches and missed {misses:,} of {lookups:,} look-ups "
        f"({100 * misses / max(lookups, 1):.1f}%) over the timed ones. Moving the bank to the device (parsing it "
        f"into node tables) took {setup:.1f} s per device generator.",
        "",
        "| generator | batches | seconds | mean points kept | equations/s per core | against the host |",
        "|---|---|---|---|---|---|",
    ]
    for name, t in totals.items():
        rate = t["equations"] / t["seconds"]
        label = f"device on CPU (`DeviceSampler`, {name})"
        if name == "host":
            label = "host (`EquationSampler`, NumPy float64)"
        lines.append(
            f"| {label} | {t['batches']} | {t['seconds']:.2f} | {t['points'] / t['batches']:.0f} | {rate:,.0f} | "
            f"{rate / host_rate:.1f}x |"
        )
    return lines


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    torch.set_num_threads(1)  # the device generator on one core, as the host's
    head = [
        "# Device data: equations/s per core of the device generator on the CPU against the host's",
        "",
        f"Command: `python -m benchmarks.studies.device_data_speed {shlex.join(argv)}`  ",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"Python {platform.python_version()}.  ",
        f"Load average at the start (1/5/15 min): {_load()}.",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.bank
        if folder is None:
            folder = Path(tmp) / "bank"
            unpack_bank(args.bank_pack, folder)
        body = measure(args, SkeletonBank(folder, limit=args.bank_size))
    foot = [
        "",
        f"Load average at the end (1/5/15 min): {_load()} on {os.cpu_count()} cores "
        "(other processes share the machine; higher load means lower numbers).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(head + body + foot) + "\n")
    print("\n".join(head + body + foot))


if __name__ == "__main__":
    main()
