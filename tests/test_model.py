import json

import pytest
import torch

from nesymres_sklearn.network.model import MODEL_SIZES, ModelConfig, NeSymReSModel, config_for_size
from nesymres_sklearn.network.vocabulary import default_tokens


def n_parameters(model):
    return sum(p.numel() for p in model.parameters())


def test_paper_configuration():
    config = ModelConfig()
    assert (config.hidden_size, config.n_heads, config.n_isab, config.n_inducing_points) == (512, 8, 5, 50)
    assert (config.n_seeds, config.n_decoder_layers, config.n_variables) == (10, 5, 3)
    assert 20e6 < n_parameters(NeSymReSModel(config)) < 30e6


@pytest.mark.parametrize("size, low, high", [("medium", 3e6, 7e6), ("small", 0.7e6, 1.5e6), ("tiny", 0.1e6, 0.3e6)])
def test_named_sizes(size, low, high):
    assert size in MODEL_SIZES
    assert low < n_parameters(NeSymReSModel(config_for_size(size))) < high


def test_forward_shapes_and_loss_ignores_padding():
    torch.manual_seed(0)
    config = config_for_size("tiny", n_variables=2)
    model = NeSymReSModel(config)
    points = torch.randn(3, 20, 16 * 3)
    tokens = torch.randint(3, len(config.vocabulary), (3, 6))
    targets = tokens.clone()
    logits, loss = model(points, tokens, targets)
    assert logits.shape == (3, 6, len(config.vocabulary))
    targets[:, 3:] = config.vocab.pad_id
    _, partial = model(points, tokens, targets)
    expected = torch.nn.functional.cross_entropy(logits[:, :3].flatten(0, 1), targets[:, :3].flatten())
    assert partial.item() == pytest.approx(expected.item(), rel=1e-5)


def test_encoder_is_permutation_invariant():
    torch.manual_seed(0)
    model = NeSymReSModel(config_for_size("tiny")).eval()
    points = torch.randn(1, 30, 64)
    permuted = points[:, torch.randperm(30)]
    torch.testing.assert_close(model.encode(points), model.encode(permuted), atol=1e-5, rtol=1e-5)


def test_incremental_decoding_matches_full_decoding():
    torch.manual_seed(0)
    model = NeSymReSModel(config_for_size("tiny")).eval()
    points = torch.randn(25, 64)
    tokens = torch.randint(0, 33, (2, 9))
    full = model.decoder(tokens, model.decoder.memory_keys_values(model.encode(points[None])))
    state = model.start_decoding(points, n_rows=2)
    steps = [model.decode_step(tokens[:, i], state) for i in range(9)]
    torch.testing.assert_close(torch.stack(steps, dim=1), full, atol=1e-5, rtol=1e-5)
    assert state.length == 9


def test_reordered_state_continues_the_selected_rows():
    torch.manual_seed(0)
    model = NeSymReSModel(config_for_size("tiny")).eval()
    points = torch.randn(25, 64)
    tokens = torch.randint(3, 33, (3, 5))
    state = model.start_decoding(points, n_rows=3)
    for i in range(4):
        model.decode_step(tokens[:, i], state)
    rows = torch.tensor([2, 2, 0])
    state.reorder(rows)
    assert state.n_rows == 3
    reordered = model.decode_step(tokens[rows, 4], state)
    fresh = model.start_decoding(points, n_rows=3)
    for i in range(5):
        expected = model.decode_step(tokens[rows, i], fresh)
    torch.testing.assert_close(reordered, expected, atol=1e-5, rtol=1e-5)


def test_save_and_load_round_trip(tmp_path):
    torch.manual_seed(0)
    model = NeSymReSModel(config_for_size("tiny", n_variables=4))
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["vocabulary"] == default_tokens(4) and saved["encoding"] == "ieee-half"
    loaded = NeSymReSModel.from_pretrained(tmp_path, strict=True)
    assert loaded.config == model.config
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        torch.testing.assert_close(a, b, msg=name)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(hidden_size=30, n_heads=4), "multiple of n_heads"),
        (dict(encoding="float32"), "Unknown number encoding"),
        (dict(n_isab=0), "n_isab must be a positive integer, got 0"),
        (dict(n_heads=0), "n_heads must be a positive integer, got 0"),
        (dict(hidden_size=-128), "hidden_size must be a positive integer, got -128"),
        (dict(hidden_size="128"), "hidden_size must be a positive integer, got '128'"),
        (dict(max_length=True), "max_length must be a positive integer"),
        (dict(dropout=1.5), "dropout must be a number in"),
        (dict(output_size="60"), "output_size must be an integer"),
        (dict(vocabulary="x_1"), "vocabulary must be a list of token strings"),
        (dict(vocabulary=["<pad>", "x_1"]), "required token"),
    ],
)
def test_invalid_configs(overrides, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**overrides)
    with pytest.raises(ValueError, match="Unknown model size"):
        config_for_size("huge")
