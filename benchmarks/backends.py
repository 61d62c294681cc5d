"""Where the tasks of a run execute: joblib's backends on this machine, or a cluster.

``loky`` (processes) and ``threading`` are joblib's own (``multiprocessing`` is
accepted too). ``dask`` and ``ray`` send each call to a cluster: the one at
``address`` (by default ``DASK_SCHEDULER_ADDRESS`` or ``RAY_ADDRESS``), or a local
one started for the run. Either way the results come back to this process, the only
one that writes the result file.

A call whose worker is lost is run again by the engine (dask's
``distributed.scheduler.allowed-failures``, ray's ``max_retries``); when it is lost
for good, it is logged and yields nothing: the run goes on, and a rerun of the same
command does the task. A call that raises (the fits' own errors are caught in their
child processes, so this means a broken cluster, e.g. workers without the
``benchmarks`` package) stops the run, as on joblib's backends.

Whatever the backend, each worker runs every fit in a child process
(:mod:`benchmarks.isolation`), so time limits hold on a cluster too. Dask starts its
workers as daemonic processes, which cannot have children: start them with
``DASK_DISTRIBUTED__WORKER__DAEMON=False``.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError

logger = logging.getLogger(__name__)

#: Backends of the command line (joblib's ``multiprocessing`` is accepted too).
BACKENDS = ("loky", "threading", "dask", "ray")
#: Ray's settings of a local cluster started here: its workers at normal priority. Ray
#: starts them at niceness 15, so beside CPU-bound processes of normal priority they
#: get a few percent of a core: the fits are the work here, and a timed fit would be
#: starved of its budget.
RAY_SYSTEM_CONFIG = {"worker_niceness": 0}


def map_unordered(
    function: Callable,
    arguments: Iterable[tuple],
    backend: str = "loky",
    n_jobs: int = 1,
    address: str | None = None,
) -> Iterator:
    """``function(*args)`` for every tuple of ``arguments`` on ``n_jobs`` workers of
    ``backend``, yielded as each call finishes (not in order).

    On ``dask`` and ``ray``, ``n_jobs`` is the number of calls sent to the cluster at a
    time (a negative value sends them all), ``address`` that of the scheduler (dask)
    or cluster (ray), and a call lost with its worker is logged and skipped.
    """
    if backend == "dask":
        yield from _map_dask(function, arguments, n_jobs, address)
    elif backend == "ray":
        yield from _map_ray(function, arguments, n_jobs, address)
    elif backend in ("loky", "threading", "multiprocessing"):
        from joblib import Parallel, delayed, parallel_config

        with parallel_config(backend=backend, n_jobs=n_jobs):
            parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            yield from parallel(delayed(function)(*args) for args in arguments)
    else:
        raise ValueError(f"Unknown backend {backend!r}; expected one of {BACKENDS}.")


def _map_dask(function: Callable, arguments: Iterable[tuple], n_jobs: int, address: str | None) -> Iterator:
    try:
        import dask
        from dask.distributed import Client, LocalCluster, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError as error:
        raise RuntimeError("The dask backend needs 'dask[distributed]' (pip install 'dask[distributed]').") from error
    address = address or os.environ.get("DASK_SCHEDULER_ADDRESS")
    with contextlib.ExitStack() as stack:
        if address is None:
            # The nanny reads the setting whenever it (re)starts a worker: keep it for the run.
            stack.enter_context(dask.config.set({"distributed.worker.daemon": False}))
            n_workers = n_jobs if n_jobs > 0 else os.cpu_count()
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, dashboard_address=None)
            address = stack.enter_context(cluster)
        client = stack.enter_context(Client(address))
        daemonic = sorted(worker for worker, flag in client.run(_is_daemonic).items() if flag)
        if daemonic:
            raise RuntimeError(
                f"The dask workers {daemonic} are daemonic processes, which cannot start the fits' child "
                "processes: start them with DASK_DISTRIBUTED__WORKER__DAEMON=False."
            )
        calls = iter(arguments)
        running = {}
        completed = as_completed()

        def submit(args: tuple) -> None:
            future = client.submit(function, *args, pure=False)
            running[future] = args
            completed.add(future)

        for args in itertools.islice(calls, n_jobs if n_jobs > 0 else None):
            submit(args)
        for future in completed:
            args = running.pop(future)
            for following in itertools.islice(calls, 1):
                submit(following)
            try:
                result = future.result()
            except (KilledWorker, CancelledError) as error:
                _log_lost(args, error)
                continue
            except Exception as error:
                raise RuntimeError(f"{args[0]} failed on the dask cluster: {error}") from error
            finally:
                future.release()
            yield result


def _is_daemonic() -> bool:
    return multiprocessing.current_process().daemon


def _map_ray(function: Callable, arguments: Iterable[tuple], n_jobs: int, address: str | None) -> Iterator:
    try:
        import ray
    except ImportError as error:
        raise RuntimeError("The ray backend needs 'ray' (pip install ray).") from error
    started = not ray.is_initialized()
    if started:
        address = address or os.environ.get("RAY_ADDRESS")
        if address is None:
            ray.init(num_cpus=n_jobs if n_jobs > 0 else None, include_dashboard=False, _system_config=RAY_SYSTEM_CONFIG)
        else:
            ray.init(address=address)
    lost = (
        ray.exceptions.WorkerCrashedError,
        ray.exceptions.NodeDiedError,
        ray.exceptions.ObjectLostError,
        ray.exceptions.TaskCancelledError,
    )
    try:
        remote = ray.remote(num_cpus=1)(function)
        calls = iter(arguments)
        running = {}
        for args in itertools.islice(calls, n_jobs if n_jobs > 0 else None):
            running[remote.remote(*args)] = args
        while running:
            (reference,), _ = ray.wait(list(running), num_returns=1)
            args = running.pop(reference)
            for following in itertools.islice(calls, 1):
                running[remote.remote(*following)] = following
            try:
                result = ray.get(reference)
            except lost as error:
                _log_lost(args, error)
                continue
            except ray.exceptions.RayError as error:
                raise RuntimeError(f"{args[0]} failed on the ray cluster: {error}") from error
            yield result
    finally:
        if started:
            ray.shutdown()


def _log_lost(args: tuple, error: BaseException) -> None:
    logger.warning("No result for %s, its worker was lost: %s: %s", args[0], type(error).__name__, error)
