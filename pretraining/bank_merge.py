"""One bank from several: their skeletons in one vocabulary, each bank a chosen share of
the training draws.

A model that reads more variables keeps its narrow laws only where it keeps seeing the
paper's narrow skeletons (``docs/pretraining.md``, "Model v9's window"): a width-first bank
of 8 variables and the paper's bank of 3 are merged, and training draws each bank's
skeletons in the share given, by the generator's frequencies within it.

- The vocabulary is the widest bank's; every other bank's tokens must be in it.
- A training skeleton that is symbolically any bank's held-out skeleton is dropped; one
  that several banks hold is kept once, its scaled counts summed.
- ``shares`` hold for draws weighted by ``count ** frequency_power`` (the training's
  ``--frequency-power``): bank ``i``'s counts are multiplied by ``(share_i / W_i) **
  (1 / frequency_power)`` (``W_i``: the sum of its weights), scaled so that the smallest
  factor is :data:`COUNT_RESOLUTION` and rounded to integers.
- The held-out split is every bank's held-out skeletons (the first copy of a repeat) that
  take a finite value on the merged bank's image points and an image there that no earlier
  one has, with their image keys; the training split has no image keys (as a pack without
  them), so the seen-skeleton study does not read it, and a training skeleton is held out
  only where it is symbolically a held-out one: one of another bank's variables that
  takes a held-out skeleton's values stays (about one in 8,000 of the 8-variable bank's
  merged with the 3-variable one). A merged bank cannot be grown by ``pretraining.bank``
  nor sampled by ``benchmarks.datasets.build_soose`` (it has no generator settings).

Command line::

    python -m pretraining.bank_merge OUT bank-8v bank-1m --shares 0.5 0.5 --frequency-power 0.75
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np

from nesymres_sklearn.network.vocabulary import Vocabulary

from .bank import (
    FORMAT_VERSION,
    IMAGE_RANGE,
    IMAGE_SIGNIFICANT_DIGITS,
    N_IMAGE_POINTS,
    SkeletonBank,
    _shard_arrays,
    _write_arrays,
    _write_json,
    image_key,
    image_points,
)

logger = logging.getLogger(__name__)

#: The smallest bank's count factor: rounding a scaled count moves its weight by under 1%.
COUNT_RESOLUTION = 100
#: Skeletons per shard of a merged bank.
SHARD_SIZE = 100_000


def _id_map(source: Vocabulary, target: Vocabulary, folder: Path) -> np.ndarray:
    missing = [token for token in source.tokens if token not in target.tokens]
    if missing:
        raise ValueError(f"The bank {folder} has tokens {missing} that the widest bank's vocabulary lacks.")
    return np.array([target.tokens.index(token) for token in source.tokens], dtype=np.int16)


def _keys(bank: SkeletonBank, ids: np.ndarray) -> list[tuple[bytes, bytes]]:
    """Each skeleton's token ids in the merged vocabulary and its kinds, as bytes."""
    return [
        (
            ids[bank.ids(index)].tobytes(),
            bank._kinds[bank._kind_offsets[index] : bank._kind_offsets[index + 1]].tobytes(),
        )
        for index in range(len(bank))
    ]


def count_factors(weights: list[float], shares: list[float], frequency_power: float) -> list[int]:
    """Integer factors of each bank's counts such that bank ``i`` gets ``shares[i]`` of
    the draws weighted by ``count ** frequency_power`` (``weights[i]``: its sum)."""
    raw = [(share / weight) ** (1.0 / frequency_power) for share, weight in zip(shares, weights)]
    return [round(COUNT_RESOLUTION * factor / min(raw)) for factor in raw]


def merge_banks(folder, banks: list, shares: list[float], frequency_power: float = 0.75, seed: int = 0) -> dict:
    """Write the merged bank of ``banks`` (complete bank folders) into ``folder``; returns
    its metadata (see the module docstring)."""
    if len(shares) != len(banks) or any(share <= 0 for share in shares):
        raise ValueError(f"Give one positive share per bank: {len(banks)} banks, shares {shares}.")
    if frequency_power <= 0:
        raise ValueError(
            f"frequency_power must be positive (the training's --frequency-power), got {frequency_power}: "
            "with uniform draws no scaling of the counts sets the shares."
        )
    total = float(sum(shares))
    shares = [share / total for share in shares]
    folder = Path(folder)
    if (folder / "metadata.json").exists():
        raise ValueError(f"{folder} already holds a bank; merge into a new folder.")
    trains = [SkeletonBank(bank, "train") for bank in banks]
    heldouts = [SkeletonBank(bank, "heldout") for bank in banks]
    if any(train.counts is None for train in trains):
        raise ValueError("Every bank needs its counts (a bank built by pretraining.bank has them).")
    vocab = max((train.vocab for train in trains), key=lambda vocabulary: vocabulary.n_variables)
    maps = [_id_map(train.vocab, vocab, Path(bank)) for train, bank in zip(trains, banks)]
    points = image_points(seed, vocab.n_variables)

    heldout, heldout_keys, seen, images = {}, [], set(), set()
    for bank, ids in zip(heldouts, maps):
        for index, key in enumerate(_keys(bank, ids)):
            if key[0] in seen:
                continue
            seen.add(key[0])
            found = image_key(bank.tokens(index), bank.kinds(index), points)
            if found is not None and found not in images:  # finite somewhere, and a new image
                images.add(found)
                heldout[key[0]] = key
                heldout_keys.append(found)
    weights = [float(np.sum(train.counts.astype(np.float64) ** frequency_power)) for train in trains]
    factors = count_factors(weights, shares, frequency_power)
    counts: dict[bytes, int] = {}
    kinds: dict[bytes, bytes] = {}
    for bank, ids, factor in zip(trains, maps, factors):
        for (tokens, kind), count in zip(_keys(bank, ids), bank.counts.tolist()):
            if tokens in seen:
                continue
            kinds.setdefault(tokens, kind)
            counts[tokens] = counts.get(tokens, 0) + factor * int(count)

    folder.mkdir(parents=True, exist_ok=True)
    shards = {"train": [], "heldout": []}
    train_keys = list(counts)
    for start in range(0, len(train_keys), SHARD_SIZE):
        part = train_keys[start : start + SHARD_SIZE]
        name = f"train-{len(shards['train']):05d}.npz"
        arrays = _shard_arrays(part, [kinds[key] for key in part], [])
        del arrays["image_keys"]
        _write_arrays(folder / name, arrays)
        shards["train"].append(dict(file=name, n=len(part)))
    np.save(folder / "train-counts.npy", np.array([counts[key] for key in train_keys], dtype=np.int64))
    held = list(heldout.values())
    _write_arrays(folder / "heldout-00000.npz", _shard_arrays([t for t, _ in held], [k for _, k in held], heldout_keys))
    shards["heldout"].append(dict(file="heldout-00000.npz", n=len(held)))
    metadata = dict(
        format_version=FORMAT_VERSION,
        settings=dict(
            seed=seed,
            merged=[
                dict(bank=str(bank), settings=train.metadata["settings"], share=share, count_factor=factor)
                for bank, train, share, factor in zip(banks, trains, shares, factors)
            ],
            frequency_power=frequency_power,
            image_points=dict(n=N_IMAGE_POINTS, range=list(IMAGE_RANGE), significant_digits=IMAGE_SIGNIFICANT_DIGITS),
        ),
        vocabulary=list(vocab.tokens),
        n_skeletons=len(train_keys),
        shards=shards,
        counts_files={"train": "train-counts.npy"},
        complete=True,
    )
    _write_json(folder / "metadata.json", metadata)
    logger.info(
        "Merged %d banks into %s: %d training and %d held-out skeletons.",
        len(banks),
        folder,
        len(train_keys),
        len(held),
    )
    return metadata


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the merged bank's folder (new)")
    parser.add_argument("banks", type=Path, nargs="+", help="complete bank folders")
    parser.add_argument("--shares", type=float, nargs="+", help="each bank's share of the draws (default: equal)")
    parser.add_argument("--frequency-power", type=float, default=0.75, help="the training's --frequency-power")
    parser.add_argument("--seed", type=int, default=0, help="of the held-out split's image points")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    shares = args.shares or [1.0] * len(args.banks)
    metadata = merge_banks(args.out, args.banks, shares, args.frequency_power, args.seed)
    print(json.dumps({key: metadata[key] for key in ("n_skeletons", "shards")}, indent=2))


if __name__ == "__main__":
    main()
