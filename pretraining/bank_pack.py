"""Packs: a complete skeleton bank as a few compressed files that can travel with a checkout.

:func:`pack_bank` writes ``PREFIX-00.npz``, ``PREFIX-01.npz``, ... (each at most
``max_bytes``, 16 MiB by default). Each is an ``.npz`` (LZMA-compressed entries; readable
with :func:`numpy.load`) holding contiguous blocks of the skeletons of both splits in
order, in narrow dtypes (lengths instead of offsets), and a ``manifest``: JSON bytes with
the bank's metadata, the pack's id, the file's index and its blocks. :func:`unpack_bank`
restores the bank folder: the same shard files, counts file and ``metadata.json``.

The training split's image keys (8 incompressible bytes a skeleton, about half of a pack)
are left out unless ``image_keys=True``; the held-out split's are always kept. Growing an
unpacked bank needs only those, so it gives the same shards as growing the original;
only ``SkeletonBank(folder).image_keys`` (the seen-skeleton study) is then unavailable.

Command lines::

    python -m pretraining.bank_pack pack bank packs/bank [--image-keys] [--max-mib 16]
    python -m pretraining.bank_pack unpack packs/bank-*.npz --out bank
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import os
import re
import sys
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .bank import SPLITS, SkeletonBank, _write_arrays, _write_json

PACK_FORMAT = "nesymres-skeleton-bank-pack"
PACK_VERSION = 1
#: Largest packed file, in bytes.
MAX_PACK_BYTES = 16 * 2**20
# Fixed entry dates keep a pack a pure function of its bank.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_UNREADABLE = (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile, lzma.LZMAError, zlib.error)
_FIX = "fetch it again, or pack the bank again with `python -m pretraining.bank_pack pack BANK PREFIX`"


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` (non-negative integers) in the smallest unsigned dtype that holds them."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


def _split_arrays(folder, split: str, image_keys: bool) -> dict:
    bank = SkeletonBank(folder, split)
    arrays = dict(
        tokens=bank._tokens[: bank._offsets[-1]],
        offsets=bank._offsets,
        kinds=bank._kinds[: bank._kind_offsets[-1]],
        kind_offsets=bank._kind_offsets,
    )
    if bank.counts is not None:
        arrays["counts"] = bank.counts
    if image_keys or split == "heldout":
        arrays["image_keys"] = bank.image_keys
    return arrays


def _block(arrays: dict, start: int, stop: int) -> dict:
    """Skeletons ``[start, stop)`` of a split, as stored in a pack."""
    offsets, kind_offsets = arrays["offsets"], arrays["kind_offsets"]
    block = dict(
        tokens=_narrow(arrays["tokens"][offsets[start] : offsets[stop]]),
        lengths=_narrow(np.diff(offsets[start : stop + 1])),
        kinds=_narrow(arrays["kinds"][kind_offsets[start] : kind_offsets[stop]]),
        kind_lengths=_narrow(np.diff(kind_offsets[start : stop + 1])),
    )
    if "counts" in arrays:
        block["counts"] = _narrow(arrays["counts"][start:stop])
    if "image_keys" in arrays:
        block["image_keys"] = arrays["image_keys"][start:stop]
    return block


def _write_entry(archive: zipfile.ZipFile, name: str, array: np.ndarray, compress: bool = True) -> None:
    info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_DATE)
    info.compress_type = zipfile.ZIP_LZMA if compress else zipfile.ZIP_STORED
    with archive.open(info, "w", force_zip64=True) as entry:
        np.lib.format.write_array(entry, np.ascontiguousarray(array), allow_pickle=False)


def _ranges(sizes: dict, begin: int, end: int) -> list[dict]:
    """The per-split blocks of skeletons ``[begin, end)`` of the splits in order."""
    blocks, base = [], 0
    for split, n in sizes.items():
        start, stop = max(begin - base, 0), min(end - base, n)
        if start < stop:
            blocks.append(dict(split=split, start=start, stop=stop))
        base += n
    return blocks


def _data_zip(arrays: dict, blocks: list[dict]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index, block in enumerate(blocks):
            for name, values in _block(arrays[block["split"]], block["start"], block["stop"]).items():
                _write_entry(archive, f"block{index}.{name}", values)
    return buffer.getvalue()


def _manifest_bytes(manifest: dict) -> np.ndarray:
    return np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)


def pack_bank(folder, prefix, image_keys: bool = False, max_bytes: int = MAX_PACK_BYTES) -> list[Path]:
    """Write a complete bank as compressed files ``PREFIX-NN.npz``; returns their paths.

    Parameters
    ----------
    folder : str or Path
        A complete bank folder.
    prefix : str or Path
        Path prefix of the files; files of an earlier pack with this prefix are replaced.
    image_keys : bool, default=False
        Keep the training split's image keys (about half of the pack's size).
    max_bytes : int, default=16 MiB
        Largest file; the skeletons are spread over as many files as needed.
    """
    folder, prefix = Path(folder), Path(prefix)
    metadata = json.loads((folder / "metadata.json").read_text())
    if not metadata.get("complete"):
        raise ValueError(f"The bank in {folder} is not complete; finish it with its build command first.")
    arrays = {split: _split_arrays(folder, split, image_keys) for split in SPLITS}
    sizes = {split: len(arrays[split]["offsets"]) - 1 for split in SPLITS}
    total = sum(sizes.values())

    def manifest(blocks, pack_id="0" * 16, index=10**6, n_files=10**6):
        return dict(
            format=PACK_FORMAT,
            version=PACK_VERSION,
            pack_id=pack_id,
            name=prefix.name,
            index=index,
            n_files=n_files,
            image_keys=image_keys,
            blocks=blocks,
            metadata=metadata,
        )

    # Cut the skeletons into files: compress a guess, shrink it until it fits.
    files, begin, per_skeleton = [], 0, None
    while begin < total or not files:
        n = total - begin if per_skeleton is None else min(total - begin, max(1, int(max_bytes / per_skeleton)))
        while True:
            blocks = _ranges(sizes, begin, begin + n)
            data = _data_zip(arrays, blocks)
            size = len(data) + _manifest_bytes(manifest(blocks)).nbytes + 1024  # headers of the manifest entry
            if size <= max_bytes:
                break
            if n <= 1:
                raise ValueError(f"max_bytes={max_bytes} is too small: a skeleton and the manifest take {size} bytes.")
            n = max(1, min(n - 1, int(n * max_bytes / size * 0.97)))
        files.append((blocks, data))
        per_skeleton = size / max(n, 1)
        begin += n
    pack_id = hashlib.blake2b(b"".join(data for _, data in files), digest_size=8).hexdigest()
    width = max(2, len(str(len(files) - 1)))
    paths = []
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for index, (blocks, data) in enumerate(files):
        buffer = io.BytesIO(data)
        with zipfile.ZipFile(buffer, "a") as archive:
            _write_entry(archive, "manifest", _manifest_bytes(manifest(blocks, pack_id, index, len(files))), False)
        if buffer.getbuffer().nbytes > max_bytes:
            raise RuntimeError(f"Packed file {index} exceeds {max_bytes} bytes.")
        path = prefix.with_name(f"{prefix.name}-{index:0{width}d}.npz")
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(buffer.getvalue())
        os.replace(temporary, path)
        paths.append(path)
    pattern = re.compile(re.escape(prefix.name) + r"-\d+\.npz")
    for stale in prefix.parent.iterdir():
        if pattern.fullmatch(stale.name) and stale not in paths:
            stale.unlink()
    return paths


def _read_npy(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    # ZipFile.read checks the entry's CRC.
    return np.lib.format.read_array(io.BytesIO(archive.read(name + ".npy")), allow_pickle=False)


def _read_manifest(path: Path) -> dict:
    try:
        with zipfile.ZipFile(path) as archive:
            manifest = json.loads(_read_npy(archive, "manifest").tobytes())
    except _UNREADABLE as error:
        raise ValueError(f"{path} is not a readable bank pack file ({error}); {_FIX}.") from None
    if manifest.get("format") != PACK_FORMAT or manifest.get("version") != PACK_VERSION:
        raise ValueError(f"{path} is not a version {PACK_VERSION} bank pack file; {_FIX}.")
    return manifest


def _read_blocks(path: Path, manifest: dict) -> list[tuple[dict, dict]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [name[: -len(".npy")] for name in archive.namelist()]
            blocks = []
            for i, block in enumerate(manifest["blocks"]):
                keys = [name for name in names if name.startswith(f"block{i}.")]
                blocks.append((block, {key.split(".", 1)[1]: _read_npy(archive, key) for key in keys}))
            return blocks
    except _UNREADABLE as error:
        raise ValueError(f"{path} is damaged ({error}); {_FIX}.") from None


def _join_split(split: str, parts: list[tuple[dict, dict, Path]], n: int) -> dict:
    """A split's arrays, as a bank stores them, from its blocks."""
    parts = sorted(parts, key=lambda part: part[0]["start"])
    position = 0
    for block, values, path in parts:
        fits = len(values["lengths"]) == len(values["kind_lengths"]) == block["stop"] - block["start"]
        fits = fits and values["lengths"].sum() == len(values["tokens"])
        fits = fits and values["kind_lengths"].sum() == len(values["kinds"])
        if block["start"] != position or not fits:
            raise ValueError(f"{path} does not fit the other files of its pack at {split} skeleton {position}; {_FIX}.")
        position = block["stop"]
    if position != n:
        raise ValueError(f"The pack holds {position} of the {n} {split} skeletons of its bank; {_FIX}.")

    def joined(name, dtype):
        return np.concatenate([np.zeros(0, dtype)] + [values[name].astype(dtype) for _, values, _ in parts])

    def offsets(name):
        out = np.zeros(n + 1, np.int64)
        np.cumsum(joined(name, np.int64), out=out[1:])
        return out

    arrays = dict(
        tokens=joined("tokens", np.int16),
        offsets=offsets("lengths"),
        kinds=joined("kinds", np.int8),
        kind_offsets=offsets("kind_lengths"),
    )
    for name, dtype in (("counts", np.int64), ("image_keys", np.uint64)):
        if parts and all(name in values for _, values, _ in parts):
            arrays[name] = joined(name, dtype)
    return arrays


def unpack_bank(files, folder) -> dict:
    """Restore the bank folder of a pack from all its files; returns the bank's metadata."""
    paths = [Path(file) for file in files]
    if not paths:
        raise ValueError("No pack files given.")
    manifests = {path: _read_manifest(path) for path in paths}
    first = paths[0]
    reference = manifests[first]
    for path, manifest in manifests.items():
        if manifest["pack_id"] != reference["pack_id"]:
            raise ValueError(
                f"{path} and {first} belong to different packs ({manifest['pack_id']}, {reference['pack_id']}); "
                "pass the files of one pack."
            )
    by_index = {}
    for path, manifest in manifests.items():
        if manifest["index"] in by_index:
            raise ValueError(f"{path} and {by_index[manifest['index']]} are the same file of the pack.")
        by_index[manifest["index"]] = path
    n_files = reference["n_files"]
    width = max(2, len(str(n_files - 1)))
    missing = [f"{reference['name']}-{i:0{width}d}.npz" for i in range(n_files) if i not in by_index]
    if missing:
        raise ValueError(
            f"The pack {reference['name']} has {n_files} files; missing: {', '.join(missing)}. Pass all of them, "
            f"e.g. `python -m pretraining.bank_pack unpack {first.parent / reference['name']}-*.npz --out BANK`."
        )
    folder = Path(folder)
    if (folder / "metadata.json").exists():
        raise ValueError(f"{folder} already holds a bank; unpack into a new folder.")
    metadata = reference["metadata"]
    parts = {split: [] for split in SPLITS}
    for index in range(n_files):
        path = by_index[index]
        for block, values in _read_blocks(path, manifests[path]):
            parts[block["split"]].append((block, values, path))
    folder.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        shards = metadata["shards"][split]
        arrays = _join_split(split, parts[split], sum(shard["n"] for shard in shards))
        start = 0
        for shard in shards:
            stop = start + shard["n"]
            offsets, kind_offsets = arrays["offsets"], arrays["kind_offsets"]
            shard_arrays = dict(
                tokens=arrays["tokens"][offsets[start] : offsets[stop]],
                offsets=offsets[start : stop + 1] - offsets[start],
                kinds=arrays["kinds"][kind_offsets[start] : kind_offsets[stop]],
                kind_offsets=kind_offsets[start : stop + 1] - kind_offsets[start],
            )
            if "image_keys" in arrays:
                shard_arrays["image_keys"] = arrays["image_keys"][start:stop]
            _write_arrays(folder / shard["file"], shard_arrays)
            start = stop
        counts_file = metadata.get("counts_files", {}).get(split)
        if counts_file:
            if "counts" not in arrays:
                raise ValueError(f"The pack {reference['name']} lacks the {split} counts of its bank; {_FIX}.")
            np.save(folder / counts_file, arrays["counts"])
    _write_json(folder / "metadata.json", metadata)
    return metadata


def main(argv=None) -> None:
    """``python -m pretraining.bank_pack pack ...`` or ``... unpack ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"pack": _pack_main, "unpack": _unpack_main}
    if not argv or argv[0] not in commands:
        raise SystemExit("usage: python -m pretraining.bank_pack {pack,unpack} ...")
    commands[argv[0]](argv[1:])


def _pack_main(argv) -> None:
    parser = argparse.ArgumentParser(prog="python -m pretraining.bank_pack pack", description="Pack a complete bank.")
    parser.add_argument("bank", help="bank folder")
    parser.add_argument("prefix", help="files are PREFIX-00.npz, PREFIX-01.npz, ...")
    parser.add_argument("--image-keys", action="store_true", help="keep the training image keys (about 2x the size)")
    parser.add_argument("--max-mib", type=float, default=MAX_PACK_BYTES / 2**20, help="largest file, MiB")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        paths = pack_bank(args.bank, args.prefix, args.image_keys, int(args.max_mib * 2**20))
    except ValueError as error:
        parser.exit(1, f"error: {error}\n")
    for path in paths:
        print(f"{path}: {path.stat().st_size / 2**20:.2f} MiB")
    print(f"{len(paths)} files in {time.perf_counter() - start:.1f} s")


def _unpack_main(argv) -> None:
    parser = argparse.ArgumentParser(prog="python -m pretraining.bank_pack unpack", description="Unpack a bank.")
    parser.add_argument("files", nargs="+", help="all the files of the pack")
    parser.add_argument("--out", required=True, help="new bank folder")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        metadata = unpack_bank(args.files, args.out)
    except ValueError as error:
        parser.exit(1, f"error: {error}\n")
    sizes = {split: sum(shard["n"] for shard in shards) for split, shards in metadata["shards"].items()}
    print(f"{args.out}: {sizes} skeletons in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
