"""How to parallelise a grid search over NeSymReSRegressor: measured wall times.

Each configuration runs in a fresh Python process and searches twice: the first
search pays what a user's first search pays (the torch import and the model load, in
every worker), the second shows the steady state (joblib keeps its worker processes,
and with them the imported torch and the loaded model). Configurations:
``GridSearchCV`` over ``beam_size`` of the default estimator (``refine="auto"``: the
network, then Operon) with ``n_jobs=1``; with ``n_jobs=2`` on joblib's
default process backend (loky) and on the threading backend; and with ``n_jobs=1`` but
the estimator's own ``n_jobs=2`` (constant fitting in worker processes).

Command::

    python -m benchmarks.studies.bench_grid_parallel --out benchmarks/results/fit-speed/grid-parallel.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CONFIGURATIONS = {
    "GridSearchCV n_jobs=1": dict(grid_jobs=1, backend=None, estimator_jobs=None),
    "GridSearchCV n_jobs=2, processes (joblib's default)": dict(grid_jobs=2, backend=None, estimator_jobs=None),
    "GridSearchCV n_jobs=2, threads": dict(grid_jobs=2, backend="threading", estimator_jobs=None),
    "GridSearchCV n_jobs=1, NeSymReSRegressor(n_jobs=2)": dict(grid_jobs=1, backend=None, estimator_jobs=2),
}

SCRIPT = """
import json, time
import numpy as np
from joblib import parallel_config
from sklearn.model_selection import GridSearchCV
from nesymres_sklearn import NeSymReSRegressor

rng = np.random.default_rng(0)
X = rng.uniform(1, 5, size=(200, 2))
y = X[:, 0] * np.sin(X[:, 1]) + X[:, 1]
grid = {{"beam_size": {beams}}}
seconds = []
for _ in range(2):
    moment = time.perf_counter()
    estimator = NeSymReSRegressor(random_state=0, n_jobs={estimator_jobs})
    search = GridSearchCV(estimator, grid, cv={cv}, n_jobs={grid_jobs})
    if {backend!r} is None:
        search.fit(X, y)
    else:
        with parallel_config(backend={backend!r}):
            search.fit(X, y)
    seconds.append(time.perf_counter() - moment)
print(json.dumps({{"seconds": seconds, "best": search.best_params_}}))
"""


def measure(configuration: dict, beams: list[int], cv: int) -> dict:
    code = SCRIPT.format(beams=beams, cv=cv, **configuration)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True, env=os.environ.copy()
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beams", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--cv", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fit-speed/grid-parallel.md"))
    args = parser.parse_args(argv)
    lines = [
        "# Parallel grid search over NeSymReSRegressor",
        "",
        f"`GridSearchCV(NeSymReSRegressor(random_state=0), {{'beam_size': {args.beams}}}, cv={args.cv})` "
        f'(the default estimator: the bundled model, then Operon; `refine="auto"`) on 200 points of '
        f"`x0*sin(x1) + x1`, {len(args.beams) * args.cv} fits, each configuration in a fresh Python process "
        f"({os.cpu_count()} cores). Load average at the start (1/5/15 min): "
        + "/".join(f"{load:.1f}" for load in os.getloadavg())
        + ".",
        "",
        "| configuration | first search (s) | second search (s) |",
        "|---|---:|---:|",
    ]
    for name, configuration in CONFIGURATIONS.items():
        first, second = measure(configuration, args.beams, args.cv)["seconds"]
        lines.append(f"| {name} | {first:.1f} | {second:.1f} |")
    lines += ["", "Load average at the end (1/5/15 min): " + "/".join(f"{load:.1f}" for load in os.getloadavg()) + "."]
    lines += ["", f"Command: `python -m benchmarks.studies.bench_grid_parallel --out {args.out}`", ""]
    args.out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
