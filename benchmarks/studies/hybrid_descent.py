"""Where the hybrid's equations come from: the network's candidates, or Operon's search
and then whether Operon's best model contains a seed's structure.

For each equation of a dataset (its training points, as the benchmark samples them),
``NeSymReSRegressor(refine="operon", max_time=T)`` is fitted and the selected row's
``origin`` and ``refinement_["best_contains_a_seed"]`` are counted, with recovery
(A1 on the test points inside the support), on the benchmark's training points (128,
as the runner samples them).

Command::

    python -m benchmarks.studies.hybrid_descent --dataset aifeynman --max-time 1 --seeds 0 1 2 \\
        --out benchmarks/results/hybrid/hybrid-descent.md
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.datasets import load_dataset
from benchmarks.metrics import accuracy_a1
from benchmarks.tasks import Task


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="aifeynman")
    parser.add_argument("--max-time", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/hybrid/hybrid-descent.md"))
    args = parser.parse_args(argv)

    from nesymres_sklearn import NeSymReSRegressor

    counts: Counter = Counter()
    recovered: Counter = Counter()
    for seed in args.seeds:
        for equation in load_dataset(args.dataset):
            X, y = equation.sample_train(Task.n_points, seed=seed)
            X_test, y_test = equation.sample_test("iid", Task.n_test_points, seed=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                regressor = NeSymReSRegressor(refine="operon", max_time=args.max_time, random_state=seed, device="cpu")
                regressor.fit(X, y)
            origin = regressor.equations_.loc[regressor.best_index_, "origin"]
            if origin == "operon":
                origin = (
                    "operon, contains a seed" if regressor.refinement_["best_contains_a_seed"] else "operon, no seed"
                )
            else:
                origin = "network"
            counts[origin] += 1
            with np.errstate(all="ignore"):
                recovered[origin] += bool(accuracy_a1(y_test, regressor.predict(X_test)))
    total = sum(counts.values())
    lines = [
        f"# Where the hybrid's equations come from ({args.dataset}, max_time={args.max_time} s, seeds {args.seeds})",
        "",
        "| selected equation | fits | share | A1 (test, in support) |",
        "|---|---:|---:|---:|",
    ]
    for origin in ("network", "operon, contains a seed", "operon, no seed"):
        n = counts[origin]
        lines.append(f"| {origin} | {n} | {n / total:.0%} | {recovered[origin] / n if n else float('nan'):.0%} |")
    lines += ["", f"Command: `python -m benchmarks.studies.hybrid_descent --dataset {args.dataset} "
              f"--max-time {args.max_time} --seeds {' '.join(map(str, args.seeds))}`", ""]  # fmt: skip
    args.out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
