"""The Python blocks of README.md and docs/usage.md run, in order, each page in one
namespace; a block right after ``<!-- docs-test: skip (reason) -->`` is not run. Every
relative link and every cited repository path of the pages exists."""

import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(
    r"(<!-- docs-test: skip \((?P<reason>[^)]+)\) -->\n)?(?P<indent> *)```python\n(?P<code>.*?)\n(?P=indent)```", re.S
)


def python_blocks(page: str) -> list[str]:
    """The runnable Python blocks of ``page``, dedented."""
    blocks = []
    for match in BLOCK.finditer((ROOT / page).read_text()):
        if match["reason"] is None:
            indent = len(match["indent"])
            blocks.append("\n".join(line[indent:] for line in match["code"].splitlines()))
    return blocks


def test_blocks_are_found_and_skips_say_why():
    assert len(python_blocks("README.md")) == 2 and len(python_blocks("docs/usage.md")) == 13
    assert "Hugging Face Hub" not in "".join(python_blocks("docs/usage.md"))


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/usage.md"])
def test_the_python_blocks_of_the_docs_run(page):
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for block in python_blocks(page):
            exec(compile(block, page, "exec"), namespace)


PAGES = ["README.md", "benchmarks/results/README.md", *(f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CITED = re.compile(r"`((?:benchmarks|docs|tests|nesymres_sklearn)/[^`\s<]+)`")


def alternatives(path: str) -> list[str]:
    """``a/{b,c}.md`` as ``a/b.md`` and ``a/c.md``."""
    match = re.search(r"\{([^}]+)\}", path)
    if match is None:
        return [path]
    return [
        full
        for part in match[1].split(",")
        for full in alternatives(path[: match.start()] + part + path[match.end() :])
    ]


def test_alternatives_expand_every_brace():
    assert alternatives("r/{a,b}-{x,y}.md") == ["r/a-x.md", "r/a-y.md", "r/b-x.md", "r/b-y.md"]
    assert alternatives("r/a.md") == ["r/a.md"]


def gallery_example(target: str) -> bool:
    """A link to a gallery page (``auto_examples/NAME``, written by the docs build) whose
    example ``examples/NAME.py`` exists."""
    name = target.removeprefix("auto_examples/").removesuffix(".html")
    return target.startswith("auto_examples/") and (name == "index" or (ROOT / "examples" / f"{name}.py").exists())


@pytest.mark.parametrize("page", PAGES)
def test_links_and_cited_paths_of_the_docs_exist(page):
    text = (ROOT / page).read_text()
    folder = (ROOT / page).parent
    targets = [target.split("#")[0] for target in LINK.findall(text) if not target.startswith(("http", "#"))]
    missing = [target for target in targets if not (folder / target).exists() and not gallery_example(target)]
    for cited in CITED.findall(text):
        missing += [path for path in alternatives(cited.rstrip(".,:;")) if not list(ROOT.glob(path))]
    assert not missing, f"{page} names files that do not exist: {missing}"


RESULTS = ROOT / "benchmarks" / "results"


def cited_results(page: str) -> set[Path]:
    """The files of ``benchmarks/results/`` that ``page`` cites: a path from the repository
    root in backticks (``{a,b}`` alternatives and ``*`` globs expanded; a folder, written
    with its ``/``, cites every file in it) or a relative link to a file."""
    text = (ROOT / page).read_text()
    paths = []
    for cited in CITED.findall(text):
        for path in alternatives(cited.rstrip(".,:;")):
            paths += ROOT.glob(path)
    folder = (ROOT / page).parent
    paths += [folder / target.split("#")[0] for target in LINK.findall(text) if not target.startswith(("http", "#"))]
    files = set()
    for path in paths:
        path = path.resolve()
        if RESULTS in path.parents:
            files |= {file for file in path.rglob("*") if file.is_file()} if path.is_dir() else {path}
    return files


def test_cited_results_expand_alternatives_globs_and_folders():
    cited = cited_results("docs/benchmarks.md")
    assert RESULTS / "fastsrb" / "fastsrb-1s-constants.csv" in cited  # fastsrb-1s-constants.*
    assert RESULTS / "time-contract" / "curve-warm-operon-fitting.json" in cited  # {csv,json,md}
    assert RESULTS / "model-comparison" / "v8" / "v8.csv" in cited_results("docs/model-card.md")  # v8/


def test_every_result_file_is_cited_by_a_page_and_the_results_stay_small():
    """benchmarks/results/ holds what the pages cite (git keeps the rest), under 5 MB."""
    files = {path for path in RESULTS.rglob("*") if path.is_file() and path != RESULTS / "README.md"}
    cited = set().union(*(cited_results(page) for page in PAGES))
    uncited = sorted(str(path.relative_to(ROOT)) for path in files - cited)
    assert not uncited, f"cite these in a page of {PAGES} or remove them (git keeps them): {uncited}"
    assert sum(path.stat().st_size for path in files) < 5_000_000
