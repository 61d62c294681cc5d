"""Where the tasks of a run execute: joblib's backends on this machine, or a cluster.

``loky`` (processes) and ``threading`` are joblib's own. ``dask`` connects to the
scheduler in ``DASK_SCHEDULER_ADDRESS`` (or starts a local cluster) through
``dask.distributed.Client``; ``ray`` registers Ray's joblib backend and connects with
``ray.init`` (``RAY_ADDRESS`` selects an existing cluster). Whatever the backend, each
worker runs every fit in a child process (:mod:`benchmarks.isolation`), so time limits
hold on a cluster too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

#: Backends of the command line (joblib's ``multiprocessing`` is accepted too).
BACKENDS = ("loky", "threading", "dask", "ray")


class parallel_backend:
    """Context manager selecting the joblib backend for ``n_jobs`` workers."""

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
                raise RuntimeError(
                    "The dask backend needs 'dask[distributed]' (pip install 'dask[distributed]')."
                ) from error
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


def map_unordered(function: Callable, arguments: Iterable[tuple], backend: str = "loky", n_jobs: int = 1) -> Iterator:
    """``function(*args)`` for every tuple of ``arguments`` on ``n_jobs`` workers of
    ``backend``, yielded as each call finishes (not in order)."""
    from joblib import Parallel, delayed

    with parallel_backend(backend, n_jobs):
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        yield from parallel(delayed(function)(*args) for args in arguments)
