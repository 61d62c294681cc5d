"""The registry of decoding methods: from encoded points to scored skeletons.

A decoding method is a function ``(model, points, beam_size, n_features) ->
list[Hypothesis]``, best first. ``ModelConfig.search`` names the one a model uses.
Adding a method is writing that function and registering it in :data:`DECODERS`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..network.model import NeSymReSModel
from .beam import Hypothesis, constrained_search

Decoder = Callable[[NeSymReSModel, torch.Tensor, int, int], list[Hypothesis]]

DECODERS: dict[str, Decoder] = {"constrained": constrained_search}


def decode(model: NeSymReSModel, points: torch.Tensor, beam_size: int, n_features: int) -> list[Hypothesis]:
    """Skeletons for one encoded point set by the model's decoding method (``config.search``)."""
    name = model.config.search
    try:
        decoder = DECODERS[name]
    except KeyError:
        raise ValueError(
            f"Unknown decoding method {name!r}; registered: {sorted(DECODERS)} (import "
            "nesymres_sklearn.original for the authors' 'original')."
        ) from None
    return decoder(model, points, beam_size, n_features)
