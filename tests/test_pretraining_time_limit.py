"""Calls under a wall-clock limit in a worker process, from any thread."""

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from pretraining.time_limit import TimeLimitExceeded, call_with_time_limit


def _fails():
    raise ValueError("not writable")


def _worker_pid(_=None) -> int:
    return os.getpid()


def test_a_call_returns_its_result_or_raises_its_exception():
    assert call_with_time_limit(30, pow, 2, 10) == 1024
    with pytest.raises(ValueError, match="not writable"):
        call_with_time_limit(30, _fails)
    assert call_with_time_limit(None, _worker_pid) == os.getpid()  # no limit: in this thread
    assert call_with_time_limit(30, _worker_pid) != os.getpid()  # with one: in the worker


def test_a_call_past_its_limit_is_stopped_and_the_next_call_gets_a_new_worker():
    first = call_with_time_limit(30, _worker_pid)
    with pytest.raises(TimeLimitExceeded, match="sleep ran for more than 0.2 s"):
        call_with_time_limit(0.2, time.sleep, 60)
    assert call_with_time_limit(30, _worker_pid) not in (first, os.getpid())


def test_the_limit_holds_outside_the_main_thread():
    """A SIGALRM timer works only in the main thread; a worker process in any."""

    def in_a_thread():
        with pytest.raises(TimeLimitExceeded):
            call_with_time_limit(0.2, time.sleep, 60)
        return call_with_time_limit(30, pow, 3, 2)

    with ThreadPoolExecutor(2) as threads:
        assert list(threads.map(lambda _: in_a_thread(), range(2))) == [9, 9]


def _in_a_forked_child(queue) -> None:
    try:
        queue.put(("ok", call_with_time_limit(30, _worker_pid), os.getpid()))
    except Exception as error:  # sent back to the test
        queue.put(("error", repr(error), os.getpid()))


def test_a_child_forked_after_a_call_starts_its_own_worker():
    """The child inherits the parent's worker object; only the parent may use that worker
    (multiprocessing: "can only test a child process")."""
    import multiprocessing

    parents_worker = call_with_time_limit(30, _worker_pid)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_a_forked_child, args=(queue,))
    child.start()
    status, worker, child_pid = queue.get(timeout=60)
    child.join(60)
    assert status == "ok", worker
    assert worker not in (parents_worker, child_pid, os.getpid())
    assert call_with_time_limit(30, _worker_pid) == parents_worker  # the parent's worker still serves it
