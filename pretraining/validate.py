"""Validation loss and token accuracy of a saved model on a bank's held-out split.

The batches are those the training loop validates on (same seed and data settings),
so the figures compare directly with a run's ``log.csv``. The data options are those
of ``pretraining.train`` (``--batch-size``, ``--min-points``, ...), or
``--train-config`` reads them and the seed from a run's ``train_config.json``::

    python -m pretraining.validate nesymres_sklearn/weights --bank bank --batch-size 64 \\
        --min-points 50 --max-points 200 --n-batches 8
    python -m pretraining.validate run/model --bank bank --train-config run/train_config.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import torch

from nesymres_sklearn.network.weights import load_folder

from .bank import SkeletonBank
from .config import add_section_arguments, load_train_config
from .data import BatchConfig, EquationSampler
from .evaluation import validate


def validate_folder(model_folder, bank, batch_config: BatchConfig, seed: int = 0, n_batches: int = 8) -> dict:
    """``{"val_loss", "val_accuracy"}`` of the model in ``model_folder`` on ``bank``'s held-out split.

    A model reads a bank of at most its variables (the others are 0, as in training):
    a model of 8 variables is validated on a bank of 3 as well."""
    model = load_folder(Path(model_folder), torch.device("cpu"))
    heldout = SkeletonBank(bank, "heldout")
    if heldout.n_variables > model.config.n_variables:
        raise ValueError(
            f"The bank has {heldout.n_variables} variables but the model reads {model.config.n_variables}: "
            "validate it on a bank of at most that many."
        )
    sampler = EquationSampler(heldout, batch_config, model.config.n_variables, max_length=model.config.max_length)
    loss, accuracy = validate(model, sampler, seed, n_batches, torch.device("cpu"))
    return dict(val_loss=loss, val_accuracy=accuracy)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="folder with config.json + model.safetensors")
    parser.add_argument("--bank", required=True)
    parser.add_argument(
        "--train-config",
        type=Path,
        help="a run's train_config.json: its data settings and seed (options override them)",
    )
    parser.add_argument("--seed", type=int, default=argparse.SUPPRESS, help="the training run's seed (default: 0)")
    parser.add_argument("--n-batches", type=int, default=8)
    add_section_arguments(parser.add_argument_group("data"), "data")
    args = vars(parser.parse_args(argv))
    settings, seed = {}, 0
    if args["train_config"]:
        run = load_train_config(args["train_config"])
        settings, seed = dataclasses.asdict(run.data), run.run.seed
    data_fields = {item.name for item in dataclasses.fields(BatchConfig)}
    settings.update({key: value for key, value in args.items() if key in data_fields})
    seed = args.get("seed", seed)
    result = validate_folder(args["model"], args["bank"], BatchConfig(**settings), seed, args["n_batches"])
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
