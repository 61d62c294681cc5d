"""The device generator against the host's: values, targets, distributions, resumption.

The distributions are compared with two-sample tests (Kolmogorov-Smirnov, chi-square)
on 10,000 draws with fixed seeds, so every run sees the same p-values.
"""

import glob
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from nesymres_sklearn.expression.operators import OPERATORS
from nesymres_sklearn.expression.placeholders import EXISTING, remove_placeholders
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.network.encoding import half_bits, point_columns
from nesymres_sklearn.network.model import NeSymReSModel, config_for_size
from pretraining.bank import SkeletonBank, build_bank
from pretraining.bank_pack import unpack_bank
from pretraining.data import BatchConfig, EquationSampler, batch_rng, points_from_codes
from pretraining.device_data import TORCH_OPERATORS, DeviceBatchStream, DeviceSampler, batch_generator, half_codes
from pretraining.generator import GeneratorConfig

PACK = sorted(glob.glob(str(Path(__file__).resolve().parent.parent / "pretraining" / "banks" / "bank-1m-*.npz")))
N_DRAWS = 10_000
#: Smallest p-value accepted: the same distributions pass, with fixed seeds, every time.
ALPHA = 1e-3


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    """The first 3,000 skeletons of the bank that travels with the checkout."""
    folder = tmp_path_factory.mktemp("bank") / "bank"
    unpack_bank(PACK, folder)
    return SkeletonBank(folder, limit=3000)


CONFIG = BatchConfig(batch_size=100, min_points=50, max_points=200, frequency_power=0.75)


def _draws(sampler, n: int, seed: int = 0):
    """``n`` skeletons, their constants (and kept placeholders) and points, on the CPU."""
    generator = torch.Generator().manual_seed(seed)
    skeletons = sampler.draw_skeletons(n, generator)
    constants, keep = sampler.draw_constants(skeletons, generator)
    X = sampler.draw_points(skeletons, sampler.draw_supports(n, generator), 40, generator)
    return skeletons, constants, keep, X


def test_every_operator_of_the_table_has_a_torch_function():
    assert set(TORCH_OPERATORS) == set(OPERATORS)


def test_half_codes_are_the_hosts():
    values = torch.tensor([0.0, -0.0, 1e-8, -1e-8, 3.14159, -65519.0, 1e6, -1e6, float("inf"), -float("inf"), 1e-5])
    noise = torch.randn(1000, generator=torch.Generator().manual_seed(0)) * 300
    values = torch.cat([values, torch.tensor([float("nan")]), noise])
    assert np.array_equal(half_codes(values).numpy(), half_bits(values.numpy()).view(np.int16))


def test_skeletons_evaluate_as_the_host_program(bank):
    """float64: the host's values but for sines of huge arguments (different libm: with
    NumPy 2.4, 16 of 101,097 values differ, 0.99984); float32: the host's values to
    float32 rounding, as the encoder reads them (half codes)."""
    for dtype, close, codes_equal in ((torch.float64, 0.9995, 0.9995), (torch.float32, 0.975, 0.99)):
        sampler = DeviceSampler(bank, CONFIG, dtype=dtype)
        skeletons, constants, _, X = _draws(sampler, len(bank))
        values = sampler.evaluate(sampler.bank.programs(skeletons), constants, X).double().numpy()
        agree, same_codes, kept = 0, 0, 0
        for row, index in enumerate(skeletons.tolist()):
            tokens, kinds = bank[index]
            host = PrefixProgram(tokens)(X[row].double().numpy(), constants[row, : len(kinds)].double().numpy())
            keep = np.isfinite(host) & (np.abs(host) <= 1000)
            agree += np.isclose(values[row][keep], host[keep], rtol=1e-9 if dtype == torch.float64 else 1e-5).sum()
            same_codes += (np.abs(half_bits(values[row][keep]).astype(int) - half_bits(host[keep])) <= 1).sum()
            kept += keep.sum()
        assert agree >= close * kept and same_codes >= codes_equal * kept, (dtype, agree / kept, same_codes / kept)


def test_targets_remove_the_placeholders_as_the_host_does(bank):
    sampler = DeviceSampler(bank, CONFIG)
    skeletons, _, keep, _ = _draws(sampler, 2000, seed=1)
    ids, lengths = sampler.targets(sampler.bank.table(skeletons), keep)
    for row, index in enumerate(skeletons.tolist()):
        tokens, kinds = bank[index]
        expected = remove_placeholders(tokens, kinds, keep[row, : len(kinds)].tolist())
        assert bank.vocab.decode(ids[row, : lengths[row]].tolist()) == expected
        assert (ids[row, lengths[row] :] == -1).all()
    assert torch.equal(sampler.target_lengths(skeletons, keep), lengths)


def test_constants_supports_and_point_counts_have_the_hosts_distributions(bank):
    config = BatchConfig(constant_signs="both")
    host, device = EquationSampler(bank, config), DeviceSampler(bank, config)
    index = next(i for i in range(len(bank)) if len(bank.kinds(i)) >= 6)
    kinds = bank.kinds(index)
    existing = np.array([kind == EXISTING for kind in kinds])
    rng = np.random.default_rng(0)
    host_constants = [host.constants(rng, kinds, existing) for _ in range(N_DRAWS)]
    host_values = np.array([values for values, _ in host_constants])
    host_keep = np.array([keep for _, keep in host_constants])
    host_supports = np.array([host.support(rng) for _ in range(N_DRAWS)])
    host_counts = np.array([host.points_count(rng) for _ in range(N_DRAWS)])
    generator = torch.Generator().manual_seed(0)
    values, keep = device.draw_constants(torch.full((N_DRAWS,), index), generator)
    values, keep = values[:, : len(kinds)].double().numpy(), keep[:, : len(kinds)].numpy()
    supports = device.draw_supports(N_DRAWS, generator).double().numpy()
    counts = np.array([device.draw_points_count(generator) for _ in range(N_DRAWS)])

    def chi2(a, b, bins):
        table = np.array([np.histogram(np.asarray(a, float), bins)[0], np.histogram(np.asarray(b, float), bins)[0]])
        return stats.chi2_contingency(table[:, table.sum(0) > 0]).pvalue

    sampled = ~existing
    assert chi2(host_keep[:, sampled].sum(1), keep[:, sampled].sum(1), np.arange(-0.5, 4)) > ALPHA
    for column in np.flatnonzero(sampled):  # each placeholder as often, with the same values
        assert chi2(host_keep[:, column], keep[:, column], [-0.5, 0.5, 1.5]) > ALPHA
        assert stats.ks_2samp(host_values[host_keep[:, column], column], values[keep[:, column], column]).pvalue > ALPHA
    for bound in range(2):
        for variable in range(bank.n_variables):
            assert stats.ks_2samp(host_supports[:, bound, variable], supports[:, bound, variable]).pvalue > ALPHA
    assert chi2(host_counts, counts, np.arange(49.5, 201, 10)) > ALPHA


def test_batches_have_the_hosts_distributions(bank):
    """10,000 equations from each: skeletons (target lengths, first tokens, variables),
    points kept per batch, and the values the encoder reads (x_1 and y)."""
    config = BatchConfig(batch_size=250, min_points=50, max_points=200, frequency_power=0.75)
    host, device = EquationSampler(bank, config), DeviceSampler(bank, config)
    n_batches = N_DRAWS // config.batch_size
    host_batches = [host.batch(batch_rng(0, 0, i)) for i in range(n_batches)]
    device_batches = [device.batch(batch_generator(0, 0, i, "cpu")) for i in range(n_batches)]

    def summary(batches):
        targets = [row[1 : row.index(bank.vocab.eos_id)] for b in batches for row in b["targets"].tolist()]
        # One point per equation: the points of an equation are not independent.
        first = np.concatenate([b["codes"][:, 0].numpy().view(np.float16).astype(np.float64) for b in batches])
        return (
            np.array([len(t) for t in targets]),
            np.array([t[0] for t in targets]),
            np.array([len({i for i in t if bank.vocab.tokens[i].startswith("x_")}) for t in targets]),
            np.array([b["codes"].shape[1] for b in batches]),
            first,
        )

    host_stats, device_stats = summary(host_batches), summary(device_batches)

    def chi2(a, b):
        bins = np.arange(min(a.min(), b.min()) - 0.5, max(a.max(), b.max()) + 1.5)
        table = np.array([np.histogram(a, bins)[0], np.histogram(b, bins)[0]])
        return stats.chi2_contingency(table[:, table.sum(0) > 0]).pvalue

    for name, a, b in zip(("length", "first token", "variables"), host_stats[:3], device_stats[:3]):
        assert chi2(a, b) > ALPHA, name
    assert stats.ks_2samp(host_stats[3], device_stats[3]).pvalue > ALPHA
    for column in (0, -1):  # x_1, y
        assert stats.ks_2samp(host_stats[4][:, column], device_stats[4][:, column]).pvalue > ALPHA


def test_batches_are_laid_out_as_the_hosts(bank):
    sampler = DeviceSampler(bank, CONFIG)
    batch = sampler.batch(batch_generator(3, 0, 0, "cpu"))
    codes, targets = batch["codes"], batch["targets"]
    assert codes.dtype == torch.int16 and targets.dtype == torch.int64
    assert codes.shape[0] == targets.shape[0] == CONFIG.batch_size and codes.shape[2] == 4
    values = codes.numpy().view(np.float16).astype(np.float64)
    assert np.isfinite(values).all() and (np.abs(values[..., -1]) <= 1000).all()
    assert (np.abs(values[..., :3]) <= 10).all()
    vocab = bank.vocab
    for row, ids in enumerate(targets.tolist()):
        assert ids[0] == vocab.sos_id
        end = ids.index(vocab.eos_id)
        assert set(ids[end + 1 :]) <= {vocab.pad_id} and len(ids[: end + 1]) <= 60
        used = {int(t[2:]) - 1 for t in vocab.decode(ids[1:end]) if t.startswith("x_")}
        for column in set(range(3)) - used:  # +0, as the host writes absent variables
            assert (codes[row, :, column] == 0).all()
    X, y = values[..., :3], values[..., -1]
    host_codes = torch.from_numpy(half_bits(point_columns(X, y, 3)).view(np.int16))
    assert torch.equal(points_from_codes(codes), points_from_codes(host_codes))


def test_a_resumed_stream_continues_bit_for_bit(bank):
    sampler = DeviceSampler(bank, CONFIG)
    whole = list(DeviceBatchStream(sampler, seed=5, stream=1, start=0, stop=6))
    fresh = DeviceSampler(bank, CONFIG)  # a new process: nothing carried over but the position
    resumed = list(DeviceBatchStream(fresh, seed=5, stream=1, start=3, stop=6))
    for a, b in zip(whole[3:], resumed):
        assert torch.equal(a["codes"], b["codes"]) and torch.equal(a["targets"], b["targets"])
    assert not torch.equal(whole[0]["targets"][:, :2], whole[1]["targets"][:, :2])


@pytest.mark.slow
@pytest.mark.parametrize("n_variables, max_operators", [(6, 5), (10, 9)])
def test_more_variables_from_bank_to_batches(tmp_path, n_variables, max_operators):
    """A bank of 6 or 10 variables, its host and device batches, and a model that reads them."""
    config = GeneratorConfig(n_variables=n_variables, max_operators=max_operators, simplification="automatic")
    build_bank(tmp_path, n_skeletons=60, seed=0, config=config, n_jobs=1, chunk_size=30, chunks_per_shard=2)
    bank = SkeletonBank(tmp_path)
    assert bank.n_variables == n_variables
    batch_config = BatchConfig(batch_size=16, min_points=30, max_points=60)
    used = set()
    for batch in (
        EquationSampler(bank, batch_config).batch(batch_rng(0, 0, 0)),
        DeviceSampler(bank, batch_config).batch(batch_generator(0, 0, 0, "cpu")),
    ):
        assert batch["codes"].shape[2] == n_variables + 1
        used |= {t for row in batch["targets"].tolist() for t in bank.vocab.decode(row) if t.startswith("x_")}
    assert max(int(t[2:]) for t in used) > 3
    model = NeSymReSModel(config_for_size("tiny", n_variables))
    _, loss = model(points_from_codes(batch["codes"]), batch["targets"][:, :-1], batch["targets"][:, 1:])
    assert torch.isfinite(loss)


def test_a_model_of_more_variables_than_the_bank_gets_its_own_token_ids(bank):
    """Targets of a 3-variable bank for a model of 5: the model's ids (x_4, x_5 shift the
    tokens after the variables), the same skeletons as the bank's own batches decode to."""
    from pretraining.data import model_vocabulary

    vocab = NeSymReSModel(config_for_size("tiny", 5)).config.vocab
    assert model_vocabulary(bank, 5).tokens == vocab.tokens and model_vocabulary(bank, 3) is bank.vocab
    rng = np.random.default_rng(0)
    host = [EquationSampler(bank, CONFIG, n).equation(np.random.default_rng(7), 100)[2] for n in (3, 5)]
    assert host[0] == host[1]  # the same first draw: token strings, however the ids are written
    host_ids = EquationSampler(bank, CONFIG, 5).batch(rng)["targets"]
    device_ids = DeviceSampler(bank, CONFIG, 5).batch(batch_generator(3, 0, 0, "cpu"))["targets"]
    for targets in (host_ids.tolist(), device_ids.tolist()):
        decoded = [vocab.decode(ids[1 : ids.index(vocab.eos_id)]) for ids in targets]
        assert all(ids[0] == vocab.sos_id for ids in targets)
        assert {t for tokens in decoded for t in tokens if t.startswith("x_")} <= {"x_1", "x_2", "x_3"}
        assert all(PrefixProgram(tokens) for tokens in decoded)  # each a well-formed prefix expression
