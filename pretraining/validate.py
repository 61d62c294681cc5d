"""Validation loss and token accuracy of a saved model on a bank's held-out split.

The batches are those the training loop validates on (same seed, batch size and point
counts), so the figures compare directly with a run's ``log.csv``::

    python -m pretraining.validate nesymres_sklearn/weights --bank bank --batch-size 64 \\
        --min-points 50 --max-points 200 --n-batches 8
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from nesymres_sklearn.network.weights import load_folder

from .bank import SkeletonBank
from .data import BatchConfig, EquationSampler
from .train import validate


def validate_folder(model_folder, bank, batch_config: BatchConfig, seed: int = 0, n_batches: int = 8) -> dict:
    """``{"val_loss", "val_accuracy"}`` of the model in ``model_folder`` on ``bank``'s held-out split."""
    model = load_folder(Path(model_folder), torch.device("cpu"))
    heldout = SkeletonBank(bank, "heldout")
    if heldout.n_variables != model.config.n_variables:
        raise ValueError(f"The bank has {heldout.n_variables} variables, the model {model.config.n_variables}.")
    batch_config = BatchConfig(**{**batch_config.to_dict(), "max_length": model.config.max_length})
    sampler = EquationSampler(heldout, batch_config, model.config.n_variables)
    loss, accuracy = validate(model, sampler, seed, n_batches, torch.device("cpu"))
    return dict(val_loss=loss, val_accuracy=accuracy)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="folder with config.json + model.safetensors")
    parser.add_argument("--bank", required=True)
    parser.add_argument("--seed", type=int, default=0, help="the training run's seed")
    parser.add_argument("--n-batches", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=150)
    parser.add_argument("--min-points", type=int, default=100)
    parser.add_argument("--max-points", type=int, default=500)
    args = parser.parse_args(argv)
    batch_config = BatchConfig(batch_size=args.batch_size, min_points=args.min_points, max_points=args.max_points)
    print(json.dumps(validate_folder(args.model, args.bank, batch_config, args.seed, args.n_batches), indent=2))


if __name__ == "__main__":
    main()
