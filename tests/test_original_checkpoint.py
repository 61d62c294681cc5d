"""The authors' checkpoints: safe reading, strict conversion, original forward and search.

The synthetic checkpoints have the key names and shapes of the two original
configurations (written here from the naming rules of the original code, not from the
converter) with random weights, saved as PyTorch Lightning 1.x saves a training
checkpoint. A reference forward pass and beam search written from the original
equations check that a converted model computes what the original computes.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import shutil
import sys
import types
from collections import OrderedDict
from contextlib import contextmanager
from functools import cache
from unittest import mock

import numpy as np
import pytest
import sympy
import torch
import torch.nn.functional as F
from hub_server import FakeHub, run_python

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.prefix import canonical_prefix, prefix_to_sympy
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.network.encoding import encode_floats, encode_points
from nesymres_sklearn.network.model import ModelConfig, ModelLoadError, NeSymReSModel, config_for_size
from nesymres_sklearn.network.vocabulary import Vocabulary
from nesymres_sklearn.network.weights import clear_cache, load_folder, load_model
from nesymres_sklearn.original.beam import hypothesis_tokens, original_finished
from nesymres_sklearn.original.checkpoint import (
    ORIGINAL_TOKENS,
    PickledPlaceholder,
    convert_checkpoint,
    convert_state_dict,
    converted_folder,
    main,
    read_checkpoint,
)
from nesymres_sklearn.original.encoding import original_bits
from nesymres_sklearn.search.decoding import decode as beam_search

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


# --- synthetic checkpoints -------------------------------------------------------------


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


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    """``checkpoint(name)``: path of a synthetic checkpoint, written on first use."""
    folder = tmp_path_factory.mktemp("original-checkpoints")

    @cache
    def make(name: str):
        path = folder / f"{name}.ckpt"
        save_lightning_checkpoint(path, original_state(name))
        return path

    return make


def original_state(name: str) -> OrderedDict:
    seed = list(CONFIGURATIONS).index(name)
    return random_state(original_shapes(*CONFIGURATIONS[name]), seed, FAVOURED[name])


@pytest.fixture(autouse=True)
def conversion_cache(tmp_path, monkeypatch):
    """Converted checkpoints go to a per-test HF_HOME."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HOME", str(tmp_path / "hf-home"))
    return tmp_path / "hf-home" / "nesymres-sklearn" / "converted"


# --- reference implementation of the original forward pass and search -----------------


def reference_mab(w, name, queries, keys):
    q = queries @ w[f"{name}.fc_q.weight"].T + w[f"{name}.fc_q.bias"]
    k = keys @ w[f"{name}.fc_k.weight"].T + w[f"{name}.fc_k.bias"]
    v = keys @ w[f"{name}.fc_v.weight"].T + w[f"{name}.fc_v.bias"]
    size = q.shape[-1] // HEADS
    heads = []
    for h in range(HEADS):
        part = slice(h * size, (h + 1) * size)
        weights = torch.softmax(q[..., part] @ k[..., part].transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        heads.append(q[..., part] + weights @ v[..., part])
    out = F.layer_norm(torch.cat(heads, -1), (q.shape[-1],), w[f"{name}.ln0.weight"], w[f"{name}.ln0.bias"])
    out = out + torch.relu(out @ w[f"{name}.fc_o.weight"].T + w[f"{name}.fc_o.bias"])
    return F.layer_norm(out, (q.shape[-1],), w[f"{name}.ln1.weight"], w[f"{name}.ln1.bias"])


def reference_encoder(w, points, n_l_enc):
    def isab(name, x):
        summary = reference_mab(w, f"{name}.mab0", w[f"{name}.I"].expand(len(x), -1, -1), x)
        return reference_mab(w, f"{name}.mab1", x, summary)

    x = isab("enc.selfatt1", points)
    for i in range(n_l_enc):
        x = isab(f"enc.selfatt.{i}", x)
    return reference_mab(w, "enc.outatt.mab", w["enc.outatt.S"].expand(len(x), -1, -1), x)


def reference_attention(w, name, x, memory, mask):
    packed_w, packed_b = w[f"{name}.in_proj_weight"], w[f"{name}.in_proj_bias"]
    q, k, v = (
        inputs @ packed_w[i * WIDTH : (i + 1) * WIDTH].T + packed_b[i * WIDTH : (i + 1) * WIDTH]
        for i, inputs in enumerate((x, memory, memory))
    )
    size = WIDTH // HEADS
    heads = []
    for h in range(HEADS):
        part = slice(h * size, (h + 1) * size)
        scores = q[..., part] @ k[..., part].transpose(1, 2) / math.sqrt(size) + mask
        heads.append(torch.softmax(scores, dim=-1) @ v[..., part])
    return torch.cat(heads, -1) @ w[f"{name}.out_proj.weight"].T + w[f"{name}.out_proj.bias"]


def reference_logits(w, memory, tokens, n_layers):
    """Logits at every position; causal mask as the original builds it (float -> int64
    -> float) plus its key-padding mask on token id 0."""
    length = tokens.shape[1]
    causal = torch.triu(torch.full((length, length), float(torch.iinfo(torch.int64).min)), diagonal=1)
    padding = torch.where(tokens == 0, float("-inf"), 0.0)[:, None, :]
    x = w["tok_embedding.weight"][tokens] + w["pos_embedding.weight"][:length]

    def norm(x, name):
        return F.layer_norm(x, (WIDTH,), w[f"{name}.weight"], w[f"{name}.bias"])

    for j in range(n_layers):
        layer = f"decoder_transfomer.layers.{j}"
        x = norm(x + reference_attention(w, f"{layer}.self_attn", x, x, causal + padding), f"{layer}.norm1")
        x = norm(x + reference_attention(w, f"{layer}.multihead_attn", x, memory, 0.0), f"{layer}.norm2")
        hidden = torch.relu(x @ w[f"{layer}.linear1.weight"].T + w[f"{layer}.linear1.bias"])
        x = norm(x + hidden @ w[f"{layer}.linear2.weight"].T + w[f"{layer}.linear2.bias"], f"{layer}.norm3")
    return x @ w["fc_out.weight"].T + w["fc_out.bias"]


def reference_search(w, points, n_layers, n_l_enc, beam_size):
    """The original beam search, recomputing the whole prefix every step: [(score, ids)]."""
    memory = reference_encoder(w, points[None], n_l_enc).expand(beam_size, -1, -1)
    generated = torch.ones(beam_size, 1, dtype=torch.long)
    beam_scores = torch.tensor([0.0] + [-1e9] * (beam_size - 1))
    hypotheses, worst = [], 1e9
    for length in range(1, LENGTH):
        logits = reference_logits(w, memory, generated, n_layers)[:, -1]
        scores = (torch.log_softmax(logits, dim=-1) + beam_scores[:, None]).view(-1)
        values, indices = torch.topk(scores, 2 * beam_size)
        beam = []
        for index, value in zip(indices.tolist(), values):
            row, word = index // SLOTS, index % SLOTS
            if word == 2 or length + 1 == LENGTH:
                score = (value / length).item()
                if len(hypotheses) < beam_size or score > worst:
                    hypotheses.append((score, generated[row].tolist()))
                    if len(hypotheses) > beam_size:
                        ranked = sorted((s, i) for i, (s, _) in enumerate(hypotheses))
                        del hypotheses[ranked[0][1]]
                        worst = ranked[1][0]
                    else:
                        worst = min(score, worst)
            else:
                beam.append((value, word, row))
            if len(beam) == beam_size:
                break
        if length + 1 == LENGTH:
            break
        beam_scores = torch.stack([value for value, _, _ in beam])
        rows = torch.tensor([row for _, _, row in beam])
        generated = torch.cat([generated[rows], torch.tensor([[word] for _, word, _ in beam])], dim=1)
    return sorted(hypotheses, key=lambda h: h[0], reverse=True)


# --- tests ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, n_keys, n_numbers, spots",
    [
        (
            "100M",
            259,
            26_395_710,
            {
                127: ("enc.selfatt1.I", (1, 50, 512)),
                130: ("enc.selfatt1.mab0.fc_k.weight", (512, 64)),
                167: ("decoder_transfomer.layers.0.self_attn.in_proj_weight", (1536, 512)),
                257: ("fc_out.weight", (60, 512)),
            },
        ),
        (
            "10MPaper",
            130,
            12_113_982,
            {
                52: ("enc.selfatt1.I", (1, 50, 512)),
                65: ("enc.selfatt1.mab1.fc_q.weight", (512, 64)),
                128: ("fc_out.weight", (60, 512)),
            },
        ),
    ],
)
def test_synthetic_key_tables_match_the_original_counts(name, n_keys, n_numbers, spots):
    shapes = original_shapes(*CONFIGURATIONS[name])
    assert len(shapes) == n_keys
    assert sum(math.prod(shape) for shape in shapes.values()) == n_numbers
    keys = list(shapes.items())
    for index, spot in spots.items():
        assert keys[index] == spot


@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_conversion_uses_every_key_and_loads_strictly(checkpoint, name, tmp_path):
    n_l_enc, n_layers = CONFIGURATIONS[name]
    convert_checkpoint(checkpoint(name), tmp_path / "model")
    model = load_folder(tmp_path / "model", torch.device("cpu"))
    config = model.config
    assert (config.n_isab, config.n_decoder_layers) == (n_l_enc + 1, n_layers)
    assert (config.encoding, config.encoder_attention_scale, config.search) == ("original", "hidden", "original")
    assert ModelConfig(**config.to_dict()) == config
    assert config.output_size == 60 and config.vocabulary == [REFERENCE_VOCABULARY[i] for i in range(34)]
    assert sum(p.numel() for p in model.parameters()) == sum(
        math.prod(shape) for key, shape in original_shapes(n_l_enc, n_layers).items() if shape
    )
    original = original_state(name)
    ours = model.state_dict()
    last = f"decoder_transfomer.layers.{n_layers - 1}"
    torch.testing.assert_close(ours["encoder.blocks.0.mab0.fc_k.weight"], original["enc.selfatt1.mab0.fc_k.weight"])
    torch.testing.assert_close(
        ours[f"encoder.blocks.{n_l_enc}.inducing_points"], original[f"enc.selfatt.{n_l_enc - 1}.I"]
    )
    torch.testing.assert_close(
        ours[f"decoder.layers.{n_layers - 1}.cross_attn.v_proj.bias"],
        original[f"{last}.multihead_attn.in_proj_bias"][1024:],
    )
    torch.testing.assert_close(ours["decoder.head.bias"], original["fc_out.bias"])


def test_converted_model_computes_the_original_forward_pass(checkpoint, tmp_path):
    n_l_enc, n_layers = CONFIGURATIONS["10MPaper"]
    convert_checkpoint(checkpoint("10MPaper"), tmp_path / "model")
    model = load_folder(tmp_path / "model", torch.device("cpu"))
    w = original_state("10MPaper")
    rng = np.random.default_rng(0)
    X = rng.uniform(-10, 10, size=(2, 30, 3))
    points = torch.from_numpy(encode_points(X, X[..., 0] * X[..., 1], 3, "original"))
    tokens = torch.tensor([[1, 9, 4, 18, 3, 5], [1, 20, 4, 2, 7, 33]])
    with torch.no_grad():
        memory = model.encode(points)
        torch.testing.assert_close(memory, reference_encoder(w, points, n_l_enc), atol=2e-5, rtol=1e-4)
        logits = model.decoder(tokens, model.decoder.memory_keys_values(memory))
        torch.testing.assert_close(logits, reference_logits(w, memory, tokens, n_layers), atol=5e-5, rtol=1e-4)


def test_original_search_matches_the_reference_search(checkpoint, tmp_path):
    n_l_enc, n_layers = CONFIGURATIONS["10MPaper"]
    convert_checkpoint(checkpoint("10MPaper"), tmp_path / "model")
    model = load_folder(tmp_path / "model", torch.device("cpu"))
    rng = np.random.default_rng(1)
    X = rng.uniform(-5, 5, size=(25, 2))
    points = torch.from_numpy(encode_points(X, np.sin(X[:, 0]) + X[:, 1], 3, "original"))
    with torch.no_grad():
        expected = reference_search(original_state("10MPaper"), points, n_layers, n_l_enc, beam_size=3)
    assert any(0 in ids for _, ids in expected)  # the key-padding mask was exercised
    found = original_finished(model, points, beam_size=3)
    assert [ids for _, ids in found] == [ids for _, ids in expected]
    assert [score for score, _ in found] == pytest.approx([score for score, _ in expected], rel=1e-5)


def test_estimator_proposes_the_original_skeletons_with_their_scores(checkpoint):
    n_l_enc, n_layers = CONFIGURATIONS["10MPaper"]
    rng = np.random.default_rng(2)
    X = rng.uniform(1, 5, size=(40, 2))
    y = X[:, 0] + 2 * X[:, 1]
    regressor = NeSymReSRegressor(model=str(checkpoint("10MPaper")), beam_size=4, n_restarts=1, random_state=0)
    regressor.fit(X, y)
    points = torch.from_numpy(encode_points(X.astype(np.float32), y.astype(np.float32), 3, "original"))
    with torch.no_grad():
        expected = reference_search(original_state("10MPaper"), points, n_layers, n_l_enc, beam_size=4)
    vocab = Vocabulary(tuple(ORIGINAL_TOKENS))
    first_seen = {}
    for score, ids in expected:
        tokens = hypothesis_tokens(ids, vocab, n_features=2)
        if tokens is not None:
            first_seen.setdefault(canonical_prefix(tokens), (tokens, score))
    assert first_seen, "the synthetic model should propose at least one valid skeleton"
    beam_rows = regressor.equations_[regressor.equations_["origin"] == "beam"]
    assert len(beam_rows) == len(first_seen)
    proposed = {str(row.skeleton): row.log_prob for row in beam_rows.itertuples()}
    for tokens, score in first_seen.values():
        skeleton = str(prefix_to_sympy(tokens, evaluate=False, fold_numbers=True))
        assert proposed[skeleton] == pytest.approx(score, rel=1e-5)
    assert regressor.predict(X).shape == (40,)


def test_fit_with_the_full_size_checkpoint_converts_once(checkpoint, conversion_cache, xy):
    clear_cache()
    X, y = xy
    path = checkpoint("100M")
    regressor = NeSymReSRegressor(model=str(path), beam_size=2, n_restarts=1, max_points=30, random_state=0).fit(X, y)
    assert np.isfinite(regressor.equations_.loc[regressor.best_index_, "score_lower_is_better"])
    assert load_model(str(path), device="cpu").config.n_isab == 6
    (folder,) = conversion_cache.iterdir()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert converted_folder(path) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp  # not converted again
    with pytest.warns(UserWarning, match="wraps its exponent"):
        regressor.fit(X, np.where(np.arange(len(y)) % 2, y, 1e-7))  # below 2**-15, not 0; units in range


def strip_key(state, key):
    return OrderedDict((k, v) for k, v in state.items() if k != key)


@pytest.fixture(scope="module")
def small_state():
    return original_state("10MPaper")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda s: strip_key(s, "decoder_transfomer.layers.1.norm3.bias"),
            r"lacks 1 key \(decoder_transfomer\.layers\.1\.norm3\.bias\)",
        ),
        (lambda s: strip_key(s, "enc.std"), r"lacks 1 key \(enc\.std\)"),
        (lambda s: OrderedDict(s, **{"model.extra": torch.zeros(3)}), r"has 1 key \(model\.extra\) that the original"),
        (
            lambda s: OrderedDict(s, **{"enc.selfatt1.mab0.fc_k.weight": torch.zeros(512, 48)}),
            r"Key enc\.selfatt1\.mab0\.fc_k\.weight has shape \[512, 48\]; .* needs \[512, 64\]",
        ),
        (
            lambda s: OrderedDict(s, **{"decoder_transfomer.layers.0.self_attn.in_proj_bias": torch.zeros(512)}),
            r"in_proj_bias has shape \[512\]; .* needs \[1536\]",
        ),
        (
            lambda s: OrderedDict(s, **{"fc_out.bias": torch.zeros(60, dtype=torch.long)}),
            r"Key fc_out\.bias holds torch\.int64",
        ),
        (lambda s: OrderedDict((k, v) for k, v in s.items() if not k.startswith("decoder")), r"no decoder layers"),
    ],
)
def test_wrong_keys_and_shapes_are_named(small_state, change, message):
    with pytest.raises(ModelLoadError, match=message):
        convert_state_dict(change(small_state))


def test_a_bad_checkpoint_file_names_the_file_and_the_key(small_state, tmp_path):
    save_lightning_checkpoint(tmp_path / "bad.ckpt", strip_key(small_state, "fc_out.weight"))
    with pytest.raises(ModelLoadError, match=r"bad\.ckpt: The state_dict lacks 1 key \(fc_out\.weight\)"):
        NeSymReSRegressor(model=str(tmp_path / "bad.ckpt")).fit(np.ones((5, 1)), np.arange(5.0))


class RunsACommand:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def test_a_pickle_that_runs_code_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    torch.save({"state_dict": {}, "payload": RunsACommand(f"touch {marker}")}, tmp_path / "evil.ckpt")
    with pytest.raises(ModelLoadError, match=r"refers to posix\.system; loading it could run code, so it is refused"):
        read_checkpoint(tmp_path / "evil.ckpt")
    with pytest.raises(ModelLoadError, match="refused"):
        convert_checkpoint(tmp_path / "evil.ckpt", tmp_path / "out")
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_lightning_and_omegaconf_objects_become_inert_placeholders(tmp_path):
    marker = tmp_path / "called"

    def touch(path):
        open(path, "w").close()

    class Callback:
        def __reduce__(self):
            return touch, (str(marker),)

    ModelCheckpoint = type("ModelCheckpoint", (), {})
    DictConfig = type("DictConfig", (), {})
    hyper_parameters = DictConfig()
    hyper_parameters.__dict__["_content"] = {"lr": 1e-4}
    with fake_modules(
        {
            LIGHTNING_MODULE: {"ModelCheckpoint": ModelCheckpoint},
            "pytorch_lightning.utilities": {"touch": touch},
            "omegaconf.dictconfig": {"DictConfig": DictConfig},
        }
    ):
        torch.save(
            {
                "state_dict": {"w": torch.arange(3.0)},
                "callbacks": {ModelCheckpoint: {"k": Callback()}},
                "hyper_parameters": hyper_parameters,
            },
            tmp_path / "lightning.ckpt",
        )
    assert "pytorch_lightning" not in sys.modules and "omegaconf" not in sys.modules
    checkpoint = read_checkpoint(tmp_path / "lightning.ckpt")
    torch.testing.assert_close(checkpoint["state_dict"]["w"], torch.arange(3.0))
    ((key, value),) = checkpoint["callbacks"].items()
    assert key is PickledPlaceholder and isinstance(value["k"], PickledPlaceholder)
    assert value["k"].args == (str(marker),) and not marker.exists()  # the function was never called
    assert checkpoint["hyper_parameters"].state == {"_content": {"lr": 1e-4}}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not a zip file at all", "not a checkpoint written by torch.save"),
        (pickle.dumps({"state_dict": {}}), "not a checkpoint written by torch.save"),
    ],
)
def test_files_that_are_not_torch_checkpoints(tmp_path, content, message):
    (tmp_path / "x.ckpt").write_bytes(content)
    with pytest.raises(ModelLoadError, match=message):
        read_checkpoint(tmp_path / "x.ckpt")


def test_old_torch_is_told_to_upgrade(tmp_path, monkeypatch):
    monkeypatch.setattr(torch, "__version__", torch.torch_version.TorchVersion("2.5.1"))
    with pytest.raises(RuntimeError, match=r"needs torch >= 2\.6 \(this is torch 2\.5\.1\)"):
        read_checkpoint(tmp_path / "any.ckpt")


def test_a_checkpoint_without_state_dict(tmp_path):
    torch.save({"model": {}}, tmp_path / "x.ckpt")
    with pytest.raises(ModelLoadError, match="has no 'state_dict'"):
        read_checkpoint(tmp_path / "x.ckpt")


def test_command_line_converter(checkpoint, tmp_path, capsys):
    assert main([str(checkpoint("10MPaper")), str(tmp_path / "out")]) == 0
    assert "Wrote" in capsys.readouterr().out
    assert {"config.json", "model.safetensors"} <= set(os.listdir(tmp_path / "out"))
    assert main([str(tmp_path / "missing.ckpt"), str(tmp_path / "out2")]) == 1
    assert "error:" in capsys.readouterr().err


HUB_FIT = """
    import numpy as np
    from nesymres_sklearn import NeSymReSRegressor
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(30, 2))
    reg = NeSymReSRegressor(model="authors/nesymres/10M.ckpt", beam_size=2, n_restarts=1, random_state=0)
    reg.fit(X, X[:, 0] + X[:, 1])
    print("EXPRESSION", reg.expression_)
    import huggingface_hub.file_download as download
    def no_network(*args, **kwargs):
        raise AssertionError("the Hub was asked again for a cached model")
    download.get_hf_file_metadata = no_network
    reg.fit(X, X[:, 0] - X[:, 1])
    print("REFIT OK")
"""
MISSING_FILE = """
    import nesymres_sklearn.original  # registers the .ckpt converter
    from nesymres_sklearn.network.weights import resolve_folder
    try:
        resolve_folder("authors/nesymres/100M.ckpt")
    except Exception as error:
        print(type(error).__name__, "|", error)
"""


@pytest.mark.slow
def test_checkpoint_from_the_hub_is_downloaded_and_converted_once(checkpoint, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "10M.ckpt").symlink_to(checkpoint("10MPaper"))
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HOME": str(tmp_path / "home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    converted = tmp_path / "home" / "nesymres-sklearn" / "converted"
    with FakeHub({"authors/nesymres": repo}) as hub:
        result = run_python(HUB_FIT, {**env, "HF_ENDPOINT": hub.endpoint})
        assert result.returncode == 0, result.stderr
        assert "REFIT OK" in result.stdout
        assert hub.downloads == ["authors/nesymres/10M.ckpt"]
        missing = run_python(MISSING_FILE, {**env, "HF_ENDPOINT": hub.endpoint})
    assert missing.stdout.startswith(
        "ModelLoadError | Hub repository 'authors/nesymres' lacks a file the model needs (100M.ckpt)"
    ), missing.stderr
    (folder,) = converted.iterdir()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    offline = run_python(HUB_FIT, {**env, "HF_HUB_OFFLINE": "1"})  # the server is gone
    assert offline.returncode == 0, offline.stderr
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp and list(converted.iterdir()) == [folder]


# Reference encoding vectors (float32 input): value -> (sign value, exponent bits, mantissa bits).
ENCODING_VECTORS = [
    (0.0, 0.0, "00000", "0000000000"),
    (1.0, 0.0, "01111", "0000000000"),
    (-1.0, 1.0, "01111", "0000000000"),
    (0.5, 0.0, "01110", "0000000000"),
    (3.0, 0.0, "10000", "1000000000"),
    (2.75, 0.0, "10000", "0110000000"),
    (-7.3, 1.0, "10001", "1101001100"),
    (1e-6, 0.0, "11011", "0000110001"),
    (-0.0005, 0.0, "00100", "0000011000"),
    (np.float32(-0.001), 0.5, "00101", "0000011000"),
    (1e5, 0.0, "11111", "1000011010"),
    (131072.0, 0.0, "00000", "0000000000"),
    (np.nextafter(np.float32(32), np.float32(0)), 0.0, "10100", "1111111111"),
]


@pytest.mark.parametrize("value, sign, exponent, mantissa", ENCODING_VECTORS)
def test_original_encoding_vectors(value, sign, exponent, mantissa):
    bits = original_bits(np.array([value], dtype=np.float32))[0]
    assert bits[0] == sign
    assert "".join(str(int(b)) for b in bits[1:6]) == exponent
    assert "".join(str(int(b)) for b in bits[6:]) == mantissa
    np.testing.assert_array_equal(encode_floats(np.array([value]), "original")[0], 2 * (bits - 0.5))


def float32_fields(values):
    """The equivalent bit-level description: sign bit, (biased exponent - 112) mod 32,
    top 10 of the 23 mantissa bits; zero is all zeros."""
    raw = np.asarray(values, dtype=np.float32).view(np.uint32)
    exponent = ((raw >> 23 & 0xFF).astype(np.int64) - 112) % 32
    mantissa = raw >> 13 & 0x3FF
    zero = np.asarray(values) == 0
    return raw >> 31, np.where(zero, 0, exponent), np.where(zero, 0, mantissa)


@pytest.mark.parametrize("scale", [10.0, 5e4])
def test_original_encoding_is_float32_truncation(scale):
    values = np.random.default_rng(0).uniform(-scale, scale, 20_000).astype(np.float32)
    values = values[(values <= -0.001) | (values >= 0)]  # small negatives get the positive sign
    values = values[values != np.float32(-0.001)]
    bits = original_bits(values).astype(np.int64)
    sign, exponent, mantissa = float32_fields(values)
    np.testing.assert_array_equal(bits[:, 0], sign)
    np.testing.assert_array_equal(bits[:, 1:6] @ (1 << np.arange(4, -1, -1)), exponent)
    np.testing.assert_array_equal(bits[:, 6:] @ (1 << np.arange(9, -1, -1)), mantissa)


def test_original_encoding_casts_to_float32_first():
    value = 1 + 2.0**-10 - 2.0**-40  # float32 rounds it up to 1 + 2**-10: mantissa 0000000001
    assert original_bits(np.array([value]))[0, 6:].tolist() == [0.0] * 9 + [1.0]


def test_original_vocabulary_ids():
    vocab = Vocabulary(tuple(ORIGINAL_TOKENS))
    assert dict(enumerate(vocab.tokens)) == REFERENCE_VOCABULARY
    assert (vocab.pad_id, vocab.sos_id, vocab.eos_id, vocab.constant_id) == (0, 1, 2, 3)
    assert vocab.arities[7] == 1  # abs


# Hypothesis ids -> the original's expression string (None: skipped as invalid).
PREFIX_VECTORS = [
    ([1, 18, 4, 20, 4], "((x_1)*(sin(x_1)))"),
    ([1, 9, 3, 18, 3, 4], "((c0)+((c1)*(x_1)))"),
    ([1, 18, 4, 19, 5, 27], "((x_1)*((x_2)**(-1)))"),
    ([1, 22, 9, 19, 4, 30, 3], "(sqrt(((x_1)**(2))+(c0)))"),
    ([1, 7, 6], "(Abs(x_3))"),
    ([1, 18, 3, 4, 4], None),  # leftover token
    ([1, 9, 4], None),  # incomplete
    ([1, 20, 0], None),  # padding id
    ([1, 20, 45], None),  # an output slot without a token
]


@pytest.mark.parametrize("ids, expected", PREFIX_VECTORS)
def test_original_prefix_decoding(ids, expected):
    tokens = hypothesis_tokens(ids, Vocabulary(tuple(ORIGINAL_TOKENS)), n_features=3)
    if expected is None:
        assert tokens is None
        return
    names = {f"x_{i}": sympy.Symbol(f"x_{i}", real=True) for i in (1, 2, 3)}
    names.update({f"c{i}": sympy.Symbol(f"c_{i}", real=True) for i in (0, 1)})
    assert prefix_to_sympy(tokens) == sympy.sympify(expected, locals=names)


def test_hypotheses_with_variables_the_data_lacks_are_dropped():
    vocab = Vocabulary(tuple(ORIGINAL_TOKENS))
    assert hypothesis_tokens([1, 9, 4, 5], vocab, n_features=2) == ("add", "x_1", "x_2")
    assert hypothesis_tokens([1, 9, 4, 6], vocab, n_features=2) is None


def test_abs_is_evaluated_with_its_derivative():
    program = PrefixProgram(["abs", "mul", "c", "x_1"])
    X = np.array([[-2.0], [3.0]])
    values, jacobian = program.value_and_jacobian(X, [1.5])
    np.testing.assert_allclose(values, [3.0, 4.5])
    np.testing.assert_allclose(jacobian[:, 0], [2.0, 3.0])


def test_configs_without_the_compatibility_fields_keep_todays_behaviour(tiny_model, tmp_path):
    shutil.copytree(tiny_model, tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    for field in ("encoder_attention_scale", "output_size", "search"):
        config.pop(field)
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    model = load_folder(tmp_path / "m", torch.device("cpu"))
    assert model.config == ModelConfig(**config)
    assert model.config.to_dict() == config  # e.g. a training checkpoint's saved config still matches
    assert (model.config.encoder_attention_scale, model.config.output_size, model.config.search) == (
        "head",
        None,
        "constrained",
    )
    assert model.decoder.head.out_features == len(config["vocabulary"])


def test_constrained_search_normalises_over_extra_output_slots():
    torch.manual_seed(0)
    model = NeSymReSModel(config_for_size("tiny", output_size=45)).eval()
    points = torch.from_numpy(encode_points(np.ones((10, 1)), np.arange(10.0), 3))
    hypotheses = beam_search(model, points, 4, n_features=1)
    assert hypotheses
    vocab = model.vocab
    for hypothesis in hypotheses:
        ids = [vocab.sos_id, *vocab.encode(list(hypothesis.tokens)), vocab.eos_id]
        with torch.no_grad():
            log_probs = torch.log_softmax(model(points[None], torch.tensor([ids[:-1]]))[0], dim=-1)
        assert log_probs.shape[-1] == 45
        expected = float(log_probs[torch.arange(len(ids) - 1), ids[1:]].sum())
        assert hypothesis.log_prob == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(encoder_attention_scale="full"), "Unknown encoder_attention_scale"),
        (dict(output_size=10), "output_size must be an integer at least the vocabulary.s size"),
    ],
)
def test_invalid_compatibility_fields(overrides, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**overrides)
