"""Run methods x datasets x settings and write one tidy CSV row per fit.

The command line and :func:`run`, which puts the pieces together:

- :mod:`benchmarks.tasks`: the tasks of a profile (one method at one setting on one
  equation, with one number of training points and one seed) and their rows;
- :mod:`benchmarks.results`: the result CSV (rows appended by this process alone, one
  write per row, as tasks finish; a rerun with the same output skips every task
  already in the file, ``--redo-failed`` re-runs errors, timeouts and crashes) and the
  JSON file beside it (command, machine, profile);
- :mod:`benchmarks.isolation`: each task in its own child process, killed at the per-fit
  time limit (``status="timeout"``); a fit that raises gives ``status="error"`` and its
  message, so the run always goes on;
- :mod:`benchmarks.backends`: the workers that start those children, on this machine
  (joblib) or on a dask or ray cluster. A task lost with its worker gets no row, so
  running the same command again does it.

A method whose package is missing gets ``status="not_installed"`` rows with the reason.

Command line (see ``python -m benchmarks.runner --help``)::

    python -m benchmarks.runner --profile quick --out benchmarks/results/quick/quick.csv
    python -m benchmarks.runner --profile laptop --n-jobs 2 --out benchmarks/results/laptop/laptop.csv
    python -m benchmarks.runner --profile full --backend dask --scheduler tcp://host:8786 --n-jobs -1 ...
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import pandas as pd

from .backends import BACKENDS, map_unordered
from .isolation import run_task
from .methods import get_method
from .profiles import PROFILES, Profile, get_profile
from .results import (
    add_missing_columns,
    append_rows,
    drop_failed,
    drop_incomplete_row,
    locked,
    read_done,
    read_results,
    write_metadata,
)
from .tasks import longest_first, pending, plan_tasks, split_not_installed

logger = logging.getLogger(__name__)


def run(
    profile: Profile,
    out: str | Path,
    n_jobs: int = 1,
    backend: str = "loky",
    max_equations: int | None = None,
    n_threads: int = 1,
    redo_failed: bool = False,
    progress: bool = True,
    start_method: str | None = None,
    command: str | None = None,
    scheduler: str | None = None,
) -> pd.DataFrame:
    """Run every task of ``profile`` not yet in ``out`` and return the whole result table.

    Parameters
    ----------
    profile : Profile
    out : path
        Result CSV; created, or extended when it exists (finished tasks are skipped).
    n_jobs : int, default=1
        Tasks run at the same time (joblib convention, ``-1`` for every core; on a
        cluster, ``-1`` sends every task to the scheduler at once).
    backend : {"loky", "threading", "dask", "ray"}, default="loky"
        joblib backend, or a cluster: ``dask`` and ``ray`` need their packages; see
        :mod:`benchmarks.backends`.
    max_equations : int, optional
        Keep only the first equations of each dataset.
    n_threads : int, default=1
        Threads per fit (the paper times every method on one CPU).
    redo_failed : bool, default=False
        Run again the tasks recorded as error, timeout or crashed.
    progress : bool, default=True
        Show a tqdm progress bar.
    start_method : str, optional
        ``multiprocessing`` start method of the fits' child processes (default: ``fork``
        where available, see :func:`benchmarks.isolation.default_start_method`).
    command : str, optional
        Command line recorded in the JSON file.
    scheduler : str, optional
        Address of the dask scheduler or ray cluster (default: ``DASK_SCHEDULER_ADDRESS``
        or ``RAY_ADDRESS``; without one a local cluster is started for the run).
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = plan_tasks(profile, max_equations)
    with locked(out):
        cut = drop_incomplete_row(out)
        if cut:
            logger.warning("Cut the incomplete last row of %s (its run was killed): %r", out, cut)
        added = add_missing_columns(out)
        if added:
            logger.warning("Added the columns %s to %s (written before they existed).", added, out)
        if redo_failed and out.stat().st_size > 0:
            drop_failed(out)
        todo = pending(tasks, read_done(out))
        logger.info("%d tasks, %d already done, %d to run.", len(tasks), len(tasks) - len(todo), len(todo))
        write_metadata(out, profile, command, len(tasks))

        runnable, not_installed = split_not_installed(todo)
        for row in {row["method"]: row for row in not_installed}.values():
            logger.warning("%s: %s", row["method"], row["error"])
        if not_installed:
            append_rows(out, not_installed)

        if runnable:
            bar = _progress_bar(len(runnable), progress)
            arguments = ((task, profile.time_limit, n_threads, start_method) for task in longest_first(runnable))
            n_rows = 0
            for row in map_unordered(run_task, arguments, backend, n_jobs, scheduler):
                append_rows(out, [row])
                n_rows += 1
                if bar is not None:
                    bar.set_postfix_str(f"{row['method']} {row['equation']} {row['status']}", refresh=False)
                    bar.update()
            if bar is not None:
                bar.close()
            if n_rows < len(runnable):
                logger.warning(
                    "%d of %d tasks gave no row (lost with their workers); run the same command again to do them.",
                    len(runnable) - n_rows,
                    len(runnable),
                )
    return read_results(out)


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="fit", dynamic_ncols=True)


# --------------------------------------------------------------------------- CLI


def _parse_methods(values: list[str] | None) -> dict | None:
    """``["nesymres=1,4", "gpr"]`` -> ``{"nesymres": (1, 4), "gpr": None}``."""
    if not values:
        return None
    methods = {}
    for item in values:
        name, _, settings = item.partition("=")
        get_method(name)
        methods[name] = tuple(_number(v) for v in settings.split(",")) if settings else None
    return methods


def _number(text: str):
    value = float(text)
    return int(value) if value.is_integer() else value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.runner",
        description="Run the NeSymReS benchmark: methods x datasets x settings, one CSV row per fit.",
    )
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    parser.add_argument("--out", help="result CSV (default: benchmarks/results/<profile>/<profile>.csv)")
    parser.add_argument(
        "--datasets",
        nargs="+",
        help="datasets to run (default: the profile's); NAME:EQ1,EQ2 keeps only those equations of NAME, "
        "e.g. aifeynman-many:AIFM-40",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME[=V1,V2]",
        help="methods to run, optionally with their settings, e.g. nesymres=1,4 gpr",
    )
    parser.add_argument("--max-equations", type=int, help="first N equations of each dataset")
    parser.add_argument("--n-points", type=int, nargs="+", help="training points per equation")
    parser.add_argument("--seeds", type=int, nargs="+")
    parser.add_argument(
        "--noise", type=float, nargs="+", metavar="LEVEL", help="Gaussian noise on the training targets, x RMS(y)"
    )
    parser.add_argument("--time-limit", type=float, help="hard per-fit limit in seconds")
    parser.add_argument("--time-budget", type=float, help="soft per-fit budget handed to the methods")
    parser.add_argument(
        "--n-jobs", type=int, default=1, help="fits at the same time (-1: all cores, or all a cluster runs)"
    )
    parser.add_argument("--backend", default="loky", choices=BACKENDS)
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="dask scheduler or ray cluster address, e.g. tcp://host:8786 "
        "(default: $DASK_SCHEDULER_ADDRESS or $RAY_ADDRESS, else a local cluster)",
    )
    parser.add_argument("--threads-per-fit", type=int, default=1)
    parser.add_argument("--redo-failed", action="store_true", help="rerun errors, timeouts and crashes")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--report", action="store_true", help="write plots and a markdown table afterwards")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def profile_from_args(args) -> Profile:
    profile = get_profile(args.profile)
    methods = _parse_methods(args.methods)
    if methods is not None:
        methods = {
            name: values if values is not None else profile.methods.get(name, PROFILES["laptop"].methods[name])
            for name, values in methods.items()
        }
    datasets = None
    if args.datasets:
        datasets = {}
        for given in args.datasets:
            name, _, equations = given.partition(":")
            datasets[name] = equations.split(",") if equations else profile.datasets.get(name)
    return profile.with_overrides(
        datasets=datasets,
        methods=methods,
        n_points=tuple(args.n_points) if args.n_points else None,
        seeds=tuple(args.seeds) if args.seeds else None,
        noise=tuple(args.noise) if args.noise else None,
        time_limit=args.time_limit,
        time_budget=args.time_budget,
    )


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    profile = profile_from_args(args)
    out = Path(args.out or f"benchmarks/results/{args.profile}/{args.profile}.csv")
    command = "python -m benchmarks.runner " + " ".join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    results = run(
        profile,
        out,
        n_jobs=args.n_jobs,
        backend=args.backend,
        scheduler=args.scheduler,
        max_equations=args.max_equations,
        n_threads=args.threads_per_fit,
        redo_failed=args.redo_failed,
        progress=not args.no_progress,
        command=command,
    )
    print(f"{len(results)} rows in {out} ({time.perf_counter() - started:.1f} s)")
    print(results.groupby(["method", "status"]).size().to_string())
    if args.report:
        from .report import write_report

        written = write_report(out)
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
