"""Fit and predict speed of NeSymReSRegressor (a script, not a test).

For each beam size, fits equations on 128 points with the estimator's defaults and
reports the median time of each stage (encoding, beam search, constant fitting,
Operon's refinement when ``refine`` asks for it, selection) and of the whole ``fit``,
all in one process (modules imported and the model loaded once, as in normal use);
then measures ``predict`` throughput in rows per second. The equations are six of the
AI-Feynman style, or with ``--dataset`` every equation of a benchmark set (training
points of seed 0, 1, ... per repeat).

    python -m benchmarks.studies.bench_fit --out benchmarks/results/fit-speed/fit-benchmark.md
    python -m benchmarks.studies.bench_fit --dataset aifeynman --beam-sizes 32 --repeats 1
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from benchmarks.datasets import load_dataset
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.network.weights import load_model

# Equations (y as a function of the columns of X ~ U(1, 5)) timed at each beam size.
EQUATIONS = {
    "x0*sin(x1)": lambda X: X[:, 0] * np.sin(X[:, 1]),
    "x0*x1/x2": lambda X: X[:, 0] * X[:, 1] / X[:, 2],
    "exp(-x0**2/2)": lambda X: np.exp(-(X[:, 0] ** 2) / 2),
    "x0 + x1**2": lambda X: X[:, 0] + X[:, 1] ** 2,
    "sqrt(x0*x1)": lambda X: np.sqrt(X[:, 0] * X[:, 1]),
    "2.5*cos(x0) + x1": lambda X: 2.5 * np.cos(X[:, 0]) + X[:, 1],
}
STAGES = ("encoding", "decoding", "constant_fitting", "refinement", "selection")


def training_sets(dataset: str | None, n_points: int, repeats: int, seed: int):
    """``(X, y)`` of every equation, ``repeats`` times: :data:`EQUATIONS` on
    U(1, 5) points, or the equations of ``dataset`` at seeds 0..repeats-1."""
    rng = np.random.default_rng(seed)
    for repeat in range(repeats):
        if dataset is not None:
            for equation in load_dataset(dataset):
                yield equation.sample_train(n_points, seed=repeat)
            continue
        for name, function in EQUATIONS.items():
            n_features = 3 if "x2" in name else 2 if "x1" in name else 1
            X = rng.uniform(1, 5, size=(n_points, n_features))
            yield X, function(X)


def time_fits(
    model: str, beam_size: int, n_points: int, repeats: int, seed: int, dataset=None, refine="auto"
) -> dict[str, float]:
    """Median seconds per stage, of the first round (encoding, decoding and fitting every
    candidate) and in total over every equation and repeat."""
    per_stage = {stage: [] for stage in (*STAGES, "first_round", "total")}
    for X, y in training_sets(dataset, n_points, repeats, seed):
        if not np.all(np.isfinite(y)):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            regressor = NeSymReSRegressor(model=model, beam_size=beam_size, random_state=0, device="cpu", refine=refine)
            started = time.perf_counter()
            regressor.fit(X, y)
        per_stage["total"].append(time.perf_counter() - started)
        for stage in STAGES:
            per_stage[stage].append(regressor.timings_[stage])
        first_round = ("encoding", "decoding", "constant_fitting")
        per_stage["first_round"].append(sum(regressor.timings_[stage] for stage in first_round))
    return {stage: statistics.median(values) for stage, values in per_stage.items()}


def predict_rate(model: str, n_rows: int, repeats: int) -> tuple[float, str]:
    """Rows per second of ``predict`` for the equation fitted to ``x0*x1/x2``, and
    that equation."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(128, 3))
    regressor = NeSymReSRegressor(model=model, beam_size=8, random_state=0).fit(X, X[:, 0] * X[:, 1] / X[:, 2])
    big = rng.uniform(1, 5, size=(n_rows, 3))
    regressor.predict(big[:1000])
    best = min(_timed(regressor.predict, big) for _ in range(repeats))
    return n_rows / best, str(regressor.expression_)


def _timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--beam-sizes", default="1,2,4,8,16,32,64,128,256")
    parser.add_argument("--n-points", type=int, default=128)
    parser.add_argument("--dataset", help="time every equation of this benchmark set instead")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--predict-rows", type=int, default=2_000_000)
    parser.add_argument("--refine", default="auto", choices=["auto", "none"], help="none: the network alone")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    refine = None if args.refine == "none" else args.refine

    network = load_model(args.model, device="cpu")
    n_parameters = sum(p.numel() for p in network.parameters())
    lines = [
        "# NeSymReSRegressor fit and predict speed",
        "",
        f"Command: `python -m benchmarks.studies.bench_fit {' '.join(argv or sys.argv[1:])}`",
        f"Machine: {platform.machine()}, {torch.get_num_threads()} torch threads, Python {platform.python_version()}, "
        f"torch {torch.__version__}",
        f"Model: {args.model} ({n_parameters:,} parameters); {args.n_points} points; "
        f"{args.dataset or f'{len(EQUATIONS)} equations'} x {args.repeats} repeats per beam size; default "
        f"settings, refine={refine!r}; medians in seconds (the first round: encoding, beam search and the "
        "constant fitting of every candidate, one fit's sum).",
        "",
        "| beam size | encoding | beam search | constant fitting | first round | Operon | selection | fit total |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for beam_size in (int(b) for b in args.beam_sizes.split(",")):
        m = time_fits(args.model, beam_size, args.n_points, args.repeats, beam_size, args.dataset, refine)
        lines.append(
            f"| {beam_size} | {m['encoding']:.4f} | {m['decoding']:.3f} | {m['constant_fitting']:.3f} "
            f"| {m['first_round']:.3f} | {m['refinement']:.3f} | {m['selection']:.3f} | {m['total']:.3f} |"
        )
        print(lines[-1], flush=True)
    rate, expression = predict_rate(args.model, args.predict_rows, repeats=3)
    lines += ["", f"predict: {rate:,.0f} rows/s ({args.predict_rows:,} rows, best of 3) for `{expression}`"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
