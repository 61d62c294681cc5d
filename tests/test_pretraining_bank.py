"""Skeleton bank: shards, de-duplication, metadata, resume, held-out disjointness."""

import json

import numpy as np
import pytest

from nesymres_sklearn.expression.placeholders import neutral_constants
from nesymres_sklearn.expression.program import PrefixProgram
from pretraining.bank import SkeletonBank, build_bank, image_points
from pretraining.generator import GeneratorConfig, satisfies_variable_order

# A generous time limit: a wall-clock timeout would make the bank load-dependent.
SETTINGS = dict(
    n_skeletons=120,
    n_heldout=30,
    seed=3,
    n_jobs=2,
    chunk_size=20,
    chunks_per_shard=3,
    config=GeneratorConfig(simplify_timeout=60),
)


@pytest.fixture(scope="module")
def bank_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bank")
    build_bank(folder, **SETTINGS)
    return folder


def test_metadata_counts_and_shards(bank_folder):
    metadata = json.loads((bank_folder / "metadata.json").read_text())
    assert metadata["complete"]
    assert metadata["settings"]["seed"] == 3
    assert GeneratorConfig(**metadata["settings"]["generator"]) == SETTINGS["config"]
    train = metadata["counts"]["train"]
    assert train["accepted"] == 120 == sum(s["n"] for s in metadata["shards"]["train"])
    assert len(metadata["shards"]["train"]) >= 2
    assert set(train["rejection_rates"]) >= {"timeout", "no_variable", "unwritable", "exponent", "too_long"}
    assert 0 < train["acceptance_rate"] <= 1
    for shard in metadata["shards"]["train"]:
        with np.load(bank_folder / shard["file"], allow_pickle=False) as arrays:
            assert arrays["tokens"].dtype == np.int16
            assert arrays["offsets"][-1] == len(arrays["tokens"])


def test_bank_entries_are_unique_and_valid(bank_folder):
    bank = SkeletonBank(bank_folder)
    assert len(bank) == 120
    seen = {tuple(bank.tokens(i)) for i in range(len(bank))}
    assert len(seen) == len(bank)
    for i in range(len(bank)):
        tokens, kinds = bank[i]
        assert tokens.count("c") == len(kinds)
        assert satisfies_variable_order(tokens)


def _images(bank, points):
    return [PrefixProgram(t)(points, neutral_constants(k)) for t, k in (bank[i] for i in range(len(bank)))]


def test_heldout_is_numerically_distinct(bank_folder):
    train, heldout = SkeletonBank(bank_folder), SkeletonBank(bank_folder, "heldout")
    assert len(heldout) == 30
    points = image_points(SETTINGS["seed"], 3)
    train_images, heldout_images = _images(train, points), _images(heldout, points)
    train_tokens = {tuple(train.tokens(i)) for i in range(len(train))}
    for i, image in enumerate(heldout_images):
        assert tuple(heldout.tokens(i)) not in train_tokens
        for other in train_images:
            assert not np.allclose(image, other, rtol=1e-9, atol=0, equal_nan=True)


def test_interrupted_build_resumes_to_the_same_bank(bank_folder, tmp_path):
    class Interrupt(Exception):
        pass

    def stop_after_first(split, done, wanted):
        raise Interrupt()

    with pytest.raises(Interrupt):
        build_bank(tmp_path, progress=stop_after_first, **SETTINGS)
    partial = json.loads((tmp_path / "metadata.json").read_text())
    assert not partial["complete"]
    assert len(partial["shards"]["train"]) == 1 and partial["shards"]["heldout"] == []
    build_bank(tmp_path, **SETTINGS)
    for split in ("train", "heldout"):
        a, b = SkeletonBank(bank_folder, split), SkeletonBank(tmp_path, split)
        assert [a.tokens(i) for i in range(len(a))] == [b.tokens(i) for i in range(len(b))]
        assert [a.kinds(i) for i in range(len(a))] == [b.kinds(i) for i in range(len(b))]
    full = json.loads((bank_folder / "metadata.json").read_text())
    resumed = json.loads((tmp_path / "metadata.json").read_text())
    assert full["counts"] == resumed["counts"]


def test_other_settings_in_same_folder_raise(bank_folder):
    with pytest.raises(ValueError, match="other settings"):
        build_bank(bank_folder, **{**SETTINGS, "seed": 4})


def test_growing_keeps_the_smaller_bank_as_prefix_and_the_heldout_split(bank_folder, tmp_path):
    small = {**SETTINGS, "n_skeletons": 50}
    build_bank(tmp_path, **small)
    held_before = SkeletonBank(tmp_path, "heldout")
    build_bank(tmp_path, **{**small, "n_skeletons": 120})
    grown, reference = SkeletonBank(tmp_path), SkeletonBank(bank_folder)
    first = SkeletonBank(tmp_path, limit=50)
    assert len(grown) == 120 and len(first) == 50
    assert [first.tokens(i) for i in range(50)] == [grown.tokens(i) for i in range(50)]
    assert list(first.image_keys) == list(grown.image_keys[:50])
    # The first 50 are those of a bank built directly at full size.
    assert [grown.tokens(i) for i in range(50)] == [reference.tokens(i) for i in range(50)]
    held = SkeletonBank(tmp_path, "heldout")
    assert [held.tokens(i) for i in range(len(held))] == [held_before.tokens(i) for i in range(len(held_before))]
    assert not set(grown.image_keys.tolist()) & set(held.image_keys.tolist())
    grown_tokens = {tuple(grown.tokens(i)) for i in range(len(grown))}
    assert not grown_tokens & {tuple(held.tokens(i)) for i in range(len(held))}
    assert json.loads((tmp_path / "metadata.json").read_text())["n_skeletons"] == 120


def test_limit_beyond_the_bank_names_the_fix(bank_folder):
    with pytest.raises(ValueError, match="fewer than the 121 asked for; grow it"):
        SkeletonBank(bank_folder, limit=121)


def test_heldout_leaves_the_frequent_skeletons_to_training(bank_folder):
    train = {tuple(t) for t in (SkeletonBank(bank_folder).tokens(i) for i in range(120))}
    assert ("add", "mul", "c", "x_1", "c") in train


def test_counts_record_how_often_each_training_skeleton_was_generated(bank_folder):
    train = SkeletonBank(bank_folder)
    metadata = json.loads((bank_folder / "metadata.json").read_text())
    assert train.counts is not None and len(train.counts) == len(train) and train.counts.min() >= 1
    # Every duplicate of the training stream was counted on its skeleton.
    assert train.counts.sum() >= len(train) + 1
    assert SkeletonBank(bank_folder, "heldout").counts is None
    assert SkeletonBank(bank_folder, limit=50).counts.tolist() == train.counts[:50].tolist()
    assert metadata["counts_files"]["train"] in {p.name for p in bank_folder.iterdir()}
    # Short skeletons are generated more often than long ones.
    lengths = np.array([len(train.tokens(i)) for i in range(len(train))])
    short, long = train.counts[lengths <= np.median(lengths)], train.counts[lengths > np.median(lengths)]
    assert short.mean() > long.mean()
