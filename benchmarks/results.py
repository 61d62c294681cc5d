"""The result file of a run: one CSV row per fit, and a JSON file beside it.

Rows are appended as fits finish (columns :data:`benchmarks.tasks.COLUMNS`), so an
interrupted run loses nothing; :func:`read_done` gives the keys of the tasks already in
the file, which a rerun skips, and :func:`drop_failed` removes the errors, timeouts
and crashes so that they run again. :func:`write_metadata` records the command, the
machine and the profile in ``<name>.json``.
"""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import platform
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from .profiles import Profile
from .tasks import COLUMNS, KEY, task_key

#: Statuses kept by :func:`drop_failed` (a missing package is not retried).
KEPT = ("ok", "not_installed")


def read_results(path: str | Path) -> pd.DataFrame:
    """The result table; empty cells are missing values, other strings stay as written."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def read_done(path: Path) -> set:
    """Keys of the tasks already in a result file (see :func:`benchmarks.tasks.task_key`)."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    frame = pd.read_csv(path)
    return {task_key(*values) for values in frame[KEY].itertuples(index=False)}


def append_rows(path: Path, rows: list[dict]) -> None:
    """Append rows to the CSV, writing the header first if the file is new or empty."""
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow({column: _format(row.get(column)) for column in COLUMNS})


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


def write_metadata(out: Path, profile: Profile, command: str | None, n_tasks: int) -> None:
    """Write ``<out>.json``: command, machine, profile, number of tasks and run dates
    (the first start and the command survive a resumed run)."""
    path = out.with_suffix(".json")
    previous = json.loads(path.read_text()) if path.exists() else {}
    metadata = {
        "command": command or previous.get("command"),
        "machine": machine_info(),
        "profile": _jsonable(asdict(profile)),
        "n_tasks": n_tasks,
        "started": previous.get("started", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        "last_run": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    path.write_text(json.dumps(metadata, indent=2))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
