"""The registry of decoding methods: from encoded points to scored skeletons.

A decoding method is a function ``(model, points, size, n_features, **options) ->
list[Hypothesis]``, best first, where ``size`` is the beam size or the number of
samples. ``ModelConfig.search`` names a model's beam search; ``"sample"`` draws
skeletons instead. Adding a method is writing that function and registering it in
:data:`DECODERS`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ...network.model import NeSymReSModel
from .beam import constrained_search
from .hypothesis import Hypothesis
from .sampling import sample_skeletons

Decoder = Callable[..., list[Hypothesis]]

DECODERS: dict[str, Decoder] = {"constrained": constrained_search, "sample": sample_skeletons}


def decode(
    model: NeSymReSModel, points: torch.Tensor, size: int, n_features: int, method: str | None = None, **options
) -> list[Hypothesis]:
    """Skeletons for one encoded point set by ``method`` (default: the model's beam
    search, ``config.search``); ``options`` go to the method (e.g. ``seed``)."""
    name = model.config.search if method is None else method
    try:
        decoder = DECODERS[name]
    except KeyError:
        raise ValueError(
            f"Unknown decoding method {name!r}; registered: {sorted(DECODERS)} (import "
            "nesymres_sklearn.original for the authors' 'original')."
        ) from None
    return decoder(model, points, size, n_features, **options)
