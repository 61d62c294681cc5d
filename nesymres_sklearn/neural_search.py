"""The network's part of ``fit``: load the model, encode the points, run the search.

This is the only module of the estimator's path that needs torch. The estimator
imports it on its first ``fit``, so unpickling a fitted estimator and predicting with
it need NumPy, SciPy and SymPy only.
"""

from __future__ import annotations

import os
import threading
import warnings
from contextlib import contextmanager

import numpy as np
import torch

from . import original  # noqa: F401  (registers the authors' encoding, search and checkpoints)
from .network.encoding import encode_points, get_encoding
from .network.model import NeSymReSModel
from .network.weights import ModelSource, load_model, resolve_device
from .search.anytime import SearchResult, search
from .search.settings import SearchSettings

_threads_lock = threading.Lock()
_threads_users = 0
_threads_before = 1


@contextmanager
def _single_thread_on_cpu(device: torch.device):
    """Decode with one intra-op thread on CPU, restoring the setting afterwards.

    Beam search runs many tiny operations; extra threads only add synchronisation
    (on the 2-core development machine a beam-32 search took 0.2 s with one thread
    and up to 14 s with two while another process was busy). Fits running in threads
    of one process (``GridSearchCV`` on joblib's threading backend) share the setting:
    the first one in saves it, the last one out restores it.
    """
    global _threads_users, _threads_before
    if device.type != "cpu":
        yield
        return
    with _threads_lock:
        if _threads_users == 0:
            _threads_before = torch.get_num_threads()
            torch.set_num_threads(1)
        _threads_users += 1
    try:
        yield
    finally:
        with _threads_lock:
            _threads_users -= 1
            if _threads_users == 0:
                torch.set_num_threads(_threads_before)


def _after_fork_in_child() -> None:
    """A forked child starts with one intra-op thread (the parent's OpenMP and MKL
    thread pools are not fork-safe) and no fit of the parent's other threads in progress."""
    global _threads_lock, _threads_users
    _threads_lock, _threads_users = threading.Lock(), 0
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_after_fork_in_child)


def load_network(model: str | os.PathLike, revision: str | None, device: str) -> NeSymReSModel:
    """The estimator's ``model`` on its ``device`` (loaded once per process)."""
    return load_model(ModelSource.parse(model, revision), device=resolve_device(device))


def propose_and_fit(
    network: NeSymReSModel,
    X: np.ndarray,
    y: np.ndarray,
    settings: SearchSettings,
    seed: int,
    started: float,
    weights: np.ndarray | None = None,
) -> SearchResult:
    """Candidates for ``(X, y)`` (already in the network's units, see
    :mod:`.search.scaling`) with their fitted constants; warns when the numbers lie
    outside what the number encoding represents well."""
    encoding = get_encoding(network.config.encoding)
    message = encoding.range_warning(np.abs(np.concatenate([X.ravel(), y])))
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)
    device = next(network.parameters()).device
    points = torch.from_numpy(encode_points(X, y, network.config.n_variables, network.config.encoding))
    with _single_thread_on_cpu(device):
        return search(network, points.to(device), X, y, settings, seed, started, weights)
