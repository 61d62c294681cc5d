"""The result file of a run: one CSV row per fit, and a JSON file beside it.

Rows are appended as fits finish (columns :data:`benchmarks.tasks.COLUMNS`), each in
one write, so an interrupted run loses nothing; :func:`drop_incomplete_row` removes
the last row of a file whose writer was killed mid-row (a power cut), and
:func:`locked` keeps a second run from appending to the same file. :func:`read_done`
gives the keys of the tasks already in the file, which a rerun skips, and
:func:`drop_failed` removes the errors, timeouts and crashes so that they run again.
Files written before a column existed (``noise``) read as noise 0, and
:func:`add_missing_columns` gives them the current columns before a run appends to them.
:func:`write_metadata` records the command, the machine and the profile in
``<name>.json``. :func:`merge_results` joins the files of several machines into one,
one row per task (``python -m benchmarks.results merge``).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.metadata
import io
import json
import multiprocessing.util
import os
import platform
import re
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from .profiles import Profile
from .tasks import COLUMNS, KEY, task_key

try:
    import fcntl
except ImportError:  # Windows: no lock
    fcntl = None

#: Statuses kept by :func:`drop_failed` (a missing package is not retried).
KEPT = ("ok", "not_installed")


def read_results(path: str | Path) -> pd.DataFrame:
    """The result table; empty cells are missing values, other strings stay as written."""
    if Path(path).stat().st_size == 0:  # a run that wrote no row
        return pd.DataFrame(columns=COLUMNS)
    return with_noise(pd.read_csv(path, keep_default_na=False, na_values=[""]))


def with_noise(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a numeric ``noise`` column, 0 where missing (older files)."""
    noise = pd.to_numeric(frame["noise"], errors="coerce") if "noise" in frame else 0.0
    return frame.assign(noise=noise).fillna({"noise": 0.0})


def read_done(path: Path) -> set:
    """Keys of the tasks already in a result file (see :func:`benchmarks.tasks.task_key`)."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    frame = pd.read_csv(path).reindex(columns=KEY)
    return {task_key(*values) for values in frame.itertuples(index=False)}


def add_missing_columns(path: Path) -> list[str]:
    """Rewrite a result file that lacks some of :data:`~benchmarks.tasks.COLUMNS` with
    all of them, in order (empty cells, read as noise 0), so that appended rows line up
    with its header; the columns added. Replaced in one step; cells keep their text."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in COLUMNS if column not in frame]
    if missing:
        _write_rows(path, frame.reindex(columns=COLUMNS, fill_value=""))
    return missing


def _write_rows(path: Path, frame: pd.DataFrame) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(frame.itertuples(index=False))
    os.replace(temporary, path)


def append_rows(path: Path, rows: list[dict], columns: list[str] = COLUMNS) -> None:
    """Append rows to the CSV (of ``columns``; the runner's by default), writing the
    header first if the file is new or empty.

    The text of all the rows goes out in one ``write`` to the end of the file, so a
    process killed meanwhile leaves whole rows (or, at worst, an incomplete last row
    that :func:`drop_incomplete_row` removes).
    """
    new = not path.exists() or path.stat().st_size == 0
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
    if new:
        writer.writeheader()
    for row in rows:
        writer.writerow({column: _format(row.get(column)) for column in columns})
    data = buffer.getvalue().encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        while data:
            data = data[os.write(descriptor, data) :]
    finally:
        os.close(descriptor)


def _format(value):
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, float):
        return repr(value)
    return value


def drop_failed(path: Path) -> None:
    """Remove the rows of failed fits (error, timeout, crashed) from a result file."""
    frame = pd.read_csv(path, keep_default_na=False)
    frame = frame[frame["status"].isin(KEPT)]
    frame.to_csv(path, index=False)


def drop_incomplete_row(path: Path) -> str | None:
    """Cut an incomplete last row (its writer was killed mid-row) from a result file.

    Every row ends with a line break, and a quoted cell (an error message) may hold
    more: the file is parsed, and a last row that does not end at a line break, or
    ends inside a quoted cell, is cut off. A malformed row elsewhere is left for
    the reader to report. Returns the text cut off, or ``None`` when nothing was.
    """
    if not path.exists():
        return None
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
    reader = csv.reader(lines, strict=True)
    complete = 0  # lines of the header and the complete rows
    try:
        for _ in reader:
            if not lines[reader.line_num - 1].endswith("\n"):
                break
            complete = reader.line_num
    except csv.Error:
        if reader.line_num < len(lines):
            return None
    if complete == len(lines):
        return None
    kept = "".join(lines[:complete])
    os.truncate(path, len(kept.encode("utf-8", "surrogateescape")))
    return text[len(kept) :]


def _close(handle) -> None:
    handle.close()


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on a result file (created if missing) while the block runs.

    Two runs appending to one file would run the same tasks twice; the second one
    raises instead. The lock is advisory (``flock``), held by this process only, and
    not enforced on Windows or across machines sharing the file over NFS.
    """
    with path.open("a") as handle:
        # A process forked meanwhile (a fit's child, a persistent time-limit worker)
        # shares the lock while it holds the file: it closes its copy at its start.
        multiprocessing.util.register_after_fork(handle, _close)
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RuntimeError(f"{path} is being written by another run; wait for it to end.") from None
        yield


def merge_results(sources: list[str | Path], out: str | Path) -> pd.DataFrame:
    """Join result files (one per machine) into ``out``, one row per task.

    Where several files hold a task, an ``ok`` row is kept before a ``not_installed``
    one and both before a failed one (error, timeout, crashed); among equals the first
    file given wins. Rows keep their text as written, in the order of the files.
    ``out`` may be one of the sources; it is replaced in one step, and not while a run
    writes it. Returns the merged table.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with locked(out) if out.exists() else contextlib.nullcontext():
        frames = [pd.read_csv(path, dtype=str, keep_default_na=False) for path in sources if os.path.getsize(path)]
        frame = pd.concat(frames, ignore_index=True).reindex(columns=COLUMNS).fillna("")
        rank = frame["status"].map({"ok": 0, "not_installed": 1}).fillna(2)
        keys = [task_key(*values) for values in frame[KEY].itertuples(index=False)]
        best = pd.DataFrame({"key": keys, "rank": rank}).sort_values("rank", kind="stable").drop_duplicates("key")
        _write_rows(out, frame.loc[sorted(best.index)])
    return read_results(out)


def machine_info() -> dict:
    """What the timings were measured on."""
    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor(),
    }
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    info["processor"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for distribution in ("numpy", "scipy", "sympy", "scikit-learn", "torch", "gplearn", "pyoperon", "nesymres-sklearn"):
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            versions[distribution] = None
    info["versions"] = versions
    return info


def portable_command(command: str) -> str:
    """``command`` with every absolute path inside the current directory (the
    repository root, where the runs start) made relative to it, so that no host's
    layout is recorded."""
    here = Path.cwd()

    def portable(word: str) -> str:
        if os.path.isabs(word) and Path(word).is_relative_to(here):
            return Path(word).relative_to(here).as_posix()
        return word

    return shlex.join(portable(word) for word in shlex.split(command))


def write_metadata(out: Path, profile: Profile, command: str | None, n_tasks: int) -> None:
    """Write ``<out>.json``: command, machine, profile, number of tasks and run dates
    (the first start and the command survive a resumed run). The file is replaced in
    one step, so a run killed meanwhile leaves the previous one."""
    path = out.with_suffix(".json")
    try:
        previous = json.loads(path.read_text()) if path.exists() else {}
    except json.JSONDecodeError:
        previous = {}
    metadata = {
        "command": portable_command(command) if command else previous.get("command"),
        "machine": machine_info(),
        "profile": _jsonable(asdict(profile)),
        "n_tasks": n_tasks,
        "started": previous.get("started", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        "last_run": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(metadata, indent=2))
    os.replace(temporary, path)


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.results", description="Work on result files.")
    commands = parser.add_subparsers(dest="command", required=True)
    merge = commands.add_parser("merge", help="join result files (one per machine) into one, one row per task")
    merge.add_argument("sources", nargs="+", help="result CSVs; where they overlap, ok rows and then the first win")
    merge.add_argument("--out", required=True, help="merged CSV (may be one of the sources)")
    args = parser.parse_args(argv)
    merged = merge_results(args.sources, args.out)
    print(f"{len(merged)} rows in {args.out}")
    print(merged.groupby(["method", "status"]).size().to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
