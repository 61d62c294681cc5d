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

One joblib call streams the chunks of both splits in order: the workers generate ahead
while the main process de-duplicates finished chunks and writes shards, with no barrier
between shards (the few chunks generated beyond a split's last shard are dropped).
Workers return skeletons encoded, repeats within a chunk merged, so the main process's
work per tree is a dictionary lookup.

A complete bank packs into a few compressed files of at most 16 MiB, to keep with a
checkout: 1.2 MiB for 200k skeletons, 2.7 MiB with the training split's image keys,
which only the seen-skeleton study needs (:mod:`pretraining.bank_pack`).

Command line (packing and unpacking: :mod:`pretraining.bank_pack`)::

    python -m pretraining.bank --out bank --n-skeletons 100000 --n-heldout 1000
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import math
import os
import time
import warnings
from collections import Counter
from functools import lru_cache
from itertools import repeat
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
# Chunks per shard of the command line for large banks (a shard of 10,000 trees at 100 per chunk).
MAX_CHUNKS_PER_SHARD = 100


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


# About one batch a worker in flight (joblib sizes batches to its task times): few chunks
# beyond a split's last shard are generated for nothing.
_PARALLEL_OPTIONS = dict(pre_dispatch="n_jobs")

# Per worker process: image keys of recent skeletons (half of a large bank's trees repeat one).
_IMAGE_KEYS: dict = {}
_IMAGE_KEYS_SIZE = 300_000


@lru_cache(maxsize=4)
def _worker_points(seed: int, n_variables: int) -> np.ndarray:
    points = image_points(seed, n_variables)
    points.setflags(write=False)  # shared by every skeleton of the process
    return points


@lru_cache(maxsize=4)
def _worker_vocab(n_variables: int) -> Vocabulary:
    return Vocabulary.default(n_variables)


def _cached_image_key(token_key: bytes, kind_key: bytes, skeleton, seed: int, n_variables: int) -> int | None:
    key = (token_key, kind_key, seed, n_variables)
    if key not in _IMAGE_KEYS:
        if len(_IMAGE_KEYS) >= _IMAGE_KEYS_SIZE:
            _IMAGE_KEYS.clear()
        _IMAGE_KEYS[key] = image_key(skeleton.attached, skeleton.kinds, _worker_points(seed, n_variables))
    return _IMAGE_KEYS[key]


def _generate_chunk(n_attempts: int, seed: list[int], config: GeneratorConfig, image_seed: int):
    """One chunk's skeletons, encoded: ``(tuple(seed), records, rejected)``.

    A record is ``(token ids as int16 bytes, kind codes as int8 bytes, image key, trees)``.
    Repeats of a skeleton within the chunk are merged into its first record (``trees``
    counts them) when all of them have the same kinds, which leaves the main process's
    de-duplication unchanged: their outcome is that of the first.
    """
    skeletons, rejected = generate_skeletons(n_attempts, seed, config)
    vocab = _worker_vocab(config.n_variables)
    valid = []
    for skeleton in skeletons:
        token_key = np.array(vocab.encode(skeleton.attached), dtype=np.int16).tobytes()
        kind_key = np.array([KIND_CODES[k] for k in skeleton.kinds], dtype=np.int8).tobytes()
        key = _cached_image_key(token_key, kind_key, skeleton, image_seed, config.n_variables)
        if key is None:
            rejected["no_valid_points"] += 1
        else:
            valid.append((token_key, kind_key, key))
    kinds_of: dict[bytes, set] = {}
    for token_key, kind_key, _ in valid:
        kinds_of.setdefault(token_key, set()).add(kind_key)
    records, first = [], {}
    for token_key, kind_key, key in valid:
        merge = len(kinds_of[token_key]) == 1
        if merge and token_key in first:
            records[first[token_key]][3] += 1
            continue
        if merge:
            first[token_key] = len(records)
        records.append([token_key, kind_key, key, 1])
    return tuple(seed), records, rejected


def _shard_arrays(token_keys: list, kind_keys: list, image_keys: list) -> dict:
    """The arrays of a shard from its encoded skeletons."""
    n = len(token_keys)
    offsets, kind_offsets = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
    np.cumsum(np.fromiter(map(len, token_keys), np.int64, n) // 2, out=offsets[1:])
    np.cumsum(np.fromiter(map(len, kind_keys), np.int64, n), out=kind_offsets[1:])
    return dict(
        tokens=np.frombuffer(b"".join(token_keys), dtype=np.int16),
        offsets=offsets,
        kinds=np.frombuffer(b"".join(kind_keys), dtype=np.int8),
        kind_offsets=kind_offsets,
        image_keys=np.asarray(image_keys, dtype=np.uint64),
    )


def _write_arrays(path: Path, arrays: dict) -> None:
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
        # Packs leave out the training split's image keys unless asked (see pretraining.bank_pack).
        if all("image_keys" in p.files for p in parts):
            self._image_keys = np.concatenate([p["image_keys"] for p in parts] or [np.zeros(0, np.uint64)])
        else:
            self._image_keys = None
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
            if self._image_keys is not None:
                self._image_keys = self._image_keys[:limit]
        self._token_strings = np.array(self.vocab.tokens, dtype=object)

    @property
    def has_image_keys(self) -> bool:
        """Whether :attr:`image_keys` is available (a pack may leave it out)."""
        return self._image_keys is not None

    @property
    def image_keys(self) -> np.ndarray:
        """uint64 hash of each skeleton's values on the bank's image points."""
        if self._image_keys is None:
            raise ValueError(
                f"The {self.split} split of {self.folder} was unpacked without its image keys; unpack a pack "
                "made with `python -m pretraining.bank_pack pack BANK PREFIX --image-keys`, or build the bank."
            )
        return self._image_keys

    def _id_keys(self) -> list[bytes]:
        """The int16 token ids of each skeleton as bytes (the de-duplication key)."""
        data, offsets = self._tokens.tobytes(), (2 * self._offsets).tolist()
        return [data[start:stop] for start, stop in zip(offsets[:-1], offsets[1:])]

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
            vocabulary=list(Vocabulary.default(config.n_variables).tokens),
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
    wanted = {"train": n_skeletons, "heldout": n_heldout}
    todo = [split for split in SPLITS if sum(shard["n"] for shard in metadata["shards"][split]) < wanted[split]]
    parallel = Parallel(n_jobs=n_jobs, return_as="generator", **_PARALLEL_OPTIONS)
    with parallel, _ChunkStream(parallel, metadata, config, todo) as stream:
        for split in todo:
            _build_split(folder, metadata, split, wanted[split], stream, progress)
    metadata["complete"] = True
    _finish_rates(metadata)
    _write_json(metadata_path, metadata)
    return metadata


class _ChunkStream:
    """The generator chunks of the splits to build, in order, generated ahead by joblib workers.

    One joblib call serves every split: the workers run ahead of the main process, which
    de-duplicates finished chunks and writes shards. Once the main process knows a split's
    last chunk (:meth:`end`), the workers move on to the next split; the results of
    chunks generated beyond the end are skipped.
    """

    def __init__(self, parallel, metadata: dict, config: GeneratorConfig, splits: list[str]):
        settings = metadata["settings"]
        self._seed, self._chunk_size, self._config = settings["seed"], settings["chunk_size"], config
        self._first = {split: len(metadata["shards"][split]) * settings["chunks_per_shard"] for split in splits}
        self._ends: dict[str, int] = {}
        self.skipped = 0  # chunks generated beyond a split's end
        self._results = parallel(self._tasks()) if splits else iter(())

    def _tasks(self):
        for split, chunk in self._first.items():
            while split not in self._ends or chunk < self._ends[split]:
                yield delayed(_generate_chunk)(
                    self._chunk_size, [self._seed, SPLITS[split], chunk], self._config, self._seed
                )
                chunk += 1

    def get(self, split: str, chunk: int):
        """``(records, rejected)`` of a chunk: the next one of ``split`` not read yet."""
        key = (self._seed, SPLITS[split], chunk)
        for result_key, records, rejected in self._results:
            if result_key == key:
                return records, rejected
            self.skipped += 1
        raise RuntimeError(f"Chunk {key} was never generated.")

    def end(self, split: str, chunk: int) -> None:
        """Generate no chunk of ``split`` from ``chunk`` on."""
        self._ends.setdefault(split, chunk)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None or issubclass(kind, Exception):
            # Let the running chunks finish (their results are skipped): the workers, and
            # their memos, stay for the next build.
            for split in self._first:
                self._ends.setdefault(split, -1)
            with contextlib.suppress(Exception):
                self.skipped += sum(1 for _ in self._results)
            logger.debug("%d chunks generated beyond the splits' last shards", self.skipped)
        with warnings.catch_warnings():  # on an interrupt, joblib cancels the running tasks and says so
            warnings.simplefilter("ignore", UserWarning)
            if hasattr(self._results, "close"):
                self._results.close()


def _existing_state(folder: Path, split: str):
    """What the bank's skeletons rule out for ``split``: token keys (mapped to their
    training index, -1 for held-out ones), banned image keys, and the training counts."""
    seen: dict[bytes, int] = {}
    banned_images: set[int] = set()
    tree_counts = None
    for existing_split in SPLITS:
        existing = SkeletonBank(folder, existing_split)
        keys = existing._id_keys()
        seen.update(zip(keys, range(len(keys)) if existing_split == "train" else repeat(-1)))
        if "heldout" in (split, existing_split):
            banned_images.update(existing.image_keys.tolist())
        if existing_split == split == "train":
            # Banks started without counts keep none: their earlier duplicates are unknown.
            if existing.counts is not None:
                tree_counts = np.array(existing.counts, dtype=np.int64)
            elif len(existing) == 0:
                tree_counts = np.zeros(0, np.int64)
    return seen, banned_images, tree_counts


def _build_split(folder, metadata, split, wanted, stream, progress):
    """Add shards to ``split`` until it holds ``wanted`` skeletons.

    Shard ``k`` holds the new skeletons of chunks ``[k * per_shard, (k + 1) * per_shard)``,
    taken in chunk order; the last shard stops accepting at ``wanted`` but still counts
    its remaining trees, as every build of the same settings does.
    """
    settings = metadata["settings"]
    shards = metadata["shards"][split]
    counts = metadata["counts"][split]
    n_done = sum(shard["n"] for shard in shards)
    # Kept skeletons are new symbolically; held-out and training images never meet.
    seen, banned_images, tree_counts = _existing_state(folder, split)
    chunk_size, per_shard = settings["chunk_size"], settings["chunks_per_shard"]
    counting = split == "train" and tree_counts is not None
    start = time.perf_counter()
    while n_done < wanted:
        shard_index = len(shards)
        first = shard_index * per_shard
        token_keys, kind_keys, image_keys, trees = [], [], [], []
        bumped, bumps = [], []  # earlier skeletons found again, and how often
        duplicates = numeric_duplicates = 0
        rejected: Counter = Counter()
        room = wanted - n_done
        for chunk in range(first, first + per_shard):
            records, chunk_rejected = stream.get(split, chunk)
            rejected.update(chunk_rejected)
            for token_key, kind_key, key, n in records:
                index = seen.get(token_key)
                if index is not None:
                    duplicates += n
                    if counting and index >= 0:
                        bumped.append(index)
                        bumps.append(n)
                elif key in banned_images:
                    numeric_duplicates += n
                elif len(token_keys) < room:  # beyond: the next build's shard finds it again
                    seen[token_key] = n_done + len(token_keys) if split == "train" else -1
                    if split == "heldout":
                        banned_images.add(key)
                    token_keys.append(token_key)
                    kind_keys.append(kind_key)
                    image_keys.append(key)
                    trees.append(n)
                    duplicates += n - 1
            if len(token_keys) >= room:
                stream.end(split, first + per_shard)
        name = f"{split}-{shard_index:05d}.npz"
        _write_arrays(folder / name, _shard_arrays(token_keys, kind_keys, image_keys))
        counts["attempts"] += chunk_size * per_shard
        counts["accepted"] += len(token_keys)
        counts["duplicates"] += duplicates
        counts["numeric_duplicates"] += numeric_duplicates
        for reason, n in rejected.items():
            counts["rejected"][reason] = counts["rejected"].get(reason, 0) + n
        shards.append(dict(file=name, n=len(token_keys), chunks=[first, first + per_shard]))
        previous_counts = metadata.get("counts_files", {}).get(split)
        if counting:
            tree_counts = np.concatenate([tree_counts, np.asarray(trees, dtype=np.int64)])
            np.add.at(tree_counts, np.asarray(bumped, dtype=np.int64), np.asarray(bumps, dtype=np.int64))
            counts_name = f"{split}-counts-{shard_index:05d}.npy"
            temporary = folder / (counts_name + ".tmp.npy")
            np.save(temporary, tree_counts)
            os.replace(temporary, folder / counts_name)
            metadata.setdefault("counts_files", {})[split] = counts_name
        n_done += len(token_keys)
        now = time.perf_counter()
        metadata["seconds"] += now - start
        start = now
        _finish_rates(metadata)
        _write_json(folder / "metadata.json", metadata)
        if previous_counts and previous_counts != metadata["counts_files"][split]:
            (folder / previous_counts).unlink(missing_ok=True)
        logger.info("%s shard %d: %d skeletons (%d/%d)", split, shard_index, len(token_keys), n_done, wanted)
        if progress is not None:
            progress(split, n_done, wanted)


def _finish_rates(metadata: dict) -> None:
    for counts in metadata["counts"].values():
        attempts = max(counts["attempts"], 1)
        counts["rejection_rates"] = {r: n / attempts for r, n in counts["rejected"].items()}
        counts["duplicate_rate"] = counts["duplicates"] / attempts
        counts["acceptance_rate"] = counts["accepted"] / attempts


def default_chunks_per_shard(folder, n_wanted: int, chunk_size: int) -> int:
    """The existing bank's chunks per shard (a bank grows with its own settings), else
    enough chunks for ``2 * n_wanted`` trees, at most ``MAX_CHUNKS_PER_SHARD``: a shard
    draws all its chunks, so a small request draws a small shard."""
    metadata = Path(folder) / "metadata.json"
    if metadata.exists():
        return json.loads(metadata.read_text())["settings"]["chunks_per_shard"]
    return min(MAX_CHUNKS_PER_SHARD, max(1, math.ceil(2 * n_wanted / chunk_size)))


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
        "--width-weights",
        type=float,
        nargs="+",
        help="weights of laws of 1..n variables, drawn before the tree (default: each leaf draws its variable)",
    )
    parser.add_argument(
        "--simplification",
        choices=SIMPLIFICATIONS,
        default="full",
        help="full: sympy.simplify (the paper); automatic: SymPy's evaluation on construction only",
    )
    parser.add_argument("--simplify-timeout", type=float, default=1.0)
    parser.add_argument("--max-length", type=int, default=60)
    parser.add_argument("--chunk-size", type=int, default=100)
    parser.add_argument(
        "--chunks-per-shard",
        type=int,
        help="chunks per shard (default: an existing bank's, else enough for about twice the skeletons asked for, "
        f"at most {MAX_CHUNKS_PER_SHARD})",
    )
    args = parser.parse_args(argv)
    if args.chunks_per_shard is None:
        args.chunks_per_shard = default_chunks_per_shard(args.out, args.n_skeletons + args.n_heldout, args.chunk_size)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    config = GeneratorConfig(
        n_variables=args.n_variables,
        max_operators=args.max_operators,
        simplification=args.simplification,
        simplify_timeout=args.simplify_timeout,
        max_length=args.max_length,
        width_weights=args.width_weights,
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
    # Run the imported module's main: functions of ``__main__`` reach the joblib workers by
    # value, and the worker-side caches they use would not be found there.
    from pretraining.bank import main as module_main

    module_main()
