"""Fits in a child forked after fits in threads: how often the child hangs (a script, not a test).

Each trial is a fresh interpreter that fits the default estimator (``refine=None``,
``max_time=0.5``) four times in two threads, then forks a ``ProcessPoolExecutor(2)``
whose workers fit four times more; a trial hangs when a worker's fit has not
returned after 40 s. ``--unpatched`` leaves MKL's buffers as the threads left them
(no freeing before the fork), as the package did before it freed them. Prints a
markdown line per arm (and writes them to ``--output``).

Usage::

    python -m benchmarks.studies.fork_safety --trials 16 --unpatched \\
        --output benchmarks/results/fork/fork-safety.md
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

TRIAL = """
import multiprocessing, os, sys, warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
import numpy as np
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn import neural_search

if sys.argv[1] == "unpatched":
    neural_search._free_mkl_buffers = None
warnings.simplefilter("ignore")
X = np.random.default_rng(0).uniform(1, 5, size=(100, 2))
y = X[:, 0] * np.sin(X[:, 1])

def fit(seed):
    return str(NeSymReSRegressor(refine=None, random_state=seed, max_time=0.5).fit(X, y).expression_)

with ThreadPoolExecutor(2) as threads:
    list(threads.map(fit, range(4)))
pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
futures = [pool.submit(fit, i) for i in range(4)]
try:
    [future.result(timeout=40) for future in futures]
    print("ok")
except Exception as error:
    print("hang" if type(error).__name__ == "TimeoutError" else f"error {error!r}")
finally:
    for process in list(pool._processes.values()):
        process.kill()
    os._exit(0)
"""


def trial(arm: str) -> str:
    result = subprocess.run([sys.executable, "-c", TRIAL, arm], capture_output=True, text=True, timeout=300)
    return (result.stdout.strip().splitlines() or ["no output: " + result.stderr[-200:]])[-1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--unpatched", action="store_true", help="also run the arm without freeing MKL's buffers")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    lines = []
    for arm in ["patched", "unpatched"] if args.unpatched else ["patched"]:
        outcomes = [trial(arm) for _ in range(args.trials)]
        hangs = sum(outcome == "hang" for outcome in outcomes)
        others = sorted({outcome for outcome in outcomes if outcome not in ("ok", "hang")})
        line = f"- {arm}: {hangs} of {args.trials} trials hung" + (f"; other outcomes: {others}" if others else "")
        lines.append(line)
        print(line, flush=True)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
