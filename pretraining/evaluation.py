"""Validation loss and token accuracy on held-out batches.

The training loop and ``python -m pretraining.validate`` call the same
:func:`validate`, so a saved model's figures compare directly with a run's ``log.csv``.
"""

from __future__ import annotations

import torch

from .data import EquationSampler, batch_rng, points_from_codes
from .runtime import Ranks, autocast, sum_over_ranks

#: Data stream of the validation batches (training streams are the ranks).
VALIDATION_STREAM = 1_000_003


@torch.no_grad()
def validate(
    model, sampler: EquationSampler, seed: int, n_batches: int, device, autocast_dtype=None, ranks: Ranks | None = None
) -> tuple[float, float]:
    """Mean token cross-entropy and token accuracy on validation batches ``0..n_batches-1``
    of ``seed`` (the same batches for every model given the same sampler settings).

    With DDP the batches are shared out over the ranks and the totals summed.
    """
    ranks = ranks or Ranks()
    was_training = model.training
    model.eval()
    pad_id = sampler.vocab.pad_id
    totals = [0.0, 0.0, 0.0]  # loss sum, correct, tokens
    for index in range(ranks.rank, n_batches, ranks.world_size):
        batch = sampler.batch(batch_rng(seed, VALIDATION_STREAM, index))
        points = points_from_codes(batch["codes"].to(device))
        targets = batch["targets"].to(device)
        with autocast(device, autocast_dtype):
            logits, loss = model(points, targets[:, :-1], targets[:, 1:])
        labels = targets[:, 1:]
        mask = labels != pad_id
        n_tokens = int(mask.sum())
        totals[0] += float(loss) * n_tokens
        totals[1] += float(((logits.argmax(-1) == labels) & mask).sum())
        totals[2] += n_tokens
    loss_sum, correct, tokens = sum_over_ranks(totals, ranks, device)
    model.train(was_training)
    return loss_sum / max(tokens, 1), correct / max(tokens, 1)
