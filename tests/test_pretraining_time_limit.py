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
