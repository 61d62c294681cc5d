"""A process-wide setting that fits running in threads of one process share.

Fits in threads (``GridSearchCV`` on joblib's threading backend) change settings that
belong to the whole process: torch's intra-op threads, the package logger's level.
The first fit in applies the setting, the last one out restores what was there before.
A forked child has none of its parent's other threads: it starts with no fit holding
the setting and a new lock (the parent's could be held by a thread that does not exist
in the child).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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
