"""Skeleton bank: shards, de-duplication, metadata, resume, held-out disjointness; the streamed build against
the per-shard algorithm it replaced; packs."""

import json
import shutil
from collections import Counter

import numpy as np
import pytest
import torch

from nesymres_sklearn.expression.placeholders import neutral_constants
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.network.vocabulary import Vocabulary
from pretraining import bank_pack
from pretraining.bank import KIND_CODES, SPLITS, SkeletonBank, build_bank, image_key, image_points, main
from pretraining.bank_pack import pack_bank, unpack_bank
from pretraining.data import BatchConfig, EquationSampler, batch_rng
from pretraining.generator import GeneratorConfig, generate_skeletons, satisfies_variable_order

# A generous time limit: a wall-clock timeout would make the bank load-dependent. SymPy's
# construction rules only: full simplification took 11 s of 12 for this bank, and is tested
# in test_pretraining_generator.py.
SETTINGS = dict(
    n_skeletons=120,
    n_heldout=30,
    seed=3,
    n_jobs=1,  # in process: no worker start-up (the FAST builds below cover the workers)
    chunk_size=20,
    chunks_per_shard=3,
    config=GeneratorConfig(simplification="automatic", simplify_timeout=60),
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


# --- The streamed build gives the bank of the previous per-shard algorithm ---------------------------------------

FAST = dict(
    seed=0, chunk_size=25, chunks_per_shard=4, config=GeneratorConfig(simplification="automatic", simplify_timeout=60)
)


def _reference_bank(sizes, n_heldout, seed, chunk_size, chunks_per_shard, config):
    """The previous algorithm, serially: each shard's chunks generated, then de-duplicated one tree at a time.

    Builds the training split to ``sizes[0]`` and the held-out split, then grows the training split to each
    further size. Returns ``{split: [(chunks, entries)]}`` (entries: token ids, kind codes, image key), the
    training counts, the metadata counts and how many new skeletons each split's last shards left out.
    """
    vocab, points = Vocabulary.default(config.n_variables), image_points(seed, config.n_variables)
    shards = {"train": [], "heldout": []}
    counts = {
        split: dict(attempts=0, accepted=0, duplicates=0, numeric_duplicates=0, rejected=Counter()) for split in SPLITS
    }
    tree_counts, left_out = [], Counter()
    for split, wanted in [("train", sizes[0]), ("heldout", n_heldout)] + [("train", n) for n in sizes[1:]]:
        kept = {s: [entry for _, entries in shards[s] for entry in entries] for s in SPLITS}
        seen = {ids: i for i, (ids, _, _) in enumerate(kept["train"])} | {ids: -1 for ids, _, _ in kept["heldout"]}
        banned = {key for s in SPLITS if "heldout" in (s, split) for _, _, key in kept[s]}
        n_done, count = len(kept[split]), counts[split]
        while n_done < wanted:
            first = len(shards[split]) * chunks_per_shard
            entries = []
            for chunk in range(first, first + chunks_per_shard):
                skeletons, rejected = generate_skeletons(chunk_size, [seed, SPLITS[split], chunk], config)
                count["rejected"].update(rejected)
                for skeleton in skeletons:
                    key = image_key(skeleton.attached, skeleton.kinds, points)
                    if key is None:
                        count["rejected"]["no_valid_points"] += 1
                        continue
                    ids = np.asarray(vocab.encode(skeleton.attached), dtype=np.int16).tobytes()
                    if ids in seen:
                        count["duplicates"] += 1
                        if split == "train" and seen[ids] >= 0:
                            tree_counts[seen[ids]] += 1
                    elif key in banned:
                        count["numeric_duplicates"] += 1
                    elif len(entries) < wanted - n_done:
                        seen[ids] = n_done + len(entries) if split == "train" else -1
                        if split == "heldout":
                            banned.add(key)
                        else:
                            tree_counts.append(1)
                        entries.append((ids, bytes(KIND_CODES[k] for k in skeleton.kinds), key))
                    else:
                        left_out[split] += 1
            shards[split].append(([first, first + chunks_per_shard], entries))
            count["attempts"] += chunk_size * chunks_per_shard
            count["accepted"] += len(entries)
            n_done += len(entries)
    return shards, tree_counts, counts, left_out


def _assert_same_as_reference(folder, reference):
    shards, tree_counts, counts, _ = reference
    metadata = json.loads((folder / "metadata.json").read_text())
    for split in SPLITS:
        assert [(s["chunks"], s["n"]) for s in metadata["shards"][split]] == [(c, len(e)) for c, e in shards[split]]
        for shard, (_, entries) in zip(metadata["shards"][split], shards[split]):
            with np.load(folder / shard["file"]) as arrays:
                assert arrays["tokens"].dtype == np.int16 and arrays["kinds"].dtype == np.int8
                assert arrays["tokens"].tobytes() == b"".join(ids for ids, _, _ in entries)
                assert arrays["kinds"].tobytes() == b"".join(kinds for _, kinds, _ in entries)
                assert arrays["offsets"].tolist() == np.cumsum([0] + [len(ids) // 2 for ids, _, _ in entries]).tolist()
                assert arrays["kind_offsets"].tolist() == np.cumsum([0] + [len(k) for _, k, _ in entries]).tolist()
                assert arrays["image_keys"].dtype == np.uint64
                assert arrays["image_keys"].tolist() == [key for _, _, key in entries]
        stored = {key: value for key, value in metadata["counts"][split].items() if "rate" not in key}
        expected = {**counts[split], "rejected": {r: n for r, n in counts[split]["rejected"].items() if n}}
        assert {**stored, "rejected": {r: n for r, n in stored["rejected"].items() if n}} == expected
    assert np.load(folder / metadata["counts_files"]["train"]).tolist() == tree_counts
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".npy") == [metadata["counts_files"]["train"]]


@pytest.mark.slow
@pytest.mark.parametrize("n_jobs", [2, 1])
def test_streamed_build_gives_the_bank_of_the_per_shard_algorithm(tmp_path, n_jobs):
    build_bank(tmp_path, n_skeletons=300, n_heldout=100, n_jobs=n_jobs, **FAST)
    reference = _reference_bank([300], 100, **FAST)
    # The banned-image path, repeated skeletons and last shards cut short are exercised.
    assert reference[2]["heldout"]["numeric_duplicates"] > 0 and max(reference[1]) > 2
    assert reference[3]["train"] > 0 and reference[3]["heldout"] > 0
    _assert_same_as_reference(tmp_path, reference)


@pytest.mark.slow
def test_build_interrupted_in_the_heldout_split_resumes_to_the_per_shard_bank(tmp_path):
    class Interrupt(Exception):
        pass

    def stop_in_heldout(split, done, wanted):
        if split == "heldout":
            raise Interrupt()

    with pytest.raises(Interrupt):
        build_bank(tmp_path, n_skeletons=300, n_heldout=100, n_jobs=2, progress=stop_in_heldout, **FAST)
    assert len(json.loads((tmp_path / "metadata.json").read_text())["shards"]["heldout"]) == 1
    build_bank(tmp_path, n_skeletons=300, n_heldout=100, n_jobs=2, **FAST)
    _assert_same_as_reference(tmp_path, _reference_bank([300], 100, **FAST))


@pytest.mark.slow
def test_grown_bank_is_that_of_the_per_shard_algorithm(tmp_path):
    build_bank(tmp_path, n_skeletons=130, n_heldout=100, n_jobs=2, **FAST)
    build_bank(tmp_path, n_skeletons=400, n_heldout=100, n_jobs=2, **FAST)
    reference = _reference_bank([130, 400], 100, **FAST)
    assert reference[2]["train"]["numeric_duplicates"] > 0  # growth keeps held-out images out
    _assert_same_as_reference(tmp_path, reference)


# --- Packs ---------------------------------------------------------------------------------------------------------

PACK_LIMIT = 8000  # bytes: forces a small bank into several files


@pytest.fixture(scope="module")
def fast_bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fast-bank")
    build_bank(folder, n_skeletons=300, n_heldout=100, n_jobs=2, **FAST)
    return folder


def _assert_same_bank(a, b, image_keys=True):
    """Same metadata (but the build time) and arrays; without ``image_keys``, training shards of ``b`` may lack them."""
    metadata, other = (json.loads((folder / "metadata.json").read_text()) for folder in (a, b))
    assert {**metadata, "seconds": 0} == {**other, "seconds": 0}
    for split in SPLITS:
        for shard in metadata["shards"][split]:
            with np.load(a / shard["file"]) as x, np.load(b / shard["file"]) as y:
                dropped = not image_keys and split == "train" and "image_keys" not in y.files
                assert sorted(y.files) == sorted(set(x.files) - ({"image_keys"} if dropped else set()))
                for name in y.files:
                    assert x[name].dtype == y[name].dtype and np.array_equal(x[name], y[name]), (shard, name)
    counts = metadata["counts_files"]["train"]
    assert np.array_equal(np.load(a / counts), np.load(b / counts))


@pytest.mark.slow
def test_pack_round_trip_restores_the_bank(fast_bank, tmp_path):
    files = pack_bank(fast_bank, tmp_path / "packs" / "bank", image_keys=True, max_bytes=PACK_LIMIT)
    assert len(files) >= 2 and all(path.stat().st_size <= PACK_LIMIT for path in files)
    assert [path.name for path in files] == [f"bank-{i:02d}.npz" for i in range(len(files))]
    unpack_bank(files, tmp_path / "bank")
    _assert_same_bank(fast_bank, tmp_path / "bank")
    assert (fast_bank / "metadata.json").read_text() == (tmp_path / "bank" / "metadata.json").read_text()
    for split in SPLITS:
        a, b = SkeletonBank(fast_bank, split), SkeletonBank(tmp_path / "bank", split)
        assert [a[i] for i in range(len(a))] == [b[i] for i in range(len(b))]
        assert a.image_keys.tolist() == b.image_keys.tolist()
        assert (a.counts is None and b.counts is None) or a.counts.tolist() == b.counts.tolist()
    config = BatchConfig(batch_size=16, min_points=20, max_points=40)
    batches = [
        EquationSampler(SkeletonBank(f), config).batch(batch_rng(0, 0, 3)) for f in (fast_bank, tmp_path / "bank")
    ]
    assert batches[0].keys() == batches[1].keys()
    assert all(torch.equal(batches[0][key], batches[1][key]) for key in batches[0])
    # A pack is a function of its bank; packing again replaces the files.
    again = pack_bank(fast_bank, tmp_path / "packs" / "bank", image_keys=True, max_bytes=PACK_LIMIT)
    assert [path.read_bytes() for path in again] == [path.read_bytes() for path in files]


def test_pack_without_training_image_keys_still_grows_like_the_bank(fast_bank, tmp_path):
    with_keys = pack_bank(fast_bank, tmp_path / "keys", image_keys=True)
    files = pack_bank(fast_bank, tmp_path / "bank")
    assert len(files) == 1 and files[0].stat().st_size < with_keys[0].stat().st_size
    unpack_bank(files, tmp_path / "unpacked")
    _assert_same_bank(fast_bank, tmp_path / "unpacked", image_keys=False)
    with pytest.raises(ValueError, match="without its image keys; unpack a pack made with .*--image-keys"):
        _ = SkeletonBank(tmp_path / "unpacked").image_keys
    assert SkeletonBank(tmp_path / "unpacked", "heldout").has_image_keys
    shutil.copytree(fast_bank, tmp_path / "original")
    for folder in ("original", "unpacked"):
        build_bank(tmp_path / folder, n_skeletons=450, n_heldout=100, n_jobs=2, **FAST)
    grown = json.loads((tmp_path / "original" / "metadata.json").read_text())
    assert len(grown["shards"]["train"]) > len(json.loads((fast_bank / "metadata.json").read_text())["shards"]["train"])
    _assert_same_bank(tmp_path / "original", tmp_path / "unpacked", image_keys=False)


def test_damaged_missing_or_mixed_pack_files_are_named(fast_bank, tmp_path):
    files = pack_bank(fast_bank, tmp_path / "bank", max_bytes=PACK_LIMIT)
    with pytest.raises(ValueError, match=f"missing: {files[1].name}. Pass all of them"):
        unpack_bank(files[:1] + files[2:], tmp_path / "out")
    other = pack_bank(fast_bank, tmp_path / "other", image_keys=True, max_bytes=PACK_LIMIT)
    with pytest.raises(ValueError, match="belong to different packs"):
        unpack_bank(files[:1] + other[1:], tmp_path / "out")
    data = bytearray(files[0].read_bytes())
    data[len(data) // 3 : len(data) // 3 + 8] = bytes(8)
    files[0].write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"{files[0]} is damaged .*pack the bank again"):
        unpack_bank(files, tmp_path / "out")
    files[0].write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(ValueError, match=f"{files[0]} is not a readable bank pack file"):
        unpack_bank(files, tmp_path / "out")
    assert not (tmp_path / "out" / "metadata.json").exists()
    with pytest.raises(ValueError, match="already holds a bank"):
        unpack_bank(other, fast_bank)


def test_command_line_builds_packs_and_unpacks(tmp_path, capsys):
    main(
        ["--out", str(tmp_path / "bank"), "--n-skeletons", "40", "--n-heldout", "10", "--n-jobs", "1"]
        + ["--simplification", "automatic", "--chunk-size", "25", "--chunks-per-shard", "2"]
    )
    bank_pack.main(["pack", str(tmp_path / "bank"), str(tmp_path / "pack")])
    bank_pack.main(["unpack", str(tmp_path / "pack-00.npz"), "--out", str(tmp_path / "unpacked")])
    assert "1 files" in capsys.readouterr().out
    _assert_same_bank(tmp_path / "bank", tmp_path / "unpacked", image_keys=False)


@pytest.mark.slow  # about 4 s: a fresh interpreter and its joblib workers import the generator; in process, the
# workers' build is test_streamed_build_gives_the_bank_of_the_per_shard_algorithm[2]
def test_the_command_builds_with_several_workers(tmp_path):
    """``python -m pretraining.bank`` runs as ``__main__``: its chunk tasks must still reach
    the joblib workers (the in-process tests import the module instead)."""
    import subprocess
    import sys

    folder = tmp_path / "bank"
    command = [sys.executable, "-m", "pretraining.bank", "--out", str(folder), "--n-skeletons", "30", "--n-heldout",
               "5", "--n-jobs", "2", "--chunk-size", "20", "--chunks-per-shard", "2", "--seed", "3",
               "--simplification", "automatic"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(SkeletonBank(folder)) == 30 and len(SkeletonBank(folder, "heldout")) == 5


def test_the_command_line_draws_a_small_shard_for_a_small_request(tmp_path):
    folder = tmp_path / "bank"
    main(["--out", str(folder), "--n-skeletons", "40", "--n-jobs", "1", "--simplification", "automatic"])
    metadata = json.loads((folder / "metadata.json").read_text())
    assert len(SkeletonBank(folder)) == 40
    assert metadata["settings"]["chunks_per_shard"] == 1  # 100 trees for 40 skeletons, not 10,000
    assert metadata["counts"]["train"]["attempts"] <= 300
    main(["--out", str(folder), "--n-skeletons", "60", "--n-jobs", "1", "--simplification", "automatic"])
    assert len(SkeletonBank(folder)) == 60  # grown with the bank's own shard size
