"""Training checkpoints: written atomically, read with ``torch.load(weights_only=True)``.

A checkpoint holds only tensors and plain Python values: the model, optimiser and grad
scaler states, the torch, CUDA and Python RNG states, the step, equations seen and
elapsed time, the model config and the training config. The data position needs no
state of its own (batch ``i`` is a pure function of the seed, the rank and ``i``).

A run folder keeps the last two checkpoints: each save renames ``checkpoint.pt`` to
``checkpoint-previous.pt`` before the new file takes its name. :func:`load_run_checkpoint`
resumes from the previous one, with a warning, when the latest is missing or cannot
be read (a truncated or corrupt file); folders holding only ``checkpoint.pt`` resume
from it as before.

Checkpoints written before this format also held the global NumPy RNG state, which
``weights_only=True`` refuses to read. Nothing reads that state, so dropping it keeps
the resume exact; for a file you wrote yourself::

    python -m pretraining.checkpoint upgrade run/checkpoint.pt
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import random
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

#: File names of the latest checkpoint in a run folder and of the one before it.
CHECKPOINT = "checkpoint.pt"
PREVIOUS_CHECKPOINT = "checkpoint-previous.pt"


class CheckpointFormatError(ValueError):
    """A checkpoint that ``torch.load(weights_only=True)`` cannot read."""


class UnreadableCheckpointError(ValueError):
    """A truncated or otherwise corrupt checkpoint file."""


def save_checkpoint(state: dict, path, previous=None) -> None:
    """Write ``state`` to ``path`` atomically (a temporary file, then ``os.replace``).

    With ``previous``, an existing ``path`` is first renamed to ``previous``, so the
    last two checkpoints are kept.
    """
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    torch.save(state, temporary)
    if previous is not None and path.exists():
        os.replace(path, previous)
    os.replace(temporary, path)


def load_checkpoint(path, map_location="cpu") -> dict:
    """The state saved by :func:`save_checkpoint`, read with ``weights_only=True``.

    Raises :class:`CheckpointFormatError`, saying how to continue, for a checkpoint of
    the earlier format (with the global NumPy RNG state), and
    :class:`UnreadableCheckpointError` for a truncated or corrupt file.
    """
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except (EOFError, KeyError, RuntimeError) as error:
        reason = str(error).split(". ")[0]
        raise UnreadableCheckpointError(
            f"{path} is truncated or corrupt: torch.load failed with {type(error).__name__} ({reason})."
        ) from error
    except pickle.UnpicklingError as error:
        raise CheckpointFormatError(
            f"{path} cannot be read with torch.load(weights_only=True): it holds objects other than "
            "tensors and plain values (checkpoints written by earlier versions of pretraining.train "
            "held the global NumPy RNG state). If you trust the file (you wrote it), convert it once "
            f"with `python -m pretraining.checkpoint upgrade {path}` and rerun the command: a resumed "
            "run stays exact. Or continue training in a new run from the exported weights, with a fresh "
            "optimiser: `python -m pretraining.train --init-weights RUN/model --out NEW_RUN ...`."
        ) from error


def load_run_checkpoint(folder, map_location="cpu") -> tuple[dict, Path] | None:
    """The state and path of the latest readable checkpoint of a run folder (``None``
    when it holds none).

    Reads ``checkpoint.pt``, or, with a warning when that is missing or unreadable,
    ``checkpoint-previous.pt``. Raises :class:`UnreadableCheckpointError` naming the
    files when none can be read, and :class:`CheckpointFormatError` as
    :func:`load_checkpoint`.
    """
    latest, previous = Path(folder) / CHECKPOINT, Path(folder) / PREVIOUS_CHECKPOINT
    problems = []
    for path in (latest, previous):
        if not path.exists():
            continue
        try:
            state = load_checkpoint(path, map_location=map_location)
        except UnreadableCheckpointError as error:
            problems.append(str(error))
            continue
        if path == previous:
            logger.warning(
                "%s Resuming from the checkpoint before it, %s (step %d).",
                problems[0] if problems else f"{latest} is missing.",
                path,
                state["step"],
            )
        return state, path
    if problems:
        raise UnreadableCheckpointError(
            f"No readable checkpoint in {folder}: {' '.join(problems)} Put back a good copy, or move the "
            "file(s) away to train this run again from step 0."
        )
    return None


def rng_states() -> dict:
    """The torch (and CUDA) and Python RNG states of this process."""
    states = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: dict) -> None:
    """Restore the states of :func:`rng_states`."""
    torch.set_rng_state(states["torch"])
    random.setstate(states["python"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def upgrade_checkpoint(path) -> bool:
    """Rewrite a checkpoint of the earlier format so that :func:`load_checkpoint` reads it.

    Loads ``path`` with ``weights_only=False``, which can run code stored in the file:
    use it only on files you trust. Drops the global NumPy RNG state (nothing reads it)
    and writes the file back atomically. Returns whether the file changed.
    """
    try:
        load_checkpoint(path)
        return False
    except CheckpointFormatError:
        pass
    state = torch.load(path, map_location="cpu", weights_only=False)
    state.get("rng", {}).pop("numpy", None)
    save_checkpoint(state, path)
    load_checkpoint(path)  # raises if anything else is left that weights_only refuses
    return True


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    upgrade = commands.add_parser("upgrade", help="rewrite checkpoints of the earlier format (trusted files only)")
    upgrade.add_argument("checkpoints", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.checkpoints:
        print(f"{path}: {'upgraded' if upgrade_checkpoint(path) else 'already readable, unchanged'}")


if __name__ == "__main__":
    main()
