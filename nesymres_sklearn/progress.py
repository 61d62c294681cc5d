"""Progress messages of the package during a fit (``verbose``)."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

from .shared_setting import SharedSetting

PACKAGE_LOGGER = logging.getLogger(__name__.rsplit(".", 1)[0])

_package_logging = SharedSetting()


@contextmanager
def progress(verbose: int):
    """Progress messages of the package on stderr for the duration of a fit when
    ``verbose`` is positive, without a logging set-up (one configured by the user is
    used instead); none at ``verbose=0``. Fits in threads of one process share the
    setting (:class:`.SharedSetting`)."""

    def apply():
        level, handler = PACKAGE_LOGGER.level, None
        PACKAGE_LOGGER.setLevel(logging.INFO if verbose else logging.WARNING)
        if verbose and not PACKAGE_LOGGER.hasHandlers():
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("[NeSymReS] %(message)s"))
            PACKAGE_LOGGER.addHandler(handler)

        def restore():
            PACKAGE_LOGGER.setLevel(level)
            if handler is not None:
                PACKAGE_LOGGER.removeHandler(handler)

        return restore

    with _package_logging.held(apply):
        yield
