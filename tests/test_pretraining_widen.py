"""A model that reads more variables, started from one that reads fewer."""

import numpy as np
import pytest
import torch

from nesymres_sklearn.network.encoding import encode_points
from nesymres_sklearn.network.model import NeSymReSModel, config_for_size
from pretraining.widen import widen, widening


def _models(seed=0):
    torch.manual_seed(seed)
    return NeSymReSModel(config_for_size("tiny", 3)).eval(), NeSymReSModel(config_for_size("tiny", 8)).eval()


def test_the_widened_model_reads_narrow_data_as_the_narrow_model_did():
    narrow, wide = _models()
    widen(narrow, wide)
    rng = np.random.default_rng(0)
    X = rng.uniform(-5, 5, (2, 40, 3))
    y = np.sin(X[..., 0]) * X[..., 1] + X[..., 2]
    old_tokens = torch.tensor([[1, 3, 8, 4], [1, 6, 17, 5]])  # <sos> x_1 add x_2 / <sos> c mul x_3
    to_wide = torch.tensor([wide.config.vocabulary.index(t) for t in narrow.config.vocabulary])
    with torch.no_grad():
        before = narrow(torch.tensor(encode_points(X, y, 3)), old_tokens)
        after = wide(torch.tensor(encode_points(X, y, 8)), to_wide[old_tokens])
    np.testing.assert_allclose(after[..., to_wide].numpy(), before.numpy(), rtol=1e-5, atol=1e-5)
    added = [wide.config.vocabulary.index(f"x_{i}") for i in range(4, 9)]
    assert torch.all(after[..., added] == wide.decoder.head.bias[added])
    assert torch.all(wide.decoder.head.bias[added] == narrow.decoder.head.bias.min())


def test_new_variables_start_as_the_last_old_one_and_their_columns_at_zero():
    narrow, wide = _models()
    widen(narrow, wide)
    embedding = wide.decoder.token_embedding.weight
    x3 = narrow.decoder.token_embedding.weight[narrow.config.vocabulary.index("x_3")]
    for i in range(4, 9):
        assert torch.equal(embedding[wide.config.vocabulary.index(f"x_{i}")], x3)
    first = wide.encoder.blocks[0].mab0.fc_k.weight
    assert first.shape[1] == 16 * 9
    assert torch.count_nonzero(first[:, 16 * 3 : 16 * 8]) == 0
    assert torch.equal(first[:, 16 * 8 :], narrow.encoder.blocks[0].mab0.fc_k.weight[:, 16 * 3 :])


def test_only_a_model_of_more_variables_and_the_same_sizes_is_a_widening():
    assert widening(config_for_size("tiny", 3), config_for_size("tiny", 8))
    assert not widening(config_for_size("tiny", 8), config_for_size("tiny", 3))
    assert not widening(config_for_size("tiny", 3), config_for_size("small", 8))
    assert not widening(config_for_size("tiny", 3), config_for_size("tiny", 3))
    with pytest.raises(ValueError, match="more variables"):
        widen(NeSymReSModel(config_for_size("tiny", 3)), NeSymReSModel(config_for_size("small", 8)))
