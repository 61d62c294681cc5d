import pytest
import torch

from nesymres_sklearn.expression.prefix import is_valid_prefix
from nesymres_sklearn.network.encoding import encode_points
from nesymres_sklearn.network.weights import load_model
from nesymres_sklearn.search.decoding.beam import constrained_search as beam_search
from nesymres_sklearn.search.decoding.registry import DECODERS, decode


@pytest.fixture
def setup(tiny_model, xy):
    model = load_model(tiny_model, device="cpu")
    X, y = xy
    return model, torch.from_numpy(encode_points(X, y, model.config.n_variables))


def teacher_forced_log_prob(model, points, tokens):
    vocab = model.vocab
    ids = [vocab.sos_id, *vocab.encode(list(tokens)), vocab.eos_id]
    sequence = torch.tensor([ids])
    with torch.no_grad():
        logits = model(points[None], sequence[:, :-1])
    log_probs = torch.log_softmax(logits[0].float(), dim=-1)
    return float(log_probs[torch.arange(len(ids) - 1), sequence[0, 1:]].sum())


@pytest.mark.parametrize("beam_size", [1, 4, 16])
def test_hypotheses_are_valid_sorted_and_scored_exactly(setup, beam_size):
    model, points = setup
    hypotheses = beam_search(model, points, beam_size, n_features=2)
    assert 1 <= len(hypotheses) <= beam_size
    scores = [h.log_prob for h in hypotheses]
    assert scores == sorted(scores, reverse=True)
    assert len({h.tokens for h in hypotheses}) == len(hypotheses)
    for hypothesis in hypotheses:
        assert is_valid_prefix(hypothesis.tokens)
        assert len(hypothesis.tokens) + 2 <= model.config.max_length
        assert "x_3" not in hypothesis.tokens
        assert teacher_forced_log_prob(model, points, hypothesis.tokens) == pytest.approx(hypothesis.log_prob, abs=1e-3)


def test_variables_are_masked_by_number_of_features(setup):
    model, points = setup
    for hypothesis in beam_search(model, points, 16, n_features=1):
        assert "x_2" not in hypothesis.tokens and "x_3" not in hypothesis.tokens


def test_beam_search_is_deterministic(setup):
    model, points = setup
    assert beam_search(model, points, 8, 2) == beam_search(model, points, 8, 2)


def test_decode_uses_the_method_the_config_names(setup, monkeypatch):
    model, points = setup
    assert decode(model, points, 8, 2) == beam_search(model, points, 8, 2)
    monkeypatch.setattr(model.config, "search", "no-such-method")
    with pytest.raises(ValueError, match="Unknown decoding method 'no-such-method'"):
        decode(model, points, 8, 2)
    monkeypatch.setitem(DECODERS, "no-such-method", lambda *args: ["called"])
    assert decode(model, points, 8, 2) == ["called"]
