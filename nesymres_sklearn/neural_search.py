"""The network's part of ``fit``: load the model, encode the points, run the search.

This is the only module of the estimator's path that needs torch. The estimator
imports it on its first ``fit``, so unpickling a fitted estimator and predicting with
it need NumPy, SciPy and SymPy only.
"""

from __future__ import annotations

import ctypes
import os
import warnings
from contextlib import contextmanager

import numpy as np
import torch

from . import original  # noqa: F401  (registers the authors' encoding, search and checkpoints)
from .network.encoding import encode_points, get_encoding
from .network.model import NeSymReSModel
from .network.weights import ModelSource, load_model, resolve_device
from .search.anytime import SearchResult, search
from .search.budget import Budget
from .search.problem import Problem
from .search.settings import SearchRequest
from .shared_setting import SharedSetting

_torch_threads = SharedSetting()


def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    return lambda: torch.set_num_threads(before)


@contextmanager
def _single_thread_on_cpu(device: torch.device):
    """Decode with one intra-op thread on CPU, restoring the setting afterwards.

    Beam search runs many tiny operations; extra threads only add synchronisation
    (on the 2-core development machine a beam-32 search took 0.2 s with one thread
    and up to 14 s with two while another process was busy). Fits running in threads
    of one process share the setting (:class:`.SharedSetting`).
    """
    if device.type != "cpu":
        yield
        return
    with _torch_threads.held(_one_thread):
        yield


def _after_fork_in_child() -> None:
    """A forked child starts with one intra-op thread: the parent's OpenMP and MKL
    thread pools are not fork-safe (the shared setting forgets the parent's fits itself)."""
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _mkl_free_buffers():
    """MKL's ``mkl_serv_free_buffers`` in torch's CPU library (``None`` where torch
    does not link MKL)."""
    try:
        library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
        return library.mkl_serv_free_buffers
    except (OSError, AttributeError):
        return None


# MKL keeps memory buffers per thread, with bookkeeping that a child forked after
# fits in several threads inherits half-made: a fit there then spun forever in MKL's
# allocator (2 of 16 trials). Freeing the buffers just before every fork leaves the child
# a clean allocator (none of 16 runs hung: ``benchmarks/studies/fork_safety.py``).
_free_mkl_buffers = _mkl_free_buffers()


def _before_fork() -> None:
    if _free_mkl_buffers is not None:
        _free_mkl_buffers()


os.register_at_fork(before=_before_fork)


def load_network(model: str | os.PathLike, revision: str | None, device: str) -> NeSymReSModel:
    """The estimator's ``model`` on its ``device`` (loaded once per process)."""
    return load_model(ModelSource.parse(model, revision), device=resolve_device(device))


def propose_and_fit(network: NeSymReSModel, problem: Problem, request: SearchRequest, budget: Budget) -> SearchResult:
    """Candidates for the ``problem`` (already in the network's units, see
    :mod:`.search.scaling`) with their fitted constants; warns when the numbers lie
    outside what the number encoding represents well."""
    X, y = problem.X, problem.y
    encoding = get_encoding(network.config.encoding)
    message = encoding.range_warning(np.abs(np.concatenate([X.ravel(), y])))
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)
    device = next(network.parameters()).device
    points = torch.from_numpy(encode_points(X, y, network.config.n_variables, network.config.encoding))
    with _single_thread_on_cpu(device):
        return search(network, points.to(device), problem, request, budget)
