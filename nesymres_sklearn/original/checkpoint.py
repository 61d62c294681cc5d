"""The authors' published checkpoints (``100M.ckpt``, ``10M.ckpt``) as our models.

The files are PyTorch Lightning training checkpoints of the original NeSymReS code.
:func:`read_checkpoint` reads one with torch's weights-only unpickler: objects of
PyTorch Lightning and omegaconf become inert placeholders (neither library is needed
or imported) and any other object that would run code refuses the file.
:func:`convert_state_dict` maps the original weights onto :class:`NeSymReSModel`
strictly: every key is used and every shape checked. The config selects the
original's number encoding and beam search (registered by this package), attention
scale, 60 output slots and token ids. :func:`convert_checkpoint` writes our Hub format (``config.json`` +
``model.safetensors``); :func:`converted_folder` does so once per file, in a cache.

Command line: ``nesymres-convert CHECKPOINT FOLDER``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import torch
from huggingface_hub import constants

from ..network.model import ModelConfig, ModelLoadError, NeSymReSModel
from .beam import NAME as SEARCH_NAME
from .encoding import NAME as ENCODING_NAME

# Token ids of the authors' vocabulary (their eq_setting.json; P, S, F written as ours).
# Ids 34..59 of the 60 output slots have no token.
ORIGINAL_TOKENS = [
    "<pad>",
    "<sos>",
    "<eos>",
    "c",
    "x_1",
    "x_2",
    "x_3",
    "abs",
    "acos",
    "add",
    "asin",
    "atan",
    "cos",
    "cosh",
    "coth",
    "div",
    "exp",
    "ln",
    "mul",
    "pow",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "-3",
    "-2",
    "-1",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
]
# The architecture of both published configurations; only the depths differ.
ORIGINAL_ARCHITECTURE = dict(
    hidden_size=512,
    n_heads=8,
    n_inducing_points=50,
    n_seeds=10,
    feedforward_size=512,
    max_length=60,
    dropout=0.0,
    output_size=60,
    encoding=ENCODING_NAME,
    encoder_attention_scale="hidden",
    search=SEARCH_NAME,
)
CHECKPOINT_SUFFIX = ".ckpt"
# Top-level packages whose pickled classes are replaced by a placeholder when reading.
PLACEHOLDER_PACKAGES = ("pytorch_lightning", "lightning", "lightning_fabric", "omegaconf")
# torch.serialization.get_unsafe_globals_in_checkpoint and safe globals given by name.
MIN_TORCH = (2, 6)
# The buffers enc.mean / enc.std are stored but never used by the original forward.
UNUSED_KEYS = ("enc.mean", "enc.std")
SHOWN_KEYS = 10


class PickledPlaceholder:
    """Stands for an object of a library that is not imported (Lightning, omegaconf);
    keeps the arguments and state it was pickled with, runs no code of its own."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __setstate__(self, state):
        self.state = state


def original_config(n_isab: int, n_decoder_layers: int) -> ModelConfig:
    """Our config of the original architecture with ``n_isab`` ISAB blocks (the
    original's first ISAB plus ``n_l_enc`` more) and ``n_decoder_layers`` layers."""
    return ModelConfig(
        vocabulary=list(ORIGINAL_TOKENS),
        n_isab=n_isab,
        n_decoder_layers=n_decoder_layers,
        **ORIGINAL_ARCHITECTURE,
    )


def read_checkpoint(path: str | os.PathLike) -> dict:
    """The top-level dict of a Lightning checkpoint, read without running pickled code.

    Raises
    ------
    ModelLoadError
        If the file is not a ``torch.save`` archive, refers to anything outside torch's
        weights-only allowlist other than Lightning/omegaconf classes, or holds no
        ``state_dict``.
    RuntimeError
        With torch older than 2.6, which cannot read such files safely.
    """
    if torch.__version__ < MIN_TORCH:
        raise RuntimeError(
            f"Reading the authors' checkpoints safely needs torch >= 2.6 (this is torch {torch.__version__}); "
            "upgrade torch, or convert the file with nesymres-convert where torch >= 2.6 is installed."
        )
    try:
        unknown = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except (ValueError, RuntimeError) as error:
        raise ModelLoadError(f"{path} is not a checkpoint written by torch.save: {error}") from None
    refused = [name for name in unknown if name.split(".")[0] not in PLACEHOLDER_PACKAGES]
    if refused:
        raise ModelLoadError(
            f"{path} refers to {', '.join(refused)}; loading it could run code, so it is refused. The authors' "
            "checkpoints refer only to torch and PyTorch Lightning objects: check where this file comes from."
        )
    try:
        with torch.serialization.safe_globals([(PickledPlaceholder, name) for name in unknown]):
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, ValueError, TypeError) as error:
        raise ModelLoadError(f"{path} could not be read safely: {error}") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), Mapping):
        raise ModelLoadError(f"{path} has no 'state_dict', so it is not a PyTorch Lightning checkpoint.")
    return checkpoint


def convert_state_dict(state: Mapping[str, torch.Tensor]) -> tuple[ModelConfig, dict[str, torch.Tensor]]:
    """Our config and state dict (float32) for an original ``state_dict``.

    The depths are read from the key names; everything else must match the original
    architecture exactly. Raises :class:`ModelLoadError` naming missing, unexpected or
    mis-shaped keys.
    """
    n_isab = _count_layers(state, "enc.selfatt") + 1
    n_decoder_layers = _count_layers(state, "decoder_transfomer.layers")
    if n_decoder_layers == 0:
        raise ModelLoadError(
            "The state_dict has no decoder layers (decoder_transfomer.layers.*); it is not a NeSymReS checkpoint."
        )
    config = original_config(n_isab, n_decoder_layers)
    mapping = _key_map(config)
    architecture = f"{n_isab} ISAB blocks, {n_decoder_layers} decoder layers"
    missing = [key for key in mapping if key not in state]
    if missing:
        raise ModelLoadError(f"The state_dict lacks {_listing(missing)} of the original architecture ({architecture}).")
    unexpected = [key for key in state if key not in mapping]
    if unexpected:
        raise ModelLoadError(
            f"The state_dict has {_listing(unexpected)} that the original architecture ({architecture}) does not have."
        )
    with torch.device("meta"):
        shapes = {name: tensor.shape for name, tensor in NeSymReSModel(config).state_dict().items()}
    converted = {}
    for key, targets in mapping.items():
        tensor = state[key]
        rows = [shapes[target][0] for target in targets]
        expected = torch.Size([sum(rows), *shapes[targets[0]][1:]]) if targets else torch.Size([])
        if not (isinstance(tensor, torch.Tensor) and tensor.is_floating_point()):
            found = tensor.dtype if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise ModelLoadError(f"Key {key} holds {found}, not a floating-point tensor.")
        if tensor.shape != expected:
            raise ModelLoadError(
                f"Key {key} has shape {list(tensor.shape)}; the original architecture "
                f"({architecture}) needs {list(expected)}."
            )
        if targets:
            parts = tensor.to(torch.float32).split(rows)
            converted.update((target, part.clone()) for target, part in zip(targets, parts))
    return config, converted


def convert_checkpoint(checkpoint: str | os.PathLike, folder: str | os.PathLike) -> NeSymReSModel:
    """Convert an original ``.ckpt`` file into ``folder`` (``config.json`` +
    ``model.safetensors``) and return the model."""
    state = read_checkpoint(checkpoint)["state_dict"]
    try:
        config, weights = convert_state_dict(state)
    except ModelLoadError as error:
        raise ModelLoadError(f"{checkpoint}: {error}") from None
    with torch.device("meta"):
        model = NeSymReSModel(config)
    model.load_state_dict(weights, strict=True, assign=True)
    model.save_pretrained(folder)
    return model.eval()


def cache_folder() -> Path:
    """Where converted checkpoints are kept: ``$HF_HOME/nesymres-sklearn/converted``."""
    return Path(constants.HF_HOME) / "nesymres-sklearn" / "converted"


def converted_folder(checkpoint: str | os.PathLike) -> Path:
    """The cached conversion of ``checkpoint``, keyed by the file's SHA-256; the first
    call converts it (into a temporary folder that is renamed when complete)."""
    digest = hashlib.sha256()
    with open(checkpoint, "rb") as file:
        for block in iter(lambda: file.read(1 << 24), b""):
            digest.update(block)
    folder = cache_folder() / digest.hexdigest()
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(
            dir=folder.parent, prefix=".converting-", ignore_cleanup_errors=True
        ) as staging:
            convert_checkpoint(checkpoint, staging)
            try:
                os.rename(staging, folder)
            except OSError:
                if not folder.is_dir():  # not a concurrent conversion that finished first
                    raise
    return folder


def _count_layers(state: Mapping[str, torch.Tensor], prefix: str) -> int:
    """One more than the largest ``i`` of the keys ``{prefix}.{i}.*`` (0 if none)."""
    pattern = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.")
    indices = [int(match.group(1)) for key in state if (match := pattern.match(key))]
    return max(indices) + 1 if indices else 0


def _key_map(config: ModelConfig) -> dict[str, tuple[str, ...]]:
    """Original key -> our key(s): three for a packed q/k/v projection (rows in that
    order), none for the unused buffers."""
    mapping: dict[str, tuple[str, ...]] = {key: () for key in UNUSED_KEYS}

    def weight_and_bias(theirs: str, ours: str) -> None:
        mapping.update({f"{theirs}.{kind}": (f"{ours}.{kind}",) for kind in ("weight", "bias")})

    def mab(theirs: str, ours: str) -> None:
        for layer in ("fc_q", "fc_k", "fc_v", "ln0", "ln1", "fc_o"):
            weight_and_bias(f"{theirs}.{layer}", f"{ours}.{layer}")

    blocks = ["enc.selfatt1"] + [f"enc.selfatt.{i}" for i in range(config.n_isab - 1)]
    for index, theirs in enumerate(blocks):
        mapping[f"{theirs}.I"] = (f"encoder.blocks.{index}.inducing_points",)
        mab(f"{theirs}.mab0", f"encoder.blocks.{index}.mab0")
        mab(f"{theirs}.mab1", f"encoder.blocks.{index}.mab1")
    mapping["enc.outatt.S"] = ("encoder.pool.seeds",)
    mab("enc.outatt.mab", "encoder.pool.mab")
    mapping["tok_embedding.weight"] = ("decoder.token_embedding.weight",)
    mapping["pos_embedding.weight"] = ("decoder.position_embedding.weight",)
    for j in range(config.n_decoder_layers):
        theirs, ours = f"decoder_transfomer.layers.{j}", f"decoder.layers.{j}"
        for attention, our_attention in (("self_attn", "self_attn"), ("multihead_attn", "cross_attn")):
            for kind in ("weight", "bias"):
                mapping[f"{theirs}.{attention}.in_proj_{kind}"] = tuple(
                    f"{ours}.{our_attention}.{projection}_proj.{kind}" for projection in "qkv"
                )
            weight_and_bias(f"{theirs}.{attention}.out_proj", f"{ours}.{our_attention}.out_proj")
        for layer, our_layer in (
            ("linear1", "mlp.0"),
            ("linear2", "mlp.2"),
            ("norm1", "norm1"),
            ("norm2", "norm2"),
            ("norm3", "norm3"),
        ):
            weight_and_bias(f"{theirs}.{layer}", f"{ours}.{our_layer}")
    weight_and_bias("fc_out", "decoder.head")
    return mapping


def _listing(keys: list[str]) -> str:
    shown = ", ".join(keys[:SHOWN_KEYS]) + (f", ... ({len(keys) - SHOWN_KEYS} more)" if len(keys) > SHOWN_KEYS else "")
    return f"{len(keys)} key{'s' if len(keys) > 1 else ''} ({shown})"


def main(argv=None) -> int:
    """``nesymres-convert``: write a model folder from one of the authors' checkpoints."""
    parser = argparse.ArgumentParser(
        prog="nesymres-convert",
        description="Convert one of the authors' NeSymReS checkpoints (100M.ckpt, 10M.ckpt) into a folder "
        "with config.json and model.safetensors, for NeSymReSRegressor(model=FOLDER).",
    )
    parser.add_argument("checkpoint", help="the PyTorch Lightning .ckpt file")
    parser.add_argument("folder", help="output folder (created if needed)")
    args = parser.parse_args(argv)
    try:
        model = convert_checkpoint(args.checkpoint, args.folder)
    except (ModelLoadError, OSError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    config = model.config
    print(
        f"Wrote {args.folder}: {sum(p.numel() for p in model.parameters()):,} parameters, "
        f"{config.n_isab} ISAB blocks, {config.n_decoder_layers} decoder layers."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
