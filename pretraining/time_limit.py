"""Calls under a wall-clock limit, in any thread of any process.

SymPy has no bound on its own work (``sympy.simplify`` of some trees runs for
minutes), so its calls need a limit from outside. A signal (``SIGALRM``) only works in
a process's main thread, and it interrupts whatever Python code runs when it fires, a
weakref callback of SymPy's cache included. Here the call runs in a worker process
instead: the caller sends it the function and its arguments, waits at most ``seconds``
for the answer, and kills a worker that has not answered (the next call starts a new
one). Each thread has its own worker, so threads never wait for each other. Workers
are started with ``fork`` where the platform has it (a worker inherits the caller's
imported modules, so it answers its first call at once) and are daemons: they end with
the process that started them. A child forked from a process that has a worker starts
its own (only the process that started a worker may use it).

A daemonic process (a worker of :class:`multiprocessing.Pool`) may not start
processes; there the call runs in the calling thread without a limit.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any


class TimeLimitExceeded(Exception):
    """A call ran out of time (:func:`call_with_time_limit`)."""


def _serve(connection) -> None:
    """The worker's loop: call each ``(function, args)`` received, answer
    ``(True, result)`` or ``(False, exception)``; end when the caller's end closes."""
    while True:
        try:
            function, args = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer = (True, function(*args))
        except Exception as error:  # sent back and raised in the caller
            answer = (False, error)
        try:
            connection.send(answer)
        except Exception as error:  # a result or an exception that does not pickle
            connection.send((False, RuntimeError(f"{type(error).__name__}: {error}")))


class _Worker:
    """One worker process and the caller's end of its pipe."""

    def __init__(self):
        self.owner = os.getpid()  # a forked child inherits this object but must start its own worker
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs,), daemon=True)
        self.process.start()
        theirs.close()

    def call(self, function: Callable, args: tuple, seconds: float) -> Any:
        self.connection.send((function, args))
        # poll() also returns when the worker dies (end of file); recv() then raises.
        if not self.connection.poll(seconds):
            self.stop()
            raise TimeLimitExceeded(f"{getattr(function, '__name__', function)} ran for more than {seconds} s")
        try:
            succeeded, value = self.connection.recv()
        except (EOFError, OSError):
            self.stop()
            raise RuntimeError(f"the worker running {getattr(function, '__name__', function)} died") from None
        if not succeeded:
            raise value
        return value

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()


_workers = threading.local()


def call_with_time_limit(seconds: float | None, function: Callable, *args) -> Any:
    """``function(*args)``, or :class:`TimeLimitExceeded` when it does not return
    within ``seconds`` (``None`` or 0: no limit, the call runs in this thread).
    ``function``, ``args``, the result and any exception travel to and from the worker
    by pickle; an exception raised by ``function`` is raised here."""
    if not seconds or seconds <= 0 or multiprocessing.current_process().daemon:
        return function(*args)
    worker = getattr(_workers, "worker", None)
    if worker is None or worker.owner != os.getpid() or not worker.process.is_alive():
        worker = _workers.worker = _Worker()
    try:
        return worker.call(function, args, seconds)
    finally:
        if not worker.process.is_alive():
            _workers.worker = None
