"""No committed file records a path of the machine it was made on."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.results import portable_command

ROOT = Path(__file__).resolve().parents[1]
# An absolute home or work path: one that starts with the folder work, root, home or
# Users (not a URL's path, which follows a host name, and not /tmp, a scratch folder of
# any machine).
HOST_PATH = re.compile(r"(?<![\w.:/-])/(?:work|root|home|Users)/[\w.-]")


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    paths = [ROOT / name for name in listed.decode().split("\0") if name]
    return [path for path in paths if path.is_file() and b"\0" not in path.read_bytes()[:8192]]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_no_tracked_text_file_holds_an_absolute_home_or_work_path():
    files = _tracked_text_files()
    assert len(files) > 100  # the scan sees the repository, not an empty listing
    offending = {
        str(path.relative_to(ROOT)): match.group(0)
        for path in files
        if (match := HOST_PATH.search(path.read_text(errors="replace")))
    }
    assert offending == {}


def test_the_host_path_pattern_tells_paths_from_urls():
    work, home = "/" + "work", "/" + "home"  # written apart, so that this file passes its own scan
    assert HOST_PATH.search(f'"out": "{work}/state/run"') and HOST_PATH.search(f"--bank {home}/me/bank")
    assert not HOST_PATH.search("https://space.mit.edu/home/tegmark/aifeynman.html")
    assert not HOST_PATH.search("--out /tmp/window") and not HOST_PATH.search("runs/home/x")


def test_recorded_commands_hold_paths_relative_to_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    command = f"python -m benchmarks.runner --out {tmp_path / 'results' / 'run.csv'} --n-jobs 2"
    assert portable_command(command) == "python -m benchmarks.runner --out results/run.csv --n-jobs 2"
