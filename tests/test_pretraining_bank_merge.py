"""Merging banks: one vocabulary, no held-out skeleton in training, each bank its share of the draws."""

import json

import numpy as np
import pytest

from pretraining.bank import SkeletonBank, build_bank
from pretraining.bank_merge import COUNT_RESOLUTION, count_factors, merge_banks
from pretraining.bank_pack import pack_bank, unpack_bank
from pretraining.generator import GeneratorConfig

POWER = 0.75


@pytest.fixture(scope="module")
def banks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("banks")
    narrow, wide = folder / "narrow", folder / "wide"
    for path, n_variables, seed in ((narrow, 1, 3), (wide, 2, 4)):
        config = GeneratorConfig(n_variables=n_variables, simplification="automatic")
        build_bank(
            path, n_skeletons=60, n_heldout=8, seed=seed, n_jobs=1, chunk_size=20, chunks_per_shard=2, config=config
        )
    return narrow, wide


def skeletons(bank: SkeletonBank) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(tuple(bank.tokens(i)), tuple(bank.kinds(i))) for i in range(len(bank))]


def test_the_merged_bank_holds_every_training_skeleton_but_the_held_out_ones(banks, tmp_path):
    merge_banks(tmp_path / "merged", list(banks), [0.3, 0.7], POWER)
    train, heldout = SkeletonBank(tmp_path / "merged"), SkeletonBank(tmp_path / "merged", "heldout")
    sources = [SkeletonBank(bank) for bank in banks]
    held = {tokens for bank in banks for tokens, _ in skeletons(SkeletonBank(bank, "heldout"))}
    assert train.vocab.tokens == sources[1].vocab.tokens  # the widest bank's
    expected = {tokens for source in sources for tokens, _ in skeletons(source)} - held
    merged = [tokens for tokens, _ in skeletons(train)]
    assert len(merged) == len(set(merged)) and set(merged) == expected
    assert {tokens for tokens, _ in skeletons(heldout)} <= held and len(heldout) > 0
    assert len(set(heldout.image_keys.tolist())) == len(heldout)


def test_each_bank_gets_its_share_of_the_tempered_draws(banks, tmp_path):
    shares = [0.3, 0.7]
    metadata = merge_banks(tmp_path / "merged", list(banks), shares, POWER)
    factors = [entry["count_factor"] for entry in metadata["settings"]["merged"]]
    assert min(factors) == COUNT_RESOLUTION
    train = SkeletonBank(tmp_path / "merged")
    counts = dict(zip((tokens for tokens, _ in skeletons(train)), train.counts.tolist()))
    sources = [SkeletonBank(bank) for bank in banks]
    originals = [dict(zip((tokens for tokens, _ in skeletons(source)), source.counts.tolist())) for source in sources]
    for tokens, count in counts.items():  # a skeleton of both banks sums their scaled counts
        assert count == sum(factor * original.get(tokens, 0) for factor, original in zip(factors, originals))
    weights = [sum(count**POWER for count in source.counts.astype(float)) for source in sources]
    scaled = [factor**POWER * weight for factor, weight in zip(factors, weights)]
    assert [value / sum(scaled) for value in scaled] == pytest.approx(shares, rel=0.01)


def test_count_factors_give_the_shares_for_any_power():
    for power in (0.5, 0.75, 1.0):
        weights, shares = [2.0e5, 3.0e3, 10.0], [0.5, 0.25, 0.25]
        factors = count_factors(weights, shares, power)
        drawn = np.array([factor**power * weight for factor, weight in zip(factors, weights)])
        np.testing.assert_allclose(drawn / drawn.sum(), shares, rtol=0.01)


def test_the_merged_bank_packs_and_unpacks_to_the_same_skeletons(banks, tmp_path):
    merge_banks(tmp_path / "merged", list(banks), [1, 1], POWER)
    files = pack_bank(tmp_path / "merged", tmp_path / "pack")
    unpack_bank(files, tmp_path / "again")
    for split in ("train", "heldout"):
        one, other = SkeletonBank(tmp_path / "merged", split), SkeletonBank(tmp_path / "again", split)
        assert skeletons(one) == skeletons(other)
    np.testing.assert_array_equal(SkeletonBank(tmp_path / "merged").counts, SkeletonBank(tmp_path / "again").counts)
    assert json.loads((tmp_path / "again" / "metadata.json").read_text())["complete"]


def test_bad_merges_are_refused(banks, tmp_path):
    with pytest.raises(ValueError, match="one positive share per bank"):
        merge_banks(tmp_path / "a", list(banks), [1.0], POWER)
    with pytest.raises(ValueError, match="one positive share per bank"):
        merge_banks(tmp_path / "a", list(banks), [1.0, 0.0], POWER)
    with pytest.raises(ValueError, match="frequency_power must be positive"):
        merge_banks(tmp_path / "a", list(banks), [1.0, 1.0], 0.0)
    merge_banks(tmp_path / "b", list(banks), [1.0, 1.0], POWER)
    with pytest.raises(ValueError, match="already holds a bank"):
        merge_banks(tmp_path / "b", list(banks), [1.0, 1.0], POWER)
