"""A process-wide setting that fits running in threads of one process share.

Fits in threads (``GridSearchCV`` on joblib's threading backend) change settings that
belong to the whole process: torch's intra-op threads, the package logger's level.
The first fit in applies the setting, the last one out restores what was there before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class SharedSetting:
    """Counts the fits using a setting; ``apply`` sets it and returns the function that
    restores the previous state."""

    def __init__(self):
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
