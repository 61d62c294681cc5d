"""Run one task in a child process with a hard time limit.

:func:`run_task` starts a child that samples the points, fits, predicts the iid and
ood test points and scores them (:func:`evaluate_task`), and sends its row back
through a pipe. The parent waits at most ``time_limit`` seconds: then it kills the
child and records ``status="timeout"``; a child that dies without answering is
recorded as ``"crashed"`` with its exit code. Inside the child, an exception of the
method gives ``"error"`` with its message and an ``ImportError`` ``"not_installed"``,
so a failing fit never stops a run.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

from .methods import get_method
from .metrics import score, symbolic_scores
from .tasks import Task

logger = logging.getLogger(__name__)

_ERROR_CHARS = 500


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
            X, y = task.equation.sample_train(task.n_points, seed=task.seed, noise=task.noise)
            adapter = get_method(task.method)(
                task.value, time_budget=task.time_budget, random_state=task.seed, **task.options
            )
            fit_start = time.perf_counter()
            adapter.fit(X, y, units=task.equation.units)
            row["fit_time"] = time.perf_counter() - fit_start
            row["expression"] = adapter.expression()
            for kind in ("iid", "ood"):
                X_test, y_test = task.equation.sample_test(kind, task.n_test_points, seed=task.seed)
                with np.errstate(all="ignore"):
                    y_pred = adapter.predict(X_test)
                row.update(score(y_test, y_pred, suffix=f"_{kind}"))
        row["status"] = "ok"
        if row["expression"] is not None:
            row.update(symbolic_scores(row["expression"], task.equation.expression))
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
    outcome = run_in_child(_child, (task,), (n_threads,), time_limit, start_method)
    if outcome.answer is not None:
        return outcome.answer
    row = task.base_row()
    row["total_time"] = outcome.elapsed
    if outcome.timed_out:
        row.update(status="timeout", fit_time=outcome.elapsed, error=f"time limit of {time_limit} s reached")
    else:
        row.update(status="crashed", error=f"process exited with code {outcome.exitcode}")
    return row


@dataclass(frozen=True)
class ChildOutcome:
    """What a child sent (``None`` when it sent nothing), whether it ran out of time, the
    seconds it took and its exit code."""

    answer: object
    timed_out: bool
    elapsed: float
    exitcode: int | None


def run_in_child(target, before: tuple, after: tuple, time_limit: float | None, start_method: str) -> ChildOutcome:
    """Run ``target(*before, connection, *after)`` in a child process that sends one
    answer through ``connection``; kill it after ``time_limit`` seconds, or when it
    died without answering."""
    context = multiprocessing.get_context(start_method)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=target, args=(*before, sender, *after))
    start = time.perf_counter()
    process.start()
    sender.close()
    answer = None
    # poll() also returns when the child dies (end of file); recv() then raises.
    timed_out = not receiver.poll(time_limit)
    if not timed_out:
        try:
            answer = receiver.recv()
        except (EOFError, OSError):
            answer = None
    elapsed = time.perf_counter() - start
    if answer is None:
        process.kill()
        process.join()
    else:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join()
    receiver.close()
    return ChildOutcome(answer, timed_out, elapsed, process.exitcode)


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
