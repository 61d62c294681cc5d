"""The runner on real clusters: a dask ``LocalCluster`` and a local ray instance, each
with separate worker processes, one of which is killed in the middle of a fit."""

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

import benchmarks
from benchmarks import backends, runner
from benchmarks.profiles import PROFILES
from benchmarks.results import drop_incomplete_row, read_results
from benchmarks.tasks import KEY, plan_tasks, task_key

QUICK = PROFILES["quick"]


def cheapest(*methods):
    """The quick profile restricted to its cheapest methods (all three equations)."""
    return QUICK.with_overrides(methods={name: QUICK.methods[name] for name in methods})


def keys(frame) -> Counter:
    return Counter(task_key(*values) for values in frame[KEY].itertuples(index=False))


def is_stopped(process: psutil.Process, timeout: float = 2.0) -> bool:
    """Whether ``process`` reaches the stopped state within ``timeout`` seconds of a
    SIGSTOP (on a loaded machine the signal lands when the process is next scheduled)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.status() == psutil.STATUS_STOPPED:
            return True
        time.sleep(0.005)
    return False


def stop_a_fit(is_worker, sweep, timeout=60.0, same_command=True) -> tuple[psutil.Process, psutil.Process]:
    """``(worker, fit)``: a worker process in the middle of a fit, and the fit's child
    process, stopped (SIGSTOP) so that the task cannot finish before the worker dies.
    ``same_command``: the fit is told apart from the worker's other children by its
    command line, a fork's (ray retitles its workers, so there any child is a fit).
    ``sweep``: the ``(thread, errors)`` running the fits; its end stops the wait."""
    thread, errors = sweep
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not thread.is_alive():
            raise AssertionError(f"the sweep ended before a fit was caught; its errors: {errors}")
        for worker in psutil.process_iter():
            try:
                if not is_worker(worker):
                    continue
                # The fit is a fork of the worker: same command line.
                fits = [c for c in worker.children() if not same_command or c.cmdline() == worker.cmdline()]
                for fit in fits:
                    fit.suspend()
                    if is_stopped(fit):
                        return worker, fit
                    fit.resume()
            except psutil.Error:  # the process ended meanwhile
                continue
        time.sleep(0.005)
    raise AssertionError("no fit started")


def in_background(function, *args, **kwargs):
    """Run ``function`` in a thread; returns the thread and the list of its exceptions."""
    errors = []

    def target():
        try:
            function(*args, **kwargs)
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, errors


@pytest.mark.slow
def test_quick_profile_on_a_dask_cluster_loses_a_worker_and_resumes(tmp_path, caplog):
    import dask
    from dask.distributed import Client, LocalCluster

    profile = cheapest("gpr", "gplearn")
    planned = {task.key for task in plan_tasks(profile)}
    out = tmp_path / "quick.csv"
    # Workers must be able to start the fits' child processes; a task whose worker dies
    # fails at once instead of being retried, so that the rerun has something to do.
    config = {"distributed.worker.daemon": False, "distributed.scheduler.allowed-failures": 0}
    with (
        dask.config.set(config),
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        argv = ["--profile", "quick", "--methods", "gpr", "gplearn", "--out", str(out), "--no-progress"]
        argv += ["--backend", "dask", "--scheduler", cluster.scheduler_address, "--n-jobs", "2"]
        pids = set(client.run(os.getpid).values())

        sweep, errors = in_background(runner.main, argv)
        worker, fit = stop_a_fit(lambda process: process.pid in pids, (sweep, errors))
        worker.send_signal(signal.SIGKILL)
        fit.kill()
        sweep.join(timeout=120)
        assert not sweep.is_alive() and errors == []

        # The sweep went on without the killed worker's task(s): no partial row, no duplicate.
        assert drop_incomplete_row(out) is None
        first = read_results(out)
        done = keys(first)
        assert set(done) < planned and max(done.values()) == 1
        assert (first["status"] == "ok").all(), first[["method", "status", "error"]]
        assert "gave no row (lost with their workers)" in caplog.text

        # The same command again runs exactly the lost tasks.
        assert runner.main(argv) == 0
    results = read_results(out)
    assert keys(results) == Counter(planned) and (results["status"] == "ok").all()
    assert results.iloc[: len(first)].equals(first)


@pytest.mark.slow
def test_quick_profile_on_a_ray_cluster_retries_a_lost_worker(tmp_path):
    import ray

    # gplearn fits lasting seconds even on a loaded machine: one is caught in the middle.
    profile = cheapest("gplearn").with_overrides(method_options={"gplearn": {"generations": 200}})
    planned = {task.key for task in plan_tasks(profile)}
    out = tmp_path / "quick.csv"
    # Ray's workers are not children of this process: tell them where the package is.
    repository = str(Path(benchmarks.__file__).parents[1])
    # Ray's workers run at niceness 15 by default: beside busy processes they starve.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={"env_vars": {"PYTHONPATH": repository}},
        _system_config=backends.RAY_SYSTEM_CONFIG,
    )
    try:
        sweep, errors = in_background(runner.run, profile, out, n_jobs=2, backend="ray", progress=False)
        is_worker = lambda process: process.name() == "ray::run_task"  # noqa: E731
        worker, fit = stop_a_fit(is_worker, (sweep, errors), timeout=180, same_command=False)
        worker.send_signal(signal.SIGKILL)
        fit.kill()
        sweep.join(timeout=120)
        assert not sweep.is_alive() and errors == []
        # Ray ran the lost task again on another worker: every task once, in one pass.
        results = read_results(out)
        assert keys(results) == Counter(planned) and (results["status"] == "ok").all()
        content = out.read_bytes()
        runner.run(profile, out, n_jobs=2, backend="ray", progress=False)
        assert out.read_bytes() == content
    finally:
        ray.shutdown()


def _niceness() -> int:
    return os.nice(0)


@pytest.mark.slow
def test_a_local_ray_cluster_runs_its_workers_at_normal_priority(monkeypatch):
    """Ray starts workers at niceness 15, where CPU-bound neighbours starve them (the
    lost-worker test above caught no fit in 10 minutes beside two busy processes). The
    backend's own cluster runs them at 0."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # the workers import _niceness from here
    assert list(backends.map_unordered(_niceness, [()], backend="ray", n_jobs=1)) == [0]
