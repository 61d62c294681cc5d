"""Start a model that reads more variables from the weights of one that reads fewer.

A model of ``n`` variables differs from one of ``m < n`` only where the variables are
counted: the encoder's first layers read ``16 (n + 1)`` inputs (``x_1..x_n``, then ``y``)
and the vocabulary holds ``x_{m+1}..x_n``. :func:`widen` copies every other weight, moves
the input columns of ``x_1..x_m`` and ``y`` to their new places and gives the new
variables' columns zero weight, so that the widened model reads only the old columns
until training teaches it the new ones. Token rows are matched by name; a new variable's
embedding starts as the last old variable's, and its logit as the least likely old token's
(zero weight, the smallest bias), so that the widened model rarely writes it at first.
"""

from __future__ import annotations

import dataclasses

import torch

from nesymres_sklearn.expression.tokens import variable_token
from nesymres_sklearn.network.encoding import N_BITS
from nesymres_sklearn.network.model import ModelConfig, NeSymReSModel

TOKEN_EMBEDDING = "decoder.token_embedding.weight"
HEAD_WEIGHT, HEAD_BIAS = "decoder.head.weight", "decoder.head.bias"


def widening(narrow: ModelConfig, wide: ModelConfig) -> bool:
    """True when ``wide`` is ``narrow`` reading more variables (all else equal)."""
    same = all(
        getattr(narrow, item.name) == getattr(wide, item.name)
        for item in dataclasses.fields(ModelConfig)
        if item.name not in ("vocabulary", "output_size")
    )
    return (
        same
        and narrow.output_size is None
        and wide.output_size is None
        and wide.n_variables > narrow.n_variables
        and set(narrow.vocabulary) <= set(wide.vocabulary)
    )


@torch.no_grad()
def widen(narrow: NeSymReSModel, wide: NeSymReSModel) -> None:
    """Load ``narrow``'s weights into ``wide`` (in place; see the module docstring)."""
    if not widening(narrow.config, wide.config):
        raise ValueError(
            "Only a model that reads more variables, with the same sizes and the narrow model's tokens, can be "
            f"widened: {narrow.config.n_variables} -> {wide.config.n_variables} variables."
        )
    source, target = narrow.state_dict(), wide.state_dict()
    old_inputs = N_BITS * (narrow.config.n_variables + 1)
    columns = _input_columns(narrow.config.n_variables, wide.config.n_variables)
    rows = [wide.config.vocabulary.index(token) for token in narrow.config.vocabulary]
    for name, value in source.items():
        new = target[name]
        value = value.to(new.device, new.dtype)
        if name in (TOKEN_EMBEDDING, HEAD_WEIGHT, HEAD_BIAS):
            _copy_token_rows(name, value, new, rows, narrow.config, wide.config)
        elif value.shape == new.shape:
            new.copy_(value)
        elif value.shape[:-1] == new.shape[:-1] and value.shape[-1] == old_inputs:
            new.zero_()
            new[..., columns.to(new.device)] = value
        else:
            raise ValueError(f"Cannot widen {name}: {tuple(value.shape)} -> {tuple(new.shape)}.")
    wide.load_state_dict(target)


def _input_columns(old: int, new: int) -> torch.Tensor:
    """The wide model's input columns of the narrow one's ``x_1..x_old`` and ``y``."""
    blocks = list(range(old)) + [new]
    return torch.cat([torch.arange(b * N_BITS, (b + 1) * N_BITS) for b in blocks])


def _copy_token_rows(name, value, new, rows, narrow: ModelConfig, wide: ModelConfig) -> None:
    old = set(narrow.vocabulary)
    added = [i for i, token in enumerate(wide.vocabulary) if token not in old]
    if name == TOKEN_EMBEDDING:
        new[added] = value[narrow.vocabulary.index(variable_token(narrow.n_variables - 1))]
    elif name == HEAD_WEIGHT:
        new[added] = 0.0
    else:
        new[added] = value.min()
    new[torch.tensor(rows, device=new.device)] = value
