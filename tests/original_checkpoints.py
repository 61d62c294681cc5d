"""Synthetic checkpoints of the authors' two configurations, for the tests of
``nesymres_sklearn.original``.

They have the key names and shapes of the two original configurations (written here from
the naming rules of the original code, not from the converter) with random weights, saved
as PyTorch Lightning 1.x saves a training checkpoint.
"""

from __future__ import annotations

import math
import sys
import types
from collections import OrderedDict
from contextlib import contextmanager
from unittest import mock

import torch

WIDTH, POINT_FEATURES, INDUCING, SEEDS, SLOTS, LENGTH, HEADS = 512, 64, 50, 10, 60, 60, 8
# name -> (n_l_enc: ISAB blocks after the first, decoder layers)
CONFIGURATIONS = {"100M": (5, 5), "10MPaper": (2, 2)}
LIGHTNING_MODULE = "pytorch_lightning.callbacks.model_checkpoint"

# The authors' vocabulary (jupyter/100M/eq_setting.json), P/S/F written as ours.
REFERENCE_VOCABULARY = {
    0: "<pad>",
    1: "<sos>",
    2: "<eos>",
    3: "c",
    4: "x_1",
    5: "x_2",
    6: "x_3",
    7: "abs",
    8: "acos",
    9: "add",
    10: "asin",
    11: "atan",
    12: "cos",
    13: "cosh",
    14: "coth",
    15: "div",
    16: "exp",
    17: "ln",
    18: "mul",
    19: "pow",
    20: "sin",
    21: "sinh",
    22: "sqrt",
    23: "tan",
    24: "tanh",
    25: "-3",
    26: "-2",
    27: "-1",
    28: "0",
    29: "1",
    30: "2",
    31: "3",
    32: "4",
    33: "5",
}


def original_shapes(n_l_enc: int, n_layers: int) -> dict[str, tuple[int, ...]]:
    """Key -> shape of the original state_dict, in its order."""
    shapes: dict[str, tuple[int, ...]] = {"enc.mean": (), "enc.std": ()}

    def linear(name, n_out, n_in):
        shapes[f"{name}.weight"], shapes[f"{name}.bias"] = (n_out, n_in), (n_out,)

    def mab(name, query_in, key_in):
        linear(f"{name}.fc_q", WIDTH, query_in)
        linear(f"{name}.fc_k", WIDTH, key_in)
        linear(f"{name}.fc_v", WIDTH, key_in)
        shapes.update({f"{name}.{ln}.{kind}": (WIDTH,) for ln in ("ln0", "ln1") for kind in ("weight", "bias")})
        linear(f"{name}.fc_o", WIDTH, WIDTH)

    def isab(name, n_in):
        shapes[f"{name}.I"] = (1, INDUCING, WIDTH)
        mab(f"{name}.mab0", WIDTH, n_in)
        mab(f"{name}.mab1", n_in, WIDTH)

    for i in range(n_l_enc):
        isab(f"enc.selfatt.{i}", WIDTH)
    isab("enc.selfatt1", POINT_FEATURES)
    shapes["enc.outatt.S"] = (1, SEEDS, WIDTH)
    mab("enc.outatt.mab", WIDTH, WIDTH)
    shapes["tok_embedding.weight"] = shapes["pos_embedding.weight"] = (SLOTS, WIDTH)
    for j in range(n_layers):
        layer = f"decoder_transfomer.layers.{j}"
        for attention in ("self_attn", "multihead_attn"):
            shapes[f"{layer}.{attention}.in_proj_weight"] = (3 * WIDTH, WIDTH)
            shapes[f"{layer}.{attention}.in_proj_bias"] = (3 * WIDTH,)
            linear(f"{layer}.{attention}.out_proj", WIDTH, WIDTH)
        linear(f"{layer}.linear1", 512, WIDTH)
        linear(f"{layer}.linear2", WIDTH, 512)
        for norm in ("norm1", "norm2", "norm3"):
            shapes[f"{layer}.{norm}.weight"] = shapes[f"{layer}.{norm}.bias"] = (WIDTH,)
    linear("fc_out", SLOTS, WIDTH)
    return shapes


def random_state(shapes: dict, seed: int, favour: dict[int, float] | None = None) -> OrderedDict:
    """Random weights of a sensible scale; ``favour`` adds to the output bias of some ids."""
    generator = torch.Generator().manual_seed(seed)
    state = OrderedDict()
    for key, shape in shapes.items():
        if not shape:
            state[key] = torch.tensor(0.5)
        elif key.endswith(("norm1.weight", "norm2.weight", "norm3.weight", "ln0.weight", "ln1.weight")):
            state[key] = 1 + 0.1 * torch.randn(shape, generator=generator)
        elif len(shape) == 2 and "embedding" not in key:
            state[key] = torch.randn(shape, generator=generator) / math.sqrt(shape[1])
        else:
            state[key] = (0.1 if len(shape) == 1 else 1.0) * torch.randn(shape, generator=generator)
    for token_id, bonus in (favour or {}).items():
        state["fc_out.bias"][token_id] += bonus
    return state


@contextmanager
def fake_modules(contents: dict[str, dict]):
    """Stand-in modules (``{"pkg.mod": {name: object}}``) so that pickle writes those
    objects under those names; no real package is imported."""
    modules = {}
    for name, members in contents.items():
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            modules.setdefault(".".join(parts[:depth]), types.ModuleType(".".join(parts[:depth])))
        for member, value in members.items():
            value.__module__, value.__qualname__ = name, member
            setattr(modules[name], member, value)
    with mock.patch.dict(sys.modules, modules):
        yield


def save_lightning_checkpoint(path, state_dict: OrderedDict) -> None:
    """As PyTorch Lightning 1.x saves a training checkpoint: the callback state keyed by
    the ModelCheckpoint class, an Adam optimiser state (moments of the first parameter
    only, to keep the file small), AMP scaler state; no hyper-parameters."""
    ModelCheckpoint = type("ModelCheckpoint", (), {})
    n_parameters = len(state_dict) - 2  # the two buffers are not parameters
    first = next(tensor for key, tensor in state_dict.items() if tensor.dim())
    with fake_modules({LIGHTNING_MODULE: {"ModelCheckpoint": ModelCheckpoint}}):
        torch.save(
            {
                "epoch": 41,
                "global_step": 123_456,
                "pytorch-lightning_version": "1.2.10",
                "state_dict": state_dict,
                "callbacks": {
                    ModelCheckpoint: {
                        "monitor": "val_loss",
                        "best_model_score": torch.tensor(0.4242),
                        "best_model_path": "/x/epoch=41.ckpt",
                        "current_score": torch.tensor(0.45),
                        "dirpath": "/x",
                    }
                },
                "optimizer_states": [
                    {
                        "state": {
                            0: {
                                "step": 123_456,
                                "exp_avg": torch.zeros_like(first),
                                "exp_avg_sq": torch.zeros_like(first),
                            }
                        },
                        "param_groups": [
                            {
                                "lr": 1e-4,
                                "betas": (0.9, 0.999),
                                "eps": 1e-8,
                                "weight_decay": 0,
                                "amsgrad": False,
                                "params": list(range(n_parameters)),
                            }
                        ],
                    }
                ],
                "lr_schedulers": [],
                "native_amp_scaling_state": {
                    "scale": 65536.0,
                    "growth_factor": 2.0,
                    "backoff_factor": 0.5,
                    "growth_interval": 2000,
                    "_growth_tracker": 17,
                },
            },
            path,
        )


# The 10MPaper-shaped file favours x_1, padding and the end token, so that its search
# finds valid skeletons and passes padding through the decoder; the 100M-shaped one is
# plain random.
FAVOURED = {"100M": None, "10MPaper": {2: 7.0, 4: 7.0, 0: 4.5}}


def original_state(name: str) -> OrderedDict:
    seed = list(CONFIGURATIONS).index(name)
    return random_state(original_shapes(*CONFIGURATIONS[name]), seed, FAVOURED[name])
