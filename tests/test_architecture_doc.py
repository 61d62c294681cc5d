"""``docs/architecture.md`` names every module of the package and of ``pretraining/``,
and every module it names exists: the document cannot drift from the code."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
# A module path as the document writes it: relative to nesymres_sklearn/, or starting
# with pretraining/ or benchmarks/ (a path inside a longer one, such as a test's, is not one).
NAMED = re.compile(r"(?<![\w/.])((?:[a-z_]+/)*[a-z_]+\.py)\b")


def named_paths(text: str) -> set[Path]:
    """The files the document names, as paths from the repository root."""
    found = set()
    for name in NAMED.findall(text):
        top = name.split("/")[0]
        found.add(ROOT / name if top in ("pretraining", "benchmarks", "tests") else ROOT / "nesymres_sklearn" / name)
    return found


def modules() -> set[Path]:
    """Every module of the package and of pretraining/, package roots aside."""
    return {
        path
        for package in ("nesymres_sklearn", "pretraining")
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py"
    }


def test_every_module_is_named_in_the_architecture_document():
    missing = sorted(str(path.relative_to(ROOT)) for path in modules() - named_paths(DOC.read_text()))
    assert missing == [], f"docs/architecture.md does not name {missing}"


def test_every_module_the_document_names_exists():
    absent = sorted(str(path.relative_to(ROOT)) for path in named_paths(DOC.read_text()) if not path.is_file())
    assert absent == [], f"docs/architecture.md names files that do not exist: {absent}"


def test_the_check_reads_paths_as_the_document_writes_them():
    text = "`search/budget.py`, `pretraining/train.py` and `tests/test_x.py`; see ../a/b.py"
    assert named_paths(text) == {
        ROOT / "nesymres_sklearn" / "search" / "budget.py",
        ROOT / "pretraining" / "train.py",
        ROOT / "tests" / "test_x.py",
    }
    assert ROOT / "nesymres_sklearn" / "search" / "budget.py" in modules()
    assert ROOT / "nesymres_sklearn" / "search" / "__init__.py" not in modules()
