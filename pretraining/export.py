"""Export a training checkpoint in the Hub format that ``NeSymReSRegressor`` loads.

The folder holds ``config.json`` (the :class:`~nesymres_sklearn.model.ModelConfig`,
vocabulary and number encoding included) and ``model.safetensors``, written by
``NeSymReSModel.save_pretrained``; ``push_to_hub`` uploads the same files.

Command line::

    python -m pretraining.export run/checkpoint.pt my-model [--dtype float16] [--push-to-hub user/repo]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import torch

from nesymres_sklearn.network.model import ModelConfig, NeSymReSModel

from .checkpoint import load_checkpoint

logger = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "float16": torch.float16}


def load_checkpoint_model(checkpoint) -> NeSymReSModel:
    """The model stored in a training checkpoint, on CPU, in float32."""
    state = load_checkpoint(checkpoint)
    model = NeSymReSModel(ModelConfig(**state["model_config"]))
    model.load_state_dict(state["model"], strict=True)
    return model.eval()


def export_model(checkpoint, folder, dtype: str = "float32", push_to_hub: str | None = None) -> Path:
    """Write ``config.json`` + ``model.safetensors`` of a checkpoint to ``folder``.

    Parameters
    ----------
    checkpoint : str or Path
        A ``checkpoint.pt`` written by :mod:`pretraining.train`.
    folder : str or Path
        Output folder, created if needed.
    dtype : {"float32", "float16"}, default="float32"
        Storage type of the weights.
    push_to_hub : str, optional
        Also upload to this Hugging Face Hub repo id.
    """
    if dtype not in DTYPES:
        raise ValueError(f"Unknown dtype {dtype!r}; choose from {sorted(DTYPES)}.")
    model = load_checkpoint_model(checkpoint).to(DTYPES[dtype])
    folder = Path(folder)
    model.save_pretrained(folder)
    logger.info("Exported %s to %s (%s).", checkpoint, folder, dtype)
    if push_to_hub:
        model.push_to_hub(push_to_hub)
        logger.info("Pushed to the Hub repo %s.", push_to_hub)
    return folder


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint")
    parser.add_argument("folder")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--push-to-hub", metavar="REPO_ID")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    print(export_model(args.checkpoint, args.folder, args.dtype, args.push_to_hub))


if __name__ == "__main__":
    main()
