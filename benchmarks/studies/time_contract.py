"""Does ``max_time`` hold? Wall time of fits against the promise ``1.1 * max_time + 0.05``
(a script, not a test: it reads the wall clock).

The cases are a 1-feature law (200 points on U(-3, 3)), the three small laws of issue
37 (128 points on U(1, 5)), the 6-feature law ``x0*x1 + sin(x2) - x3 + x4*x5`` (200
points on U(-3, 3)), a 10- and a 20-feature law, a 10,000-point fit and the 20-feature law on
10,000 points (issue 65) (``--cases``:
those whose name holds one of the words given), each at every ``--budgets`` value with
the default estimator (``refine="auto"``) and the network alone, after one warm-up fit
that loads the model (not counted against ``max_time``, see ``timings_["loading"]``).
``--busy N`` keeps N CPU-bound processes running meanwhile, as on a shared machine.
``--grid`` fits issue 65's grid instead: 1, 3, 6 and 20 features (``x0*sin(2*x0) + x0**2``
on U(-3, 3), ``x0*x1/x2`` on U(1, 5), the 6-feature law, ``x3*sin(x7) + x12/x15`` on
U(1, 5)) on 100 and on 10,000 points.

    python -m benchmarks.studies.time_contract --out benchmarks/results/time-contract/idle.md
    python -m benchmarks.studies.time_contract --busy 2 --out benchmarks/results/time-contract/busy.md
    python -m benchmarks.studies.time_contract --budgets 0.1 0.3 0.5 --out benchmarks/results/time-contract/small.md
    python -m benchmarks.studies.time_contract --grid --busy 1 --refine auto --out busy-grid.md
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor


def _cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    X2 = rng.uniform(1, 5, (128, 2))
    X6 = rng.uniform(-3, 3, (200, 6))
    X20 = rng.uniform(1, 5, (300, 20))
    Xbig = rng.uniform(1, 5, (10_000, 3))
    X1 = rng.uniform(-3, 3, (200, 1))  # drawn after the others, which stay as they were
    X10 = rng.uniform(1, 5, (300, 10))
    X20big = rng.uniform(1, 5, (10_000, 20))
    return {
        "x0*sin(2*x0) + x0**2 (1 feature)": (X1, X1[:, 0] * np.sin(2 * X1[:, 0]) + X1[:, 0] ** 2),
        "x0*sin(x1)": (X2, X2[:, 0] * np.sin(X2[:, 1])),
        "exp(-x0)*x1**2 + cos(x0*x1)": (X2, np.exp(-X2[:, 0]) * X2[:, 1] ** 2 + np.cos(X2[:, 0] * X2[:, 1])),
        "x0**2/x1 + log(x0)": (X2, X2[:, 0] ** 2 / X2[:, 1] + np.log(X2[:, 0])),
        "x0*x1 + sin(x2) - x3 + x4*x5 (6 features)": (
            X6,
            X6[:, 0] * X6[:, 1] + np.sin(X6[:, 2]) - X6[:, 3] + X6[:, 4] * X6[:, 5],
        ),
        "x2*x5 + exp(-x8)/x1 (10 features)": (X10, X10[:, 2] * X10[:, 5] + np.exp(-X10[:, 8]) / X10[:, 1]),
        "x3*sin(x7) + x12/x15 (20 features)": (X20, X20[:, 3] * np.sin(X20[:, 7]) + X20[:, 12] / X20[:, 15]),
        "x0*x1/x2 (10,000 points)": (Xbig, Xbig[:, 0] * Xbig[:, 1] / Xbig[:, 2]),
        "x3*sin(x7) + x12/x15 (20 features, 10,000 points)": (
            X20big,
            X20big[:, 3] * np.sin(X20big[:, 7]) + X20big[:, 12] / X20big[:, 15],
        ),
    }


def _grid_cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Issue 65's grid: each law of 1, 3, 6 and 20 features on 100 and on 10,000 points."""
    laws = {
        1: ((-3, 3), lambda X: X[:, 0] * np.sin(2 * X[:, 0]) + X[:, 0] ** 2),
        3: ((1, 5), lambda X: X[:, 0] * X[:, 1] / X[:, 2]),
        6: ((-3, 3), lambda X: X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]),
        20: ((1, 5), lambda X: X[:, 3] * np.sin(X[:, 7]) + X[:, 12] / X[:, 15]),
    }
    rng = np.random.default_rng(0)
    cases = {}
    for n_features, (support, law) in laws.items():
        for n_points in (100, 10_000):
            X = rng.uniform(*support, (n_points, n_features))
            cases[f"{n_features} features, {n_points:,} points"] = (X, law(X))
    return cases


def _spin(seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        sum(i * i for i in range(10_000))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0])
    parser.add_argument("--refine", nargs="+", default=["auto", "none"])
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes running meanwhile")
    parser.add_argument("--cases", nargs="+", help="only the cases whose name contains one of these (default: all)")
    parser.add_argument("--grid", action="store_true", help="issue 65's grid of features and points instead")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    cases = _cases()
    X, y = cases["x0*sin(x1)"]
    if args.grid:
        cases = _grid_cases()
    if args.cases is not None:
        cases = {name: case for name, case in cases.items() if any(word in name for word in args.cases)}
    loading = NeSymReSRegressor(random_state=0).fit(X, y).timings_["loading"]
    busy = [multiprocessing.Process(target=_spin, args=(3600,), daemon=True) for _ in range(args.busy)]
    for process in busy:
        process.start()
    rows, overruns, total = [], 0, 0
    try:
        for name, (X, y) in cases.items():
            for refine in args.refine:
                for budget in args.budgets:
                    moment = time.perf_counter()
                    fitted = NeSymReSRegressor(
                        max_time=budget, refine=None if refine == "none" else refine, random_state=0
                    ).fit(X, y)
                    seconds = time.perf_counter() - moment
                    limit = 1.1 * budget + 0.05
                    overruns += seconds > limit
                    total += 1
                    r2 = fitted.score(X, y)
                    rows.append(
                        f"| {name} | {refine} | {budget:g} | {seconds:.3f} | {limit:.3f} | "
                        f"{'yes' if seconds <= limit else '**no**'} | {r2:.4f} | `{fitted.expression_}` |"
                    )
    finally:
        for process in busy:
            process.kill()
    lines = [
        "# Does max_time hold?",
        "",
        "Command: `python -m benchmarks.studies.time_contract "
        + " ".join(argv if argv is not None else __import__("sys").argv[1:])
        + "`  ",
        f"Machine: {platform.machine()}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.busy} CPU-bound processes running beside the fits. The first fit loaded the model in "
        f"{loading:.2f} s (not counted).",
        "",
        f"**{total - overruns} of {total} fits within `1.1 * max_time + 0.05` s.**",
        "",
        "| law | refine | max_time | seconds | limit | held | R² | equation |",
        "|---|---|---:|---:|---:|---|---:|---|",
        *rows,
    ]
    text = "\n".join(lines) + "\n"
    publish(text, args.out)


if __name__ == "__main__":
    main()
