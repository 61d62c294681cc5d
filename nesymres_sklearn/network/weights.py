"""Where model weights come from, and the process-wide cache of loaded models.

A model source (the estimator's ``model=`` argument, parsed once by
:meth:`ModelSource.parse`) is one of

* ``"bundled"``: the weights shipped inside the package (works offline);
* a local folder holding ``config.json`` and ``model.safetensors``;
* a Hugging Face Hub repository id (``"user/name"``), downloaded with
  :mod:`huggingface_hub` into its normal cache (``HF_HUB_OFFLINE=1`` and
  ``HF_ENDPOINT`` are honoured), at an optional ``revision``;
* a checkpoint file in another format, local (``file.ckpt``) or in a Hub repository
  (``"user/name/path/file.ckpt"``), converted once into a cached folder by the
  converter registered for its suffix in :data:`CONVERTERS`
  (:mod:`nesymres_sklearn.original` registers the authors' ``.ckpt``).

Loaded models are cached per process by source, revision and device, so cloning an
estimator or a grid search never reloads weights.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import socket
import threading
import urllib.parse
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from .model import ModelConfig, ModelLoadError, NeSymReSModel

logger = logging.getLogger(__name__)

BUNDLED = "bundled"
BUNDLED_FOLDER = Path(__file__).parent.parent / "weights"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
#: File suffix -> function converting such a checkpoint into a cached model folder.
CONVERTERS: dict[str, Callable[[Path], Path]] = {}
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_HUB_FILE = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)/(?P<file>[\w./-]+)$")

# Seconds to wait for the Hub to accept a connection before using the local cache only.
HUB_PROBE_SECONDS = 3.0

_cache: dict[tuple, NeSymReSModel] = {}
_cache_lock = threading.Lock()


def _new_cache_lock_after_fork() -> None:
    global _cache_lock
    _cache_lock = threading.Lock()  # another thread of the parent may have held it


os.register_at_fork(after_in_child=_new_cache_lock_after_fork)


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise the named device."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device={device!r} is not a valid torch device; use 'auto', 'cpu' or 'cuda'.") from None
    if resolved.type == "meta":
        raise ValueError("device='meta' holds no data, so the network cannot run on it; use device='cpu' or 'auto'.")
    available = {
        "cuda": torch.cuda.is_available,
        "mps": lambda: torch.backends.mps.is_available(),
        "xpu": lambda: hasattr(torch, "xpu") and torch.xpu.is_available(),
    }
    if resolved.type not in ("cpu", *available) or not available.get(resolved.type, lambda: True)():
        raise ValueError(
            f"device={device!r} was requested but {resolved.type.upper()} is not available in this PyTorch build "
            "or machine; use device='cpu' or 'auto'."
        )
    if resolved.type == "cuda" and resolved.index is not None and resolved.index >= torch.cuda.device_count():
        raise ValueError(
            f"device={device!r} was requested but only {torch.cuda.device_count()} CUDA device(s) exist; "
            "use device='cuda' or 'auto'."
        )
    return resolved


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files come from.

    ``kind`` is ``"bundled"``, ``"folder"``, ``"hub"`` (``location`` is a repository
    id), ``"checkpoint"`` (a local file to convert) or ``"hub-checkpoint"``
    (``location`` is a repository id, ``filename`` the file in it).
    """

    kind: str
    location: str
    revision: str | None = None
    filename: str | None = None

    @classmethod
    def parse(cls, model: str | os.PathLike = BUNDLED, revision: str | None = None) -> ModelSource:
        """Classify the ``model=`` argument; raises ``FileNotFoundError`` for none of the above."""
        if isinstance(model, str) and model == BUNDLED:
            if revision is not None:
                raise ValueError("revision applies to Hub models only, not to model='bundled'.")
            return cls("bundled", str(BUNDLED_FOLDER))
        path = Path(model).expanduser()
        if path.is_dir():
            return cls("folder", str(path))
        if path.is_file() and path.suffix in CONVERTERS:
            return cls("checkpoint", str(path.resolve()))
        if isinstance(model, str) and not path.exists():
            if _REPO_ID.match(model) and path.parent.is_dir():
                raise FileNotFoundError(
                    f"model={model!r}: there is no folder {path.resolve()} (though {path.parent.resolve()} exists), "
                    f"so it was not taken for a Hugging Face Hub id. Check the path; for the Hub repository of the "
                    f"same name, run from another directory or download it with `hf download {model}`."
                )
            if _REPO_ID.match(model):
                return cls("hub", model, revision)
            match = _HUB_FILE.match(model)
            if match and Path(match["file"]).suffix in CONVERTERS:
                return cls("hub-checkpoint", match["repo"], revision, match["file"])
        converted = ", ".join(f"'file{suffix}'" for suffix in sorted(CONVERTERS)) or "none registered"
        raise FileNotFoundError(
            f"model={str(model)!r} is neither 'bundled', an existing folder with {CONFIG_FILE} and "
            f"{WEIGHTS_FILE}, an existing checkpoint file to convert ({converted}), nor a Hugging Face Hub "
            "reference like 'user/name' (a model repository) or 'user/name/file.ckpt' (an original checkpoint)."
        )

    def cache_key(self, device: torch.device) -> tuple:
        """Local files are keyed by path and modification time (rewritten weights are
        reloaded); Hub sources by reference and revision (no network request)."""
        if self.kind in ("bundled", "folder"):
            weights = Path(self.location) / WEIGHTS_FILE
            stamp = weights.stat().st_mtime_ns if weights.exists() else None
            return ("folder", str(weights.parent.resolve()), stamp, str(device))
        if self.kind == "checkpoint":
            return ("checkpoint", self.location, Path(self.location).stat().st_mtime_ns, str(device))
        return (self.kind, self.location, self.filename, self.revision, str(device))

    def folder(self) -> Path:
        """A local folder holding the model's files (downloading or converting them if needed)."""
        if self.kind in ("bundled", "folder"):
            return Path(self.location)
        if self.kind == "hub":
            return _download(self.location, [CONFIG_FILE, WEIGHTS_FILE], self.revision)[0].parent
        if self.kind == "checkpoint":
            return CONVERTERS[Path(self.location).suffix](Path(self.location))
        path = _download(self.location, [self.filename], self.revision)[0]
        return CONVERTERS[path.suffix](path)


def load_model(
    model: str | os.PathLike | ModelSource = BUNDLED, revision: str | None = None, device="auto"
) -> NeSymReSModel:
    """The model for ``model`` (a source or the ``model=`` argument) on ``device``,
    loaded once per process."""
    source = model if isinstance(model, ModelSource) else ModelSource.parse(model, revision)
    torch_device = resolve_device(device)
    key = source.cache_key(torch_device)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    folder = source.folder()
    with _cache_lock:
        if key not in _cache:
            _cache[key] = load_folder(folder, torch_device)
        return _cache[key]


def clear_cache() -> None:
    """Forget every loaded model (they are reloaded on next use)."""
    with _cache_lock:
        _cache.clear()


def resolve_folder(model: str | os.PathLike, revision: str | None = None) -> Path:
    """A local folder holding the files of ``model`` (downloading them if needed)."""
    return ModelSource.parse(model, revision).folder()


def _reachable(endpoint: str) -> bool:
    """Whether ``endpoint`` accepts a connection within ``HUB_PROBE_SECONDS`` (assumed
    when a proxy is configured): an unreachable Hub then costs one probe, not the
    Hub client's retries (24 s)."""
    if any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")):
        return True
    url = urllib.parse.urlsplit(endpoint)
    try:
        socket.create_connection(
            (url.hostname, url.port or (443 if url.scheme == "https" else 80)), HUB_PROBE_SECONDS
        ).close()
    except (OSError, ValueError):
        return False
    return True


def _download(repo_id: str, filenames: list[str], revision: str | None) -> list[Path]:
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    cache_only = constants.is_offline_mode() or not _reachable(constants.ENDPOINT)
    try:
        paths = [
            Path(hf_hub_download(repo_id, name, revision=revision, local_files_only=cache_only)) for name in filenames
        ]
    except RevisionNotFoundError:
        raise ValueError(f"Revision {revision!r} does not exist in Hub repository {repo_id!r}.") from None
    except RepositoryNotFoundError:
        raise ValueError(
            f"Hub repository {repo_id!r} was not found at {constants.ENDPOINT} (or it is private: "
            "log in with `hf auth login`)."
        ) from None
    except LocalEntryNotFoundError:  # subclass of EntryNotFoundError: first
        not_local = f"{repo_id!r} is not a local folder (no {Path(repo_id).resolve()}), so it was taken for a Hub id"
        if constants.is_offline_mode():
            raise ConnectionError(
                f"{not_local}, but HF_HUB_OFFLINE=1 is set and it is not in the local Hub cache "
                f"({constants.HF_HUB_CACHE}). Download it once with the Hub reachable (unset HF_HUB_OFFLINE), "
                "or pass a local folder as model=."
            ) from None
        raise ConnectionError(
            f"{not_local}, but the Hugging Face Hub at {constants.ENDPOINT} could not be reached and it is not in "
            "the local cache. Check the path if you meant a folder; otherwise check the network (or HF_ENDPOINT), "
            "download it once where the Hub is reachable (then HF_HUB_OFFLINE=1 uses the cache), or pass a local "
            "folder as model=."
        ) from None
    except EntryNotFoundError as error:
        raise ModelLoadError(
            f"Hub repository {repo_id!r} lacks a file the model needs ({' and '.join(filenames)}): {error}"
        ) from None
    logger.info("Hub files %s of %s (revision %s) are in %s", filenames, repo_id, revision, paths[0].parent)
    return paths


def load_folder(folder: Path, device: torch.device) -> NeSymReSModel:
    """Build the model described by ``folder/config.json`` and load its weights strictly."""
    for name in (CONFIG_FILE, WEIGHTS_FILE):
        if not (folder / name).is_file():
            raise ModelLoadError(f"The model folder {folder} has no {name}; it needs {CONFIG_FILE} and {WEIGHTS_FILE}.")
    try:
        fields = json.loads((folder / CONFIG_FILE).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelLoadError(f"{folder / CONFIG_FILE} is not valid JSON: {error}") from None
    if not isinstance(fields, dict) or "vocabulary" not in fields:
        raise ModelLoadError(
            f"{folder / CONFIG_FILE} has no 'vocabulary' field: a model config names its tokens "
            "(re-export the model with `python -m pretraining.export`)."
        )
    unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(ModelConfig)})
    if unknown:
        raise ModelLoadError(f"{folder / CONFIG_FILE} has unknown fields {unknown}; is it a NeSymReS model config?")
    try:
        config = ModelConfig(**fields)
    except (TypeError, ValueError) as error:
        raise ModelLoadError(f"{folder / CONFIG_FILE} is not a valid model config: {error}") from None
    model = NeSymReSModel(config)
    try:
        state = load_file(folder / WEIGHTS_FILE)
    except (SafetensorError, OSError, RuntimeError) as error:
        raise ModelLoadError(f"{folder / WEIGHTS_FILE} is corrupt or not a safetensors file: {error}") from None
    not_finite = [name for name, tensor in state.items() if not torch.isfinite(tensor).all()]
    if not_finite:
        raise ModelLoadError(
            f"{folder / WEIGHTS_FILE} holds NaN or infinite values in {len(not_finite)} tensor(s), first "
            f"{not_finite[0]!r}: the file is damaged or the training diverged. Re-download or re-export the weights."
        )
    if all(bool((tensor == tensor.flatten()[0]).all()) for tensor in state.values() if tensor.numel()):
        warnings.warn(
            f"{folder / WEIGHTS_FILE} holds degenerate weights: every tensor is constant (all zeros, for example), "
            "so the network ignores the data. The file is a placeholder or damaged; re-download or re-export it.",
            UserWarning,
            stacklevel=2,
        )
    try:
        # Weights may be stored in half precision; parameters stay float32.
        model.load_state_dict({name: tensor.float() for name, tensor in state.items()}, strict=True)
    except RuntimeError as error:
        raise ModelLoadError(f"{folder / WEIGHTS_FILE} does not match {CONFIG_FILE}: {error}") from None
    logger.info("Loaded %s (%d parameters) on %s", folder, sum(p.numel() for p in model.parameters()), device)
    return model.to(device).eval()
