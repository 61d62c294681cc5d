"""Run methods x datasets x settings and write one tidy CSV row per fit.

Every task (one method at one setting on one equation, with one number of training
points and one seed) runs in its own child process started by a joblib worker: the
child samples the points, fits, predicts the 10k iid and ood test points and scores
them; the worker kills the child when the per-fit time limit is reached and records
``status="timeout"``. A fit that raises is recorded with ``status="error"`` and its
message; a method whose package is missing gets ``status="not_installed"`` rows with
the reason. The run always goes on.

Rows are appended to the CSV as tasks finish; a rerun with the same output skips
every task already in the file (``--redo-failed`` re-runs errors and timeouts).
A JSON file next to the CSV records the command, the machine and the profile.

Command line (see ``python -m benchmarks.runner --help``)::

    python -m benchmarks.runner --profile quick --out benchmarks/results/quick.csv
    python -m benchmarks.runner --profile laptop --n-jobs 2 --out benchmarks/results/laptop.csv
    python -m benchmarks.runner --profile full --backend dask --scheduler tcp://host:8786 ...
"""

from __future__ import annotations

import argparse
import csv
import importlib.metadata
import json
import logging
import multiprocessing
import os
import platform
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .datasets import N_TEST_POINTS, Equation, load_dataset
from .methods import METHODS, get_method
from .metrics import score
from .profiles import PROFILES, Profile, get_profile

logger = logging.getLogger(__name__)

#: Columns of the result CSV, in order.
COLUMNS = [
    "dataset", "equation", "method", "parameter", "value", "setting", "n_points", "seed",
    "status", "fit_time", "total_time",
    "a1_iid", "a1_ood", "a2_iid", "a2_ood", "close_iid", "close_ood", "r2_iid", "r2_ood",
    "expression", "true_expression", "error",
]
KEY = ["dataset", "equation", "method", "value", "n_points", "seed"]
STATUSES = ("ok", "error", "timeout", "crashed", "not_installed")
_ERROR_CHARS = 500


@dataclass(frozen=True)
class Task:
    """One fit: a method at one setting on one equation."""

    equation: Equation
    method: str
    value: float
    n_points: int = 128
    seed: int = 0
    time_budget: float | None = None
    options: dict = field(default_factory=dict, hash=False, compare=False)
    n_test_points: int = N_TEST_POINTS

    @property
    def key(self) -> tuple:
        return _key(self.equation.dataset, self.equation.name, self.method, self.value, self.n_points, self.seed)

    def base_row(self) -> dict:
        adapter = get_method(self.method)
        return {
            "dataset": self.equation.dataset,
            "equation": self.equation.name,
            "method": self.method,
            "parameter": adapter.parameter,
            "value": self.value,
            "setting": f"{adapter.parameter}={self.value}",
            "n_points": self.n_points,
            "seed": self.seed,
            "true_expression": self.equation.expression,
        }


def _key(dataset, equation, method, value, n_points, seed) -> tuple:
    return (str(dataset), str(equation), str(method), float(value), int(n_points), int(seed))


# --------------------------------------------------------------------------- child


def evaluate_task(task: Task, n_threads: int = 1) -> dict:
    """Sample, fit, predict and score one task in the current process; a result row.

    Exceptions of the method are recorded, not raised.
    """
    from threadpoolctl import threadpool_limits

    row = task.base_row()
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    try:
        with threadpool_limits(limits=n_threads):
            _limit_torch_threads(n_threads)
            X, y = task.equation.sample_train(task.n_points, seed=task.seed)
            adapter = get_method(task.method)(
                task.value, time_budget=task.time_budget, random_state=task.seed, **task.options
            )
            fit_start = time.perf_counter()
            adapter.fit(X, y)
            row["fit_time"] = time.perf_counter() - fit_start
            row["expression"] = adapter.expression()
            for kind in ("iid", "ood"):
                X_test, y_test = task.equation.sample_test(kind, task.n_test_points, seed=task.seed)
                with np.errstate(all="ignore"):
                    y_pred = adapter.predict(X_test)
                row.update(score(y_test, y_pred, suffix=f"_{kind}"))
        row["status"] = "ok"
    except ImportError as error:
        row["status"] = "not_installed"
        row["error"] = f"not installed: {error}"[:_ERROR_CHARS]
    except Exception as error:  # a failing method must not stop the run
        row["status"] = "error"
        row["error"] = f"{type(error).__name__}: {error}"[:_ERROR_CHARS]
        logger.debug("Task %s failed:\n%s", task.key, traceback.format_exc())
    row["total_time"] = time.perf_counter() - start
    return row


def _limit_torch_threads(n_threads: int) -> None:
    # Torch not imported yet reads OMP_NUM_THREADS (set by the child); an already
    # imported torch (threading backend) is limited directly.
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n_threads)


def _child(task: Task, connection, n_threads: int) -> None:
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(n_threads)
    try:
        connection.send(evaluate_task(task, n_threads))
    finally:
        connection.close()


def run_task(task: Task, time_limit: float | None, n_threads: int = 1, start_method: str | None = None) -> dict:
    """Run one task in a child process, killing it after ``time_limit`` seconds."""
    start_method = start_method or default_start_method()
    if start_method == "fork" and _preload_worker(task.method):
        logger.debug("Preloaded %s in worker %d.", task.method, os.getpid())
    context = multiprocessing.get_context(start_method)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(task, sender, n_threads))
    start = time.perf_counter()
    process.start()
    sender.close()
    row = None
    # poll() also returns when the child dies (end of file); recv() then raises.
    timed_out = not receiver.poll(time_limit)
    if not timed_out:
        try:
            row = receiver.recv()
        except (EOFError, OSError):
            row = None
    elapsed = time.perf_counter() - start
    if row is None:
        process.kill()
        process.join()
        row = task.base_row()
        row["total_time"] = elapsed
        if timed_out:
            row.update(status="timeout", fit_time=elapsed, error=f"time limit of {time_limit} s reached")
        else:
            row.update(status="crashed", error=f"process exited with code {process.exitcode}")
    else:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join()
    receiver.close()
    return row


_PRELOADED: set = set()


def _preload_worker(method: str) -> bool:
    """Import a method's modules in this worker once; forked fits inherit them.

    Importing does not start thread pools (torch, OpenMP and BLAS start them on first
    use, which happens only in the children), so forking afterwards is safe.
    """
    if method in _PRELOADED:
        return False
    _PRELOADED.add(method)
    try:
        get_method(method).preload()
    except ImportError:
        return False  # the child reports it
    return True


def default_start_method() -> str:
    """``fork`` where available (fast; workers import no threaded library before
    forking), else ``spawn``."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


# --------------------------------------------------------------------------- planning


def plan_tasks(profile: Profile, max_equations: int | None = None) -> list[Task]:
    """Every task of a profile, in a stable order (datasets, equations, methods, values)."""
    tasks = []
    for dataset, names in profile.datasets.items():
        equations = load_dataset(dataset)
        if names is not None:
            by_name = {e.name: e for e in equations}
            missing = [n for n in names if n not in by_name]
            if missing:
                raise ValueError(f"Dataset {dataset} has no equations {missing}.")
            equations = [by_name[n] for n in names]
        if max_equations is not None:
            equations = equations[:max_equations]
        for equation in equations:
            for method, values in profile.methods.items():
                get_method(method)
                options = profile.method_options.get(method, {})
                for value in values:
                    for n_points in profile.n_points:
                        for seed in profile.seeds:
                            tasks.append(
                                Task(equation, method, value, n_points, seed, profile.time_budget, options)
                            )
    return tasks


def read_done(path: Path, redo_failed: bool = False) -> set:
    """Keys of the tasks already in a result file."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    frame = pd.read_csv(path)
    if redo_failed:
        frame = frame[frame["status"].isin(["ok", "not_installed"])]
    return {_key(*values) for values in frame[KEY].itertuples(index=False)}


def _write_rows(path: Path, rows: list[dict]) -> None:
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow({column: _format(row.get(column)) for column in COLUMNS})


def _format(value):
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, float):
        return repr(value)
    return value


def _drop_failed(path: Path) -> None:
    frame = pd.read_csv(path, keep_default_na=False)
    frame = frame[frame["status"].isin(["ok", "not_installed"])]
    frame.to_csv(path, index=False)


def machine_info() -> dict:
    """What the timings were measured on."""
    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor(),
    }
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    info["processor"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for distribution in ("numpy", "scipy", "sympy", "scikit-learn", "torch", "gplearn", "pyoperon", "nesymres-sklearn"):
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            versions[distribution] = None
    info["versions"] = versions
    return info


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
) -> pd.DataFrame:
    """Run every task of ``profile`` not yet in ``out`` and return the whole result table.

    Parameters
    ----------
    profile : Profile
    out : path
        Result CSV; created, or extended when it exists (finished tasks are skipped).
    n_jobs : int, default=1
        Tasks run at the same time (joblib convention, ``-1`` for every core).
    backend : {"loky", "threading", "dask", "ray"}, default="loky"
        joblib backend. ``dask`` and ``ray`` need their packages (and a running
        cluster or a local one started for the run); see :func:`parallel_backend`.
    max_equations : int, optional
        Keep only the first equations of each dataset.
    n_threads : int, default=1
        Threads per fit (the paper times every method on one CPU).
    redo_failed : bool, default=False
        Run again the tasks recorded as error, timeout or crashed.
    progress : bool, default=True
        Show a tqdm progress bar.
    """
    from joblib import Parallel, delayed

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = plan_tasks(profile, max_equations)
    if redo_failed and out.exists():
        _drop_failed(out)
    done = read_done(out)
    todo = [task for task in tasks if task.key not in done]
    logger.info("%d tasks, %d already done, %d to run.", len(tasks), len(tasks) - len(todo), len(todo))
    _write_metadata(out, profile, command, len(tasks))

    missing = {}
    for method in {task.method for task in todo}:
        reason = METHODS[method].check_installed()
        if reason is not None:
            missing[method] = f"not installed: {reason}"
            logger.warning("%s: %s", method, missing[method])
    skipped = [task for task in todo if task.method in missing]
    if skipped:
        rows = []
        for task in skipped:
            rows.append({**task.base_row(), "status": "not_installed", "error": missing[task.method]})
        _write_rows(out, rows)
    runnable = [task for task in todo if task.method not in missing]
    # Longest-expected first keeps both cores busy at the end of the run.
    runnable.sort(key=lambda task: -_expected_cost(task))

    if runnable:
        bar = _progress_bar(len(runnable), progress)
        with parallel_backend(backend, n_jobs):
            parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            results = parallel(
                delayed(run_task)(task, profile.time_limit, n_threads, start_method) for task in runnable
            )
            for row in results:
                _write_rows(out, [row])
                if bar is not None:
                    bar.set_postfix_str(f"{row['method']} {row['equation']} {row['status']}", refresh=False)
                    bar.update()
        if bar is not None:
            bar.close()
    return pd.read_csv(out, keep_default_na=False, na_values=[""])


def _expected_cost(task: Task) -> float:
    return float(task.value) * task.n_points if task.method != "gp" else float(task.value)


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="fit", dynamic_ncols=True)


class parallel_backend:
    """Context manager selecting the joblib backend.

    ``loky`` and ``threading`` are joblib's own. ``dask`` connects to the scheduler in
    ``DASK_SCHEDULER_ADDRESS`` (or starts a local cluster) through
    ``dask.distributed.Client``; ``ray`` registers Ray's joblib backend and connects with
    ``ray.init`` (``RAY_ADDRESS`` selects an existing cluster). Each worker still runs
    every fit in a child process, so time limits hold on a cluster too.
    """

    def __init__(self, backend: str, n_jobs: int):
        self.backend = backend
        self.n_jobs = n_jobs
        self._client = None
        self._config = None

    def __enter__(self):
        from joblib import parallel_config

        if self.backend == "dask":
            try:
                from dask.distributed import Client
            except ImportError as error:
                raise RuntimeError("The dask backend needs 'dask[distributed]' (pip install 'dask[distributed]').") from error
            self._client = Client(os.environ.get("DASK_SCHEDULER_ADDRESS"))
        elif self.backend == "ray":
            try:
                import ray
                from ray.util.joblib import register_ray
            except ImportError as error:
                raise RuntimeError("The ray backend needs 'ray' (pip install ray).") from error
            register_ray()
            if not ray.is_initialized():
                ray.init()
        elif self.backend not in ("loky", "threading", "multiprocessing"):
            raise ValueError(f"Unknown backend {self.backend!r}.")
        self._config = parallel_config(backend=self.backend, n_jobs=self.n_jobs)
        self._config.__enter__()
        return self

    def __exit__(self, *exc):
        self._config.__exit__(*exc)
        if self._client is not None:
            self._client.close()
        return False


def _write_metadata(out: Path, profile: Profile, command: str | None, n_tasks: int) -> None:
    path = out.with_suffix(".json")
    previous = json.loads(path.read_text()) if path.exists() else {}
    metadata = {
        "command": command or previous.get("command"),
        "machine": machine_info(),
        "profile": _jsonable(asdict(profile)),
        "n_tasks": n_tasks,
        "started": previous.get("started", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        "last_run": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    path.write_text(json.dumps(metadata, indent=2))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


# --------------------------------------------------------------------------- CLI


def _parse_methods(values: list[str] | None) -> dict | None:
    """``["nesymres=1,4", "gp"]`` -> ``{"nesymres": (1, 4), "gp": None}``."""
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
    parser.add_argument("--out", help="result CSV (default: benchmarks/results/<profile>.csv)")
    parser.add_argument("--datasets", nargs="+", help="datasets to run (default: the profile's)")
    parser.add_argument(
        "--methods", nargs="+", metavar="NAME[=V1,V2]",
        help="methods to run, optionally with their settings, e.g. nesymres=1,4 gp",
    )
    parser.add_argument("--max-equations", type=int, help="first N equations of each dataset")
    parser.add_argument("--n-points", type=int, nargs="+", help="training points per equation")
    parser.add_argument("--seeds", type=int, nargs="+")
    parser.add_argument("--time-limit", type=float, help="hard per-fit limit in seconds")
    parser.add_argument("--time-budget", type=float, help="soft per-fit budget handed to the methods")
    parser.add_argument("--n-jobs", type=int, default=1, help="fits at the same time (-1: all cores)")
    parser.add_argument("--backend", default="loky", choices=["loky", "threading", "dask", "ray"])
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
        datasets = {name: profile.datasets.get(name) for name in args.datasets}
    return profile.with_overrides(
        datasets=datasets,
        methods=methods,
        n_points=tuple(args.n_points) if args.n_points else None,
        seeds=tuple(args.seeds) if args.seeds else None,
        time_limit=args.time_limit,
        time_budget=args.time_budget,
    )


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    profile = profile_from_args(args)
    out = Path(args.out or f"benchmarks/results/{args.profile}.csv")
    command = "python -m benchmarks.runner " + " ".join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    results = run(
        profile,
        out,
        n_jobs=args.n_jobs,
        backend=args.backend,
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
