"""Converted checkpoints compute what the original computes, and the compatibility fields
of ``ModelConfig`` that make it possible.

A reference forward pass and beam search, written from the original equations, run on
the weights of the synthetic checkpoints of ``original_checkpoints.py``.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from original_checkpoints import CONFIGURATIONS, HEADS, LENGTH, SLOTS, WIDTH, original_state

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.prefix import canonical_prefix, prefix_to_sympy
from nesymres_sklearn.network.encoding import encode_points
from nesymres_sklearn.network.model import ModelConfig, NeSymReSModel, config_for_size
from nesymres_sklearn.network.vocabulary import Vocabulary
from nesymres_sklearn.network.weights import load_folder
from nesymres_sklearn.original.beam import hypothesis_tokens, original_finished
from nesymres_sklearn.original.checkpoint import ORIGINAL_TOKENS, convert_checkpoint
from nesymres_sklearn.search.decoding.registry import decode as beam_search

pytestmark = pytest.mark.usefixtures("conversion_cache")


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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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
