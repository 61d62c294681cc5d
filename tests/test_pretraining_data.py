"""Batches: paper's instantiation rules, bounds, determinism, worker independence."""

import numpy as np
import pytest
import torch

from nesymres_sklearn.expression.prefix import is_valid_prefix
from nesymres_sklearn.expression.tokens import variable_index
from nesymres_sklearn.network.encoding import decode_floats, encode_points, half_bits, point_columns
from pretraining.bank import SkeletonBank, build_bank
from pretraining.data import (
    BatchConfig,
    BatchStream,
    EquationSampler,
    batch_loader,
    batch_rng,
    points_from_codes,
)
from pretraining.generator import GeneratorConfig

#: Banks of the tests below keep SymPy's construction rules only: full simplification (the
#: default, tested in test_pretraining_generator.py) was most of their build time.
AUTOMATIC = GeneratorConfig(simplification="automatic")


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bank")
    build_bank(
        folder, n_skeletons=80, n_heldout=0, seed=1, n_jobs=1, chunk_size=20, chunks_per_shard=3, config=AUTOMATIC
    )
    return SkeletonBank(folder)


@pytest.fixture(scope="module")
def sampler(bank):
    return EquationSampler(bank, BatchConfig(batch_size=32, min_points=50, max_points=120))


def _decode(batch, n_variables=3):
    points = points_from_codes(batch["codes"]).numpy()
    values = decode_floats(points.reshape(*points.shape[:2], n_variables + 1, 16))
    return values[..., :n_variables], values[..., -1]


def test_batch_shapes_bounds_and_targets(sampler):
    vocab = sampler.vocab
    for index in range(5):
        batch = sampler.batch(batch_rng(0, 0, index))
        codes, targets = batch["codes"], batch["targets"]
        assert codes.dtype == torch.int16 and targets.dtype == torch.int64
        assert codes.shape[0] == targets.shape[0] == 32 and codes.shape[2] == 4
        assert 25 <= codes.shape[1] <= 120
        X, y = _decode(batch)
        assert np.isfinite(y).all() and np.isfinite(X).all()
        assert (np.abs(y) <= 1000).all()
        assert (np.abs(X) <= 10).all()
        for row, ids in enumerate(targets.tolist()):
            assert ids[0] == vocab.sos_id
            end = ids.index(vocab.eos_id)
            assert all(i == vocab.pad_id for i in ids[end + 1 :])
            tokens = vocab.decode(ids[1:end])
            assert is_valid_prefix(tokens)
            used = {variable_index(t) for t in tokens} - {None}
            for column in set(range(3)) - used:
                assert (X[row, :, column] == 0).all()


def test_codes_expand_to_exactly_the_encoder_input_of_the_points():
    """The int16 codes a batch carries become, on the device, bit for bit what
    encode_points gives: signs, subnormals, -0, saturation, inf and NaN included."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3, 40, 2)) * np.array([1e-6, 1e6])
    y = rng.normal(size=(3, 40)) * 100
    y[0, :4] = [np.nan, -np.inf, -0.0, 1e-9]
    codes = torch.from_numpy(half_bits(point_columns(X, y, 3)).view(np.int16))
    expanded = points_from_codes(codes)
    assert expanded.dtype == torch.float32 and expanded.shape == (3, 40, 64)
    assert torch.equal(expanded, torch.from_numpy(encode_points(X, y, 3)))


def test_number_of_constants_in_targets(bank, sampler):
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(300):
        X, y, target = sampler.equation(rng, 60)
        counts.append(target.count("c"))
    max_existing = max(bank.kinds(i).count("existing") for i in range(len(bank)))
    assert max(counts) <= 3 + max_existing
    assert {0, 1, 2, 3} <= set(counts)


def test_batches_are_deterministic(sampler):
    a = sampler.batch(batch_rng(5, 0, 2))
    b = sampler.batch(batch_rng(5, 0, 2))
    c = sampler.batch(batch_rng(5, 1, 2))
    assert torch.equal(a["codes"], b["codes"]) and torch.equal(a["targets"], b["targets"])
    assert not torch.equal(a["targets"], c["targets"])


def test_stream_does_not_depend_on_workers(sampler):
    single = list(batch_loader(BatchStream(sampler, 9, start=3, stop=7), num_workers=0))
    multi = list(batch_loader(BatchStream(sampler, 9, start=3, stop=7), num_workers=2))
    assert len(single) == len(multi) == 4
    for a, b in zip(single, multi):
        assert torch.equal(a["codes"], b["codes"]) and torch.equal(a["targets"], b["targets"])


class _ThreadCounts(BatchStream):
    def batch(self, index):
        return {"index": index, "threads": torch.get_num_threads()}


def test_loader_workers_compute_with_one_torch_thread(sampler, monkeypatch):
    """The training process takes the other cores (pretraining.runtime.training_threads)."""
    monkeypatch.delenv("OMP_NUM_THREADS")  # the workers must not owe their one thread to the suite's setting
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        batches = list(batch_loader(_ThreadCounts(sampler, 9, stop=4), num_workers=2))
    finally:
        torch.set_num_threads(previous)
    assert [batch["index"] for batch in batches] == [0, 1, 2, 3]
    assert [batch["threads"] for batch in batches] == [1, 1, 1, 1]


def test_sampler_pickles_and_gives_the_same_batches(sampler):
    import pickle

    first = sampler.batch(batch_rng(0, 0, 5))
    copy = pickle.loads(pickle.dumps(sampler))
    second = copy.batch(batch_rng(0, 0, 5))
    assert torch.equal(first["codes"], second["codes"]) and torch.equal(first["targets"], second["targets"])


def test_frequency_weighting_draws_skeletons_in_proportion_to_their_counts(tmp_path):
    build_bank(
        tmp_path, n_skeletons=40, n_heldout=0, seed=5, n_jobs=1, chunk_size=40, chunks_per_shard=2, config=AUTOMATIC
    )
    bank = SkeletonBank(tmp_path)
    sampler = EquationSampler(bank, BatchConfig(batch_size=4))
    rng = np.random.default_rng(0)
    draws = np.bincount([sampler.draw_index(rng) for _ in range(40_000)], minlength=len(bank))
    expected = bank.counts / bank.counts.sum()
    assert np.abs(draws / draws.sum() - expected).max() < 0.01
    uniform = EquationSampler(bank, BatchConfig(batch_size=4, weighting="uniform"))
    draws = np.bincount([uniform.draw_index(rng) for _ in range(40_000)], minlength=len(bank))
    assert np.abs(draws / draws.sum() - 1 / len(bank)).max() < 0.01
    tempered = EquationSampler(bank, BatchConfig(batch_size=4, frequency_power=0.5))
    draws = np.bincount([tempered.draw_index(rng) for _ in range(40_000)], minlength=len(bank))
    root = np.sqrt(bank.counts) / np.sqrt(bank.counts).sum()
    assert np.abs(root - expected).max() > 0.02  # the test tells the two weightings apart
    assert np.abs(draws / draws.sum() - root).max() < 0.01
    with pytest.raises(ValueError, match="Unknown weighting"):
        BatchConfig(weighting="length")
    with pytest.raises(ValueError, match="frequency_power"):
        BatchConfig(frequency_power=1.5)


def test_a_split_without_counts_is_drawn_uniformly_whatever_the_weighting(tmp_path):
    build_bank(
        tmp_path, n_skeletons=20, n_heldout=20, seed=5, n_jobs=1, chunk_size=40, chunks_per_shard=2, config=AUTOMATIC
    )
    heldout = SkeletonBank(tmp_path, split="heldout")
    assert heldout.counts is None
    rng = np.random.default_rng(0)
    for power in (1.0, 0.5):
        sampler = EquationSampler(heldout, BatchConfig(batch_size=4, frequency_power=power))
        draws = np.bincount([sampler.draw_index(rng) for _ in range(20_000)], minlength=len(heldout))
        assert np.abs(draws / draws.sum() - 1 / len(heldout)).max() < 0.015


def test_targets_fit_the_model_length(bank):
    sampler = EquationSampler(bank, BatchConfig(batch_size=32, min_points=20, max_points=20), max_length=7)
    default = EquationSampler(bank, BatchConfig(batch_size=32, min_points=20, max_points=20))
    assert default.max_length == 60
    lengths = [sampler.batch(batch_rng(0, 0, i))["targets"].shape[1] for i in range(3)]
    assert max(lengths) <= 7
    assert max(default.batch(batch_rng(0, 0, i))["targets"].shape[1] for i in range(3)) > 7


def test_batch_config_refuses_empty_ranges_and_batches():
    with pytest.raises(ValueError, match="support_range"):
        BatchConfig(support_range=(1.0, -1.0))
    with pytest.raises(ValueError, match="constant_range"):
        BatchConfig(constant_range=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="batch_size"):
        BatchConfig(batch_size=0)


def test_constant_signs_both_draws_negative_values_of_the_same_magnitudes(bank):
    index = next(i for i in range(len(bank)) if len(bank[i][1]) >= 1)
    tokens, kinds = bank[index]
    existing = np.zeros(len(kinds), dtype=bool)
    config = dict(batch_size=4, max_constants=len(kinds), constant_range=(1.0, 5.0))
    positive = EquationSampler(bank, BatchConfig(**config))
    both = EquationSampler(bank, BatchConfig(**config, constant_signs="both"))
    rng = np.random.default_rng(0)
    drawn = {name: [] for name in ("positive", "both")}
    for _ in range(400):
        for name, sampler in (("positive", positive), ("both", both)):
            values, keep = sampler.constants(rng, kinds, existing)
            drawn[name].extend(values[keep])
    positive_values, both_values = np.array(drawn["positive"]), np.array(drawn["both"])
    assert positive_values.min() >= 1.0 and positive_values.max() <= 5.0
    assert np.all((np.abs(both_values) >= 1.0) & (np.abs(both_values) <= 5.0))
    assert 0.4 < np.mean(both_values < 0) < 0.6
    with pytest.raises(ValueError, match="Unknown constant_signs"):
        BatchConfig(constant_signs="negative")
