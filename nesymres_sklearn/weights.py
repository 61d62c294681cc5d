"""Where model weights come from, and the process-wide cache of loaded models.

A model source is one of

* ``"bundled"``: the weights shipped inside the package (works offline);
* a local folder holding ``config.json`` and ``model.safetensors``;
* a Hugging Face Hub repository id (``"user/name"``), downloaded with
  :mod:`huggingface_hub` into its normal cache (``HF_HUB_OFFLINE=1`` and
  ``HF_ENDPOINT`` are honoured), at an optional ``revision``;
* one of the authors' original checkpoints: a local ``.ckpt`` file, or a file in a Hub
  repository (``"user/name/path/file.ckpt"``), converted once into a cached folder
  (:func:`nesymres_sklearn.original.converted_folder`).

Loaded models are cached per process by source, revision and device, so cloning an
estimator or a grid search never reloads weights.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from .model import ModelConfig, ModelLoadError, NeSymReSModel
from .original import converted_folder

logger = logging.getLogger(__name__)

BUNDLED = "bundled"
BUNDLED_FOLDER = Path(__file__).parent / "weights"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
CHECKPOINT_SUFFIX = ".ckpt"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_HUB_CHECKPOINT = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)/(?P<file>[\w./-]+\.ckpt)$")

_cache: dict[tuple, NeSymReSModel] = {}
_cache_lock = threading.Lock()


def resolve_device(device: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise the named device."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device={device!r} is not a valid torch device; use 'auto', 'cpu' or 'cuda'.") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available; use device='cpu' or 'auto'.")
    return resolved


def load_model(source: str | os.PathLike = BUNDLED, revision: str | None = None, device: str = "auto") -> NeSymReSModel:
    """The model for ``source`` on ``device``, loaded once per process.

    Local folders and checkpoint files are keyed by their path and the weights'
    modification time (so rewritten weights are reloaded); Hub sources by reference
    and revision, so a cached Hub model costs no network request.
    """
    torch_device = resolve_device(device)
    if _is_hub_id(source) or _is_hub_checkpoint(source):
        key = ("hub", source, revision, str(torch_device))
    elif _is_checkpoint_file(source):
        path = Path(source).expanduser().resolve()
        key = ("checkpoint", str(path), path.stat().st_mtime_ns, str(torch_device))
    else:
        weights = resolve_folder(source, revision) / WEIGHTS_FILE
        stamp = weights.stat().st_mtime_ns if weights.exists() else None
        key = ("folder", str(weights.parent.resolve()), stamp, str(torch_device))
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    folder = resolve_folder(source, revision)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = load_folder(folder, torch_device)
        return _cache[key]


def clear_cache() -> None:
    """Forget every loaded model (they are reloaded on next use)."""
    with _cache_lock:
        _cache.clear()


def resolve_folder(source: str | os.PathLike, revision: str | None = None) -> Path:
    """A local folder holding the files of ``source`` (downloading them if needed)."""
    if isinstance(source, str) and source == BUNDLED:
        if revision is not None:
            raise ValueError("revision applies to Hub models only, not to model='bundled'.")
        return BUNDLED_FOLDER
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if _is_checkpoint_file(source):
        return converted_folder(path)
    if _is_hub_checkpoint(source):
        match = _HUB_CHECKPOINT.match(source)
        return converted_folder(_download(match["repo"], [match["file"]], revision)[0])
    if _is_hub_id(source):
        return _download(source, [CONFIG_FILE, WEIGHTS_FILE], revision)[0].parent
    raise FileNotFoundError(
        f"model={str(source)!r} is neither 'bundled', an existing folder with {CONFIG_FILE} and "
        f"{WEIGHTS_FILE}, an existing original {CHECKPOINT_SUFFIX} file, nor a Hugging Face Hub reference "
        f"like 'user/name' (a model repository) or 'user/name/file{CHECKPOINT_SUFFIX}' (an original checkpoint)."
    )


def _is_hub_id(source) -> bool:
    """Whether ``source`` names a Hub repository rather than a local path."""
    return isinstance(source, str) and bool(_REPO_ID.match(source)) and not Path(source).expanduser().exists()


def _is_hub_checkpoint(source) -> bool:
    """Whether ``source`` names a ``.ckpt`` file in a Hub repository rather than a local path."""
    return isinstance(source, str) and bool(_HUB_CHECKPOINT.match(source)) and not Path(source).expanduser().exists()


def _is_checkpoint_file(source) -> bool:
    path = Path(source).expanduser()
    return path.suffix == CHECKPOINT_SUFFIX and path.is_file()


def _download(repo_id: str, filenames: list[str], revision: str | None) -> list[Path]:
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        paths = [Path(hf_hub_download(repo_id, name, revision=revision)) for name in filenames]
    except RevisionNotFoundError:
        raise ValueError(f"Revision {revision!r} does not exist in Hub repository {repo_id!r}.") from None
    except RepositoryNotFoundError:
        raise ValueError(
            f"Hub repository {repo_id!r} was not found at {constants.ENDPOINT} (or it is private: "
            "log in with `hf auth login`)."
        ) from None
    except LocalEntryNotFoundError:  # subclass of EntryNotFoundError: first
        raise ConnectionError(
            f"Could not reach the Hugging Face Hub at {constants.ENDPOINT} to download {repo_id!r}, and it is "
            "not in the local cache. Check the network (or HF_ENDPOINT), download it once where the Hub is "
            "reachable (then HF_HUB_OFFLINE=1 uses the cache), or pass a local folder as model=."
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
        config = ModelConfig(**json.loads((folder / CONFIG_FILE).read_text()))
    except (json.JSONDecodeError, TypeError, ValueError) as error:
        raise ModelLoadError(f"{folder / CONFIG_FILE} is not a valid model config: {error}") from None
    model = NeSymReSModel(config)
    try:
        state = load_file(folder / WEIGHTS_FILE)
    except (SafetensorError, OSError, RuntimeError) as error:
        raise ModelLoadError(f"{folder / WEIGHTS_FILE} is corrupt or not a safetensors file: {error}") from None
    try:
        # Weights may be stored in half precision; parameters stay float32.
        model.load_state_dict({name: tensor.float() for name, tensor in state.items()}, strict=True)
    except RuntimeError as error:
        raise ModelLoadError(f"{folder / WEIGHTS_FILE} does not match {CONFIG_FILE}: {error}") from None
    logger.info("Loaded %s (%d parameters) on %s", folder, sum(p.numel() for p in model.parameters()), device)
    return model.to(device).eval()
