"""One BLAS thread for the numerical steps of a fit.

The fit's linear algebra works on at most ``max_points`` rows and a few dozen columns:
several BLAS threads buy nothing there, and beside a busy core they wait for it. The
power-factor split's 33 least-squares fits of a 20-feature, 10,000-row problem took
1.33 s with NumPy's default threads while another process held one of the 2 cores of
the development machine, and the whole fit 0.11 s with one; the surrogates'
small factorisations took 40-80 ms with one thread and up to 7 s with several.
``fit`` holds :func:`one_blas_thread` throughout; the stages that also run on their own
(the identities, the surrogates) hold it themselves. Fits in threads of one process
share the setting (:class:`.SharedSetting`).
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import cache

from threadpoolctl import ThreadpoolController

from .shared_setting import SharedSetting

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
