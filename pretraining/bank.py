"""The skeleton bank: generated once, de-duplicated, stored as token arrays in shards.

Layout of a bank folder::

    metadata.json          settings, vocabulary, shard list, counts, rejection rates
    train-00000.npz ...    training skeletons
    heldout-00000.npz      held-out skeletons, numerically distinct from the training ones

Each shard is an ``.npz`` of plain arrays (no pickled objects): ``tokens`` (int16 ids of
the attached skeletons, concatenated), ``offsets`` (int64, ``n + 1``), ``kinds`` (int8
per placeholder: 0 multiplicative, 1 additive, 2 pre-existing), ``kind_offsets`` and
``image_keys`` (uint64 hash of the skeleton's values on the bank's 500 image points).
``train-counts-NNNNN.npy`` (named in the metadata) holds how many sampled trees gave
each training skeleton: the generator's frequencies, which the paper's training data
keeps (its 10M skeletons hold about 1.2M unique ones, the short ones most often).

The training split is built first, then the held-out split from skeletons that are new
symbolically and numerically; a training split grown later keeps only skeletons
numerically distinct from the held-out ones. (Building the held-out split first would
give it the most frequent skeletons, ``c*x_1 + c`` among them, and keep them out of
training.) Shard ``k`` of a split holds the new unique skeletons of generator chunks
``[k * chunks_per_shard, (k + 1) * chunks_per_shard)``, each chunk seeded from
``(seed, split, chunk)``. A bank is therefore a function of its settings (up to
simplifications that hit the wall-clock time limit, counted as ``timeout``): an
interrupted build resumes at the first missing shard and produces the same files, and
rerunning with a larger ``n_skeletons`` grows the training split, whose first ``n``
skeletons stay those of the smaller bank (``SkeletonBank(folder, limit=n)`` reads them).

Command line::

    python -m pretraining.bank --out bank --n-skeletons 100000 --n-heldout 1000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from nesymres_sklearn.expression.placeholders import ADDITIVE, EXISTING, MULTIPLICATIVE, neutral_constants
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.network.vocabulary import Vocabulary

from .generator import REJECTION_REASONS, SIMPLIFICATIONS, GeneratorConfig, generate_skeletons

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
KINDS = (MULTIPLICATIVE, ADDITIVE, EXISTING)
KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}
SPLITS = {"train": 0, "heldout": 1}
N_IMAGE_POINTS = 500
IMAGE_RANGE = (-10.0, 10.0)
IMAGE_SIGNIFICANT_DIGITS = 6
#: Extra rejection reasons of the bank (beyond the generator's).
BANK_REJECTIONS = ("no_valid_points",)


def image_points(seed: int, n_variables: int) -> np.ndarray:
    """The points, U(-10, 10), on which skeleton images are compared."""
    rng = np.random.default_rng([seed, 2])
    return rng.uniform(*IMAGE_RANGE, size=(N_IMAGE_POINTS, n_variables))


def image_key(tokens, kinds, points: np.ndarray) -> int | None:
    """Hash of a skeleton's values (placeholders neutral) rounded to 6 significant
    digits; ``None`` when no point gives a finite value."""
    values = PrefixProgram(tokens)(points, neutral_constants(kinds))
    finite = np.isfinite(values)
    if not finite.any():
        return None
    safe = np.where(finite & (values != 0), np.abs(values), 1.0)
    with np.errstate(all="ignore"):
        scale = 10.0 ** (IMAGE_SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(safe)))
        rounded = np.round(values * scale) / scale + 0.0
    rounded[finite & ~np.isfinite(rounded)] = 0.0  # below ~1e-300: zero
    rounded[~finite] = np.inf  # one code for every non-finite value
    digest = hashlib.blake2b(rounded.tobytes(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _generate_chunk(n_attempts: int, seed: list[int], config: GeneratorConfig, points: np.ndarray):
    skeletons, rejected = generate_skeletons(n_attempts, seed, config)
    out = []
    for skeleton in skeletons:
        key = image_key(skeleton.attached, skeleton.kinds, points)
        if key is None:
            rejected["no_valid_points"] += 1
        else:
            out.append((skeleton.attached, skeleton.kinds, key))
    return out, rejected


def _write_shard(path: Path, vocab: Vocabulary, entries: list) -> None:
    ids = [np.asarray(vocab.encode(tokens), dtype=np.int16) for tokens, _, _ in entries]
    kinds = [np.asarray([KIND_CODES[k] for k in kinds], dtype=np.int8) for _, kinds, _ in entries]
    arrays = dict(
        tokens=np.concatenate(ids) if ids else np.zeros(0, np.int16),
        offsets=np.concatenate([[0], np.cumsum([len(a) for a in ids])]).astype(np.int64),
        kinds=np.concatenate(kinds) if kinds else np.zeros(0, np.int8),
        kind_offsets=np.concatenate([[0], np.cumsum([len(a) for a in kinds])]).astype(np.int64),
        image_keys=np.asarray([key for _, _, key in entries], dtype=np.uint64),
    )
    temporary = path.with_name(path.name + ".tmp.npz")
    np.savez(temporary, **arrays)
    os.replace(temporary, path)


def _write_json(path: Path, data: dict) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2))
    os.replace(temporary, path)


class SkeletonBank:
    """Read access to one split of a bank, fully in memory.

    Parameters
    ----------
    folder : str or Path
        A bank folder written by :func:`build_bank` (possibly still growing).
    split : {"train", "heldout"}, default="train"
    limit : int, optional
        Read only the first ``limit`` skeletons (a smaller bank with the same held-out
        split); a bank with fewer raises ``ValueError``.
    """

    def __init__(self, folder, split: str = "train", limit: int | None = None):
        self.folder = Path(folder)
        self.metadata = json.loads((self.folder / "metadata.json").read_text())
        if split not in SPLITS:
            raise ValueError(f"Unknown split {split!r}; expected one of {list(SPLITS)}.")
        self.split = split
        self.vocab = Vocabulary(tuple(self.metadata["vocabulary"]))
        shards = self.metadata["shards"][split]
        available = sum(shard["n"] for shard in shards)
        if limit is not None and not 0 <= limit <= available:
            raise ValueError(
                f"The {split} split of {self.folder} holds {available} skeletons, "
                f"fewer than the {limit} asked for; grow it with pretraining.bank."
            )
        parts, n_read = [], 0
        for shard in shards:
            if limit is not None and n_read >= limit:
                break
            parts.append(np.load(self.folder / shard["file"]))
            n_read += shard["n"]
        self._tokens = np.concatenate([p["tokens"] for p in parts]) if parts else np.zeros(0, np.int16)
        self._kinds = np.concatenate([p["kinds"] for p in parts]) if parts else np.zeros(0, np.int8)
        self.image_keys = np.concatenate([p["image_keys"] for p in parts]) if parts else np.zeros(0, np.uint64)
        self._offsets = _join_offsets([p["offsets"] for p in parts])
        self._kind_offsets = _join_offsets([p["kind_offsets"] for p in parts])
        counts_file = self.metadata.get("counts_files", {}).get(split)
        #: Trees that gave each skeleton (None for banks built without counts).
        self.counts = np.load(self.folder / counts_file)[: len(self._offsets) - 1] if counts_file else None
        if limit is not None:
            if self.counts is not None:
                self.counts = self.counts[:limit]
            self._offsets = self._offsets[: limit + 1]
            self._kind_offsets = self._kind_offsets[: limit + 1]
            self.image_keys = self.image_keys[:limit]
        self._token_strings = np.array(self.vocab.tokens, dtype=object)

    @property
    def n_variables(self) -> int:
        return self.vocab.n_variables

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def ids(self, index: int) -> np.ndarray:
        """Token ids of the attached skeleton ``index``."""
        return self._tokens[self._offsets[index] : self._offsets[index + 1]]

    def tokens(self, index: int) -> list[str]:
        """Prefix tokens of the attached skeleton ``index``."""
        return self._token_strings[self.ids(index)].tolist()

    def kinds(self, index: int) -> list[str]:
        """Placeholder kinds (``"mul"``, ``"add"``, ``"existing"``) of skeleton ``index``."""
        codes = self._kinds[self._kind_offsets[index] : self._kind_offsets[index + 1]]
        return [KINDS[code] for code in codes]

    def __getitem__(self, index: int) -> tuple[list[str], list[str]]:
        return self.tokens(index), self.kinds(index)


def _join_offsets(offsets: list[np.ndarray]) -> np.ndarray:
    joined, base = [np.zeros(1, np.int64)], 0
    for part in offsets:
        joined.append(part[1:] + base)
        base += int(part[-1])
    return np.concatenate(joined)


def _settings(n_heldout, seed, config, chunk_size, chunks_per_shard) -> dict:
    return dict(
        n_heldout=n_heldout,
        seed=seed,
        generator=config.to_dict(),
        chunk_size=chunk_size,
        chunks_per_shard=chunks_per_shard,
        image_points=dict(n=N_IMAGE_POINTS, range=list(IMAGE_RANGE), significant_digits=IMAGE_SIGNIFICANT_DIGITS),
    )


def build_bank(
    folder,
    n_skeletons: int,
    n_heldout: int = 0,
    seed: int = 0,
    config: GeneratorConfig | None = None,
    n_jobs: int = -1,
    chunk_size: int = 100,
    chunks_per_shard: int = 100,
    progress=None,
) -> dict:
    """Build (or resume building) a skeleton bank; returns its metadata.

    Parameters
    ----------
    folder : str or Path
        Output folder; an existing bank with the same settings (all but
        ``n_skeletons``) is resumed, or grown when ``n_skeletons`` is larger.
    n_skeletons : int
        Number of unique training skeletons.
    n_heldout : int, default=0
        Number of held-out skeletons, unique and with an image on the bank's 500
        points different from every training skeleton's and from each other's.
    seed : int, default=0
    config : GeneratorConfig, optional
        Generator settings (default: the paper's).
    n_jobs : int, default=-1
        joblib workers (-1: all cores).
    chunk_size : int, default=100
        Trees sampled per task.
    chunks_per_shard : int, default=100
        Tasks per shard.
    progress : callable, optional
        Called with ``(split, n_done, n_wanted)`` after each shard.
    """
    config = config or GeneratorConfig()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    settings = _settings(n_heldout, seed, config, chunk_size, chunks_per_shard)
    vocab = Vocabulary.default(config.n_variables)
    metadata_path = folder / "metadata.json"
    if metadata_path.exists():
        metadata = json.loads(metadata_path.read_text())
        if metadata["settings"] != json.loads(json.dumps(settings)):
            raise ValueError(
                f"{folder} holds a bank with other settings; use a new folder. Existing: {metadata['settings']}"
            )
        logger.info("Resuming bank in %s", folder)
    else:
        metadata = dict(
            format_version=FORMAT_VERSION,
            settings=settings,
            vocabulary=list(vocab.tokens),
            n_skeletons=n_skeletons,
            shards={"train": [], "heldout": []},
            counts={
                split: dict(
                    attempts=0,
                    accepted=0,
                    duplicates=0,
                    numeric_duplicates=0,
                    rejected={r: 0 for r in REJECTION_REASONS + BANK_REJECTIONS},
                )
                for split in SPLITS
            },
            seconds=0.0,
            complete=False,
        )
        _write_json(metadata_path, metadata)
    metadata["n_skeletons"] = n_skeletons
    metadata["complete"] = False
    points = image_points(seed, config.n_variables)
    with Parallel(n_jobs=n_jobs) as parallel:
        for split, wanted in (("train", n_skeletons), ("heldout", n_heldout)):
            _build_split(folder, metadata, split, wanted, vocab, config, points, parallel, progress)
    metadata["complete"] = True
    _finish_rates(metadata)
    _write_json(metadata_path, metadata)
    return metadata


def _build_split(folder, metadata, split, wanted, vocab, config, points, parallel, progress):
    settings = metadata["settings"]
    shards = metadata["shards"][split]
    counts = metadata["counts"][split]
    # Kept skeletons are new symbolically; held-out and training images never meet.
    # seen_tokens maps a training skeleton to its index (its count), others to -1.
    seen_tokens: dict[bytes, int] = {}
    banned_images: set[int] = set()
    tree_counts: list[int] | None = None
    for existing_split in SPLITS:
        existing = SkeletonBank(folder, existing_split)
        for index in range(len(existing)):
            seen_tokens[existing.ids(index).tobytes()] = index if existing_split == "train" else -1
        if "heldout" in (split, existing_split):
            banned_images.update(int(k) for k in existing.image_keys)
        if existing_split == split == "train":
            # Banks started without counts keep none: their earlier duplicates are unknown.
            tree_counts = list(existing.counts) if existing.counts is not None else ([] if len(existing) == 0 else None)
    n_done = sum(shard["n"] for shard in shards)
    while n_done < wanted:
        shard_index = len(shards)
        start = time.perf_counter()
        first = shard_index * settings["chunks_per_shard"]
        chunks = range(first, first + settings["chunks_per_shard"])
        results = parallel(
            delayed(_generate_chunk)(settings["chunk_size"], [settings["seed"], SPLITS[split], chunk], config, points)
            for chunk in chunks
        )
        entries = []
        rejected: Counter = Counter()
        for chunk_entries, chunk_rejected in results:
            rejected.update(chunk_rejected)
            for tokens, kinds, key in chunk_entries:
                token_key = np.asarray(vocab.encode(tokens), dtype=np.int16).tobytes()
                if token_key in seen_tokens:
                    counts["duplicates"] += 1
                    if split == "train" and tree_counts is not None and seen_tokens[token_key] >= 0:
                        tree_counts[seen_tokens[token_key]] += 1
                    continue
                if key in banned_images:
                    counts["numeric_duplicates"] += 1
                    continue
                if len(entries) >= wanted - n_done:
                    continue  # beyond the requested size: the next build's shard finds it again
                seen_tokens[token_key] = n_done + len(entries) if split == "train" else -1
                if split == "heldout":
                    banned_images.add(key)
                entries.append((tokens, kinds, key))
                if split == "train" and tree_counts is not None:
                    tree_counts.append(1)
        name = f"{split}-{shard_index:05d}.npz"
        _write_shard(folder / name, vocab, entries)
        counts["attempts"] += settings["chunk_size"] * len(chunks)
        counts["accepted"] += len(entries)
        for reason, n in rejected.items():
            counts["rejected"][reason] = counts["rejected"].get(reason, 0) + n
        shards.append(dict(file=name, n=len(entries), chunks=[chunks.start, chunks.stop]))
        previous_counts = metadata.get("counts_files", {}).get(split)
        if split == "train" and tree_counts is not None:
            counts_name = f"{split}-counts-{shard_index:05d}.npy"
            temporary = folder / (counts_name + ".tmp.npy")
            np.save(temporary, np.asarray(tree_counts, dtype=np.int64))
            os.replace(temporary, folder / counts_name)
            metadata.setdefault("counts_files", {})[split] = counts_name
        n_done += len(entries)
        metadata["seconds"] += time.perf_counter() - start
        _finish_rates(metadata)
        _write_json(folder / "metadata.json", metadata)
        if previous_counts and previous_counts != metadata["counts_files"][split]:
            (folder / previous_counts).unlink(missing_ok=True)
        logger.info("%s shard %d: %d skeletons (%d/%d)", split, shard_index, len(entries), n_done, wanted)
        if progress is not None:
            progress(split, n_done, wanted)


def _finish_rates(metadata: dict) -> None:
    for counts in metadata["counts"].values():
        attempts = max(counts["attempts"], 1)
        counts["rejection_rates"] = {r: n / attempts for r, n in counts["rejected"].items()}
        counts["duplicate_rate"] = counts["duplicates"] / attempts
        counts["acceptance_rate"] = counts["accepted"] / attempts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="bank folder (resumed if it exists)")
    parser.add_argument("--n-skeletons", type=int, required=True)
    parser.add_argument("--n-heldout", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--n-variables", type=int, default=3)
    parser.add_argument("--max-operators", type=int, default=5)
    parser.add_argument(
        "--simplification",
        choices=SIMPLIFICATIONS,
        default="full",
        help="full: sympy.simplify (the paper); automatic: SymPy's evaluation on construction only",
    )
    parser.add_argument("--simplify-timeout", type=float, default=1.0)
    parser.add_argument("--max-length", type=int, default=60)
    parser.add_argument("--chunk-size", type=int, default=100)
    parser.add_argument("--chunks-per-shard", type=int, default=100)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    config = GeneratorConfig(
        n_variables=args.n_variables,
        max_operators=args.max_operators,
        simplification=args.simplification,
        simplify_timeout=args.simplify_timeout,
        max_length=args.max_length,
    )
    from tqdm.auto import tqdm

    bars = {}

    def progress(split, done, wanted):
        bar = bars.setdefault(split, tqdm(total=wanted, desc=split, unit="skeleton"))
        bar.update(done - bar.n)

    metadata = build_bank(
        args.out,
        args.n_skeletons,
        args.n_heldout,
        args.seed,
        config,
        args.n_jobs,
        args.chunk_size,
        args.chunks_per_shard,
        progress,
    )
    for bar in bars.values():
        bar.close()
    for split, counts in metadata["counts"].items():
        print(
            f"{split}: {counts['accepted']} skeletons from {counts['attempts']} trees; "
            f"duplicates {counts['duplicates']}, rejected {counts['rejected']}"
        )
    print(f"{metadata['seconds']:.1f} s of generation; metadata in {Path(args.out) / 'metadata.json'}")


if __name__ == "__main__":
    main()
