"""A process-wide setting that fits running in threads of one process share, and the
one that every stage of the search holds: one BLAS thread.

Fits in threads (``GridSearchCV`` on joblib's threading backend) change settings that
belong to the whole process: torch's intra-op threads, BLAS threads, the package
logger's level. The first fit in applies the setting, the last one out restores what
was there before. A forked child has none of its parent's other threads: it starts with
no fit holding the setting and a new lock (the parent's could be held by a thread that
does not exist in the child).

One BLAS thread (:func:`one_blas_thread`): the fit's linear algebra works on at most
``max_points`` rows and a few dozen columns; several BLAS threads buy nothing there,
and beside a busy core they wait for it. The power-factor split's 33 least-squares fits
of a 20-feature, 10,000-row problem took 1.33 s with NumPy's default threads while
another process held one of the 2 cores of the development machine, and the whole fit
0.11 s with one; the surrogates' small factorisations took 40-80 ms with one thread and
up to 7 s with several. ``fit`` holds it throughout; the stages that also run on their
own (the identities, the surrogates, the groups' identity) hold it themselves.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

from threadpoolctl import ThreadpoolController

_SETTINGS: weakref.WeakSet = weakref.WeakSet()


class SharedSetting:
    """Counts the fits using a setting; ``apply`` sets it and returns the function that
    restores the previous state."""

    def __init__(self):
        self._forget_holders()
        _SETTINGS.add(self)

    def _forget_holders(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._restore: Callable[[], None] | None = None

    @contextmanager
    def held(self, apply: Callable[[], Callable[[], None]]) -> Iterator[None]:
        """Apply the setting unless another fit holds it already, for the ``with`` block."""
        with self._lock:
            if self._users == 0:
                self._restore = apply()
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    restore, self._restore = self._restore, None
                    restore()


def _forget_holders_after_fork() -> None:
    for setting in _SETTINGS:
        setting._forget_holders()


os.register_at_fork(after_in_child=_forget_holders_after_fork)

_blas_threads = SharedSetting()


@cache
def _controller() -> ThreadpoolController:
    """The process's thread pools, found once (finding them takes about 30 ms)."""
    return ThreadpoolController()


def _limit_blas():
    return _controller().limit(limits=1, user_api="blas").restore_original_limits


@contextmanager
def one_blas_thread():
    """One BLAS thread for the ``with`` block; the previous limits come back when the
    last fit of the process that holds it leaves."""
    with _blas_threads.held(_limit_blas):
        yield
