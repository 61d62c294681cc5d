"""Run methods on FastSRB problems: one CSV row per fit, resumable.

The fits are planned law by law (each law's problems, noise levels, budgets, and the
methods one after the other, so that the methods share the machine's state) and run on
``n_jobs`` workers (:func:`benchmarks.backends.map_unordered`). A worker draws the
problem, then fits in a child process of its own (forked once the method's modules are
loaded) that is killed after ``time_limit`` seconds (``status="timeout"``); a fit that
raises gives ``status="error"`` and its message, a child that dies ``"crashed"``: all
three are misses. The worker scores the predictions on the clean validation points
(:mod:`.scoring`). Rows are appended one write each as fits end; a rerun skips the fits
already in the file (by law, method, budget, problem and noise), and
:func:`benchmarks.results.drop_incomplete_row` and :func:`benchmarks.results.locked`
guard the file as in :mod:`benchmarks.runner`. ``<out>.json`` records the command and the
machine.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..backends import map_unordered
from ..isolation import default_start_method, run_in_child
from ..metrics import FVU_THRESHOLD, fvu
from ..results import append_rows, drop_incomplete_row, locked, machine_info, portable_command
from .laws import get_law, load_laws
from .methods import DEFAULT_METHODS, METHODS, Method
from .sampling import make_problem
from .scoring import symbolic_recovery

logger = logging.getLogger(__name__)

COLUMNS = [
    "law",
    "n_variables",
    "problem",
    "method",
    "max_time",
    "noise",
    "status",
    "fit_time",
    "fvu",
    "numeric_recovery",
    "symbolic_recovery",
    "expression",
    "error",
]
_ERROR_CHARS = 500


def default_time_limit(max_time: float) -> float:
    """Seconds after which a fit's child is killed: well past any honest overrun."""
    return 2.0 * max_time + 20.0


@dataclass(frozen=True)
class Fit:
    """One fit: a method at a budget on one problem of a law at one noise level."""

    law: str
    problem: int
    method: str
    max_time: float
    noise: float = 0.0

    @property
    def key(self) -> tuple:
        return fit_key(self.law, self.method, self.max_time, self.problem, self.noise)


def fit_key(law, method, max_time, problem, noise) -> tuple:
    """What identifies a fit in a result file, from its values as written or as planned."""
    return (str(law), str(method), float(max_time), int(problem), float(noise))


def plan_fits(
    law_names: Iterable[str], methods: Iterable[str], max_times: Iterable[float], problems: int, noises: Iterable[float]
) -> list[Fit]:
    """Every fit, law by law, the methods of each problem, noise and budget next to each other."""
    methods, max_times, noises = list(methods), [float(t) for t in max_times], [float(n) for n in noises]
    return [
        Fit(law, problem, method, max_time, noise)
        for law in law_names
        for problem in range(problems)
        for noise in noises
        for max_time in max_times
        for method in methods
    ]


def read_done(path: Path) -> set:
    """Keys of the fits already in a result file."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return {fit_key(*values) for values in frame[["law", "method", "max_time", "problem", "noise"]].itertuples(False)}


# --------------------------------------------------------------------------- one fit

_PRELOADED: set = set()


def _preload(method: Method) -> None:
    """The method's modules, once per worker process (forked fits inherit them)."""
    if method.name in _PRELOADED or method.preload is None:
        return
    _PRELOADED.add(method.name)
    with contextlib.suppress(ImportError):  # the fit reports it
        method.preload()


def _child(method: Method, law_name: str, X, y, X_validation, connection, max_time, seed, n_threads) -> None:
    from threadpoolctl import threadpool_limits

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(n_threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n_threads)
    warnings.simplefilter("ignore")
    law = get_law(law_name)
    start = time.perf_counter()
    try:
        with threadpool_limits(limits=n_threads):
            fitted = method.fit(X, y, law, max_time, seed, n_threads)
            fit_time = time.perf_counter() - start
            with np.errstate(all="ignore"):
                predictions = np.asarray(fitted.predict(X_validation), dtype=np.float64)
        answer = {"status": "ok", "fit_time": fit_time, "predictions": predictions, "expression": fitted.expression}
    except Exception as error:  # a failing fit is a miss, its message recorded
        answer = {
            "status": "error",
            "fit_time": time.perf_counter() - start,
            "error": f"{type(error).__name__}: {error}"[:_ERROR_CHARS],
        }
    try:
        connection.send(answer)
    finally:
        connection.close()


def _fit_in_child(method: Method, fit: Fit, problem, time_limit: float, n_threads: int, start_method: str) -> dict:
    before = (method, fit.law, problem.X_support, problem.y_support, problem.X_validation)
    outcome = run_in_child(_child, before, (fit.max_time, fit.problem, n_threads), time_limit, start_method)
    if outcome.answer is not None:
        return outcome.answer
    if outcome.timed_out:
        return {"status": "timeout", "fit_time": outcome.elapsed, "error": f"time limit of {time_limit:g} s reached"}
    return {"status": "crashed", "fit_time": outcome.elapsed, "error": f"process exited with code {outcome.exitcode}"}


def run_fit(
    fit: Fit, method: Method, time_limit: float | None = None, n_threads: int = 1, start_method: str | None = None
) -> dict:
    """Draw the problem, fit in a child process, score: the fit's row."""
    law = get_law(fit.law)
    row = {
        "law": fit.law,
        "n_variables": law.n_variables,
        "problem": fit.problem,
        "method": fit.method,
        "max_time": fit.max_time,
        "noise": fit.noise,
    }
    problem = make_problem(law, fit.problem, fit.noise)
    _preload(method)
    time_limit = default_time_limit(fit.max_time) if time_limit is None else time_limit
    answer = _fit_in_child(method, fit, problem, time_limit, n_threads, start_method or default_start_method())
    value = fvu(problem.y_validation, answer.get("predictions")) if answer["status"] == "ok" else float("inf")
    row.update(
        status=answer["status"],
        fit_time=answer["fit_time"],
        fvu=value,
        numeric_recovery=value <= FVU_THRESHOLD,
        symbolic_recovery=symbolic_recovery(answer.get("expression"), law, value),
        expression=answer.get("expression"),
        error=answer.get("error"),
    )
    return row


# --------------------------------------------------------------------------- a run


def run(
    out: str | Path,
    law_names: Iterable[str] | None = None,
    methods: Iterable[str] = DEFAULT_METHODS,
    max_times: Iterable[float] = (1.0,),
    problems: int = 1,
    noises: Iterable[float] = (0.0,),
    n_jobs: int = 1,
    backend: str = "loky",
    time_limit: float | None = None,
    n_threads: int = 1,
    registry: dict[str, Method] | None = None,
    on_row: Callable[[dict], None] | None = None,
    command: str | None = None,
) -> pd.DataFrame:
    """Run every planned fit not yet in ``out``; the whole result table.

    ``law_names``: the laws (default all 120, in the file's order); ``registry``: the
    methods by name (default :data:`.methods.METHODS`); ``time_limit``: the kill timeout
    of each fit (default :func:`default_time_limit` of its budget); ``on_row`` is called
    with each row as it is written.
    """
    registry = METHODS if registry is None else registry
    law_names = list(load_laws()) if law_names is None else list(law_names)
    for name in law_names:
        get_law(name)
    unknown = [name for name in methods if name not in registry]
    if unknown:
        raise ValueError(f"Unknown methods {unknown}; expected some of {sorted(registry)}.")
    fits = plan_fits(law_names, methods, max_times, problems, noises)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with locked(out):
        cut = drop_incomplete_row(out)
        if cut:
            logger.warning("Cut the incomplete last row of %s (its run was killed): %r", out, cut)
        done = read_done(out)
        todo = [fit for fit in fits if fit.key not in done]
        logger.info("%d fits, %d already done, %d to run.", len(fits), len(fits) - len(todo), len(todo))
        _write_metadata(out, command, len(fits))
        arguments = ((fit, registry[fit.method], time_limit, n_threads) for fit in todo)
        for row in map_unordered(run_fit, arguments, backend, n_jobs):
            append_rows(out, [row], COLUMNS)
            if on_row is not None:
                on_row(row)
    return read_results(out)


def read_results(*paths: str | Path) -> pd.DataFrame:
    """The rows of result files, a fit found in several taken from the first."""
    frames = [pd.read_csv(path, dtype={"law": str, "method": str, "expression": str, "error": str}) for path in paths]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    return frame.drop_duplicates(["law", "method", "max_time", "problem", "noise"]).reset_index(drop=True)


def _write_metadata(out: Path, command: str | None, n_fits: int) -> None:
    path = out.with_suffix(".json")
    try:
        previous = json.loads(path.read_text()) if path.exists() else {}
    except json.JSONDecodeError:
        previous = {}
    metadata = {
        "command": portable_command(command) if command else previous.get("command"),
        "machine": machine_info(),
        "n_fits": n_fits,
        "started": previous.get("started", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        "last_run": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(metadata, indent=2))
    os.replace(temporary, path)
