"""The Python blocks of README.md and docs/usage.md run, in order, each page in one
namespace; a block right after ``<!-- docs-test: skip (reason) -->`` is not run. Every
relative link and every cited repository path of the pages exists."""

import itertools
import re
import runpy
import subprocess
import sys
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
    assert len(python_blocks("README.md")) == 1 and len(python_blocks("docs/usage.md")) == 13
    assert len(python_blocks("docs/getting-started.md")) == 2
    assert "Hugging Face Hub" not in "".join(python_blocks("docs/usage.md"))


# ``print(...)  # out: TEXT`` shows what the line prints: TEXT, then optionally
# ``  # a remark``. ``print(...)  # out:`` with nothing after shows the lines of comment
# that follow it, and a last ``# ...`` shows only the first lines. The docs test checks
# them: the same words, numbers to 3 significant digits, any run of spaces as one.
OUTPUT = re.compile(r"^(?P<indent> *)print\((?P<args>.*)\)\s+# out:(?: (?P<expected>.*?))?(?:  # .*)?$")
COMMENT = re.compile(r"^ *# ?(?P<text>.*)$")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def checked_outputs(block: str) -> str:
    """``block`` with each ``print(ARGS)  # out: TEXT`` line turned into a call that
    checks the printed text against TEXT."""
    lines = block.splitlines()
    for number, line in enumerate(lines):
        match = OUTPUT.match(line)
        if match:
            expected = match["expected"]
            if expected is None:
                shown = [COMMENT.match(after) for after in lines[number + 1 :]]
                expected = "\n".join(comment["text"] for comment in itertools.takewhile(bool, shown))
            lines[number] = f"{match['indent']}__check_output__({expected!r}, {match['args']})"
    return "\n".join(lines)


def same_output(printed: str, expected: str) -> bool:
    """The same text, and the same numbers to 3 significant digits (exact integers);
    an expected text ending in a line ``...`` is the first lines of the printed one."""
    if expected.endswith("\n..."):
        expected = expected.removesuffix("\n...")
        printed = "\n".join(printed.splitlines()[: len(expected.splitlines())])
    printed, expected = " ".join(printed.split()), " ".join(expected.split())
    if NUMBER.sub("#", printed) != NUMBER.sub("#", expected):
        return False
    pairs = zip(NUMBER.findall(printed), NUMBER.findall(expected))
    return all(float(a) == pytest.approx(float(b), rel=1e-3, abs=1e-12) for a, b in pairs)


def test_outputs_are_compared_text_exact_and_numbers_to_three_digits():
    assert same_output("2.50100789345431*x0/x1", "2.50100789345428*x0/x1")
    assert same_output("[0.0507 0.0507]", "[0.05072  0.0507]")
    assert not same_output("2.6*x0/x1", "2.5*x0/x1") and not same_output("x0*cos(x1)", "x0*sin(x1)")
    assert same_output("a 1\nb  2\nc 3", "a 1\nb 2\n...") and not same_output("a 1\nc 2", "a 1\nb 2\n...")
    block = checked_outputs("print(reg.equation(), 3)  # out: x0 3  # a remark\nprint(4)  # four")
    assert block == "__check_output__('x0 3', reg.equation(), 3)\nprint(4)  # four"
    block = checked_outputs("print(reg)  # out:\n# a\n#  b 1\n# ...\nx = 1")
    assert block == "__check_output__('a\\n b 1\\n...', reg)\n# a\n#  b 1\n# ...\nx = 1"


def check_output(page: str, failures: list):
    def check(expected, *args):
        printed = " ".join(str(arg) for arg in args)
        if not same_output(printed, expected):
            failures.append(f"{page}: printed {printed!r}, the page shows {expected!r}")

    return check


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/usage.md", "docs/getting-started.md"])
def test_the_python_blocks_of_the_docs_run_and_print_what_they_show(page):
    failures = []
    namespace = {"__check_output__": check_output(page, failures)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for block in python_blocks(page):
            exec(compile(checked_outputs(block), page, "exec"), namespace)
    assert not failures, "\n".join(failures)


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
    assert RESULTS / "fastsrb" / "fastsrb-10s-plan.csv" in cited_results("docs/history.md")  # fastsrb-10s-plan.*
    assert RESULTS / "time-contract" / "curve-warm-operon-fitting.json" in cited  # {csv,json,md}
    assert RESULTS / "model-comparison" / "v8" / "v8.csv" in cited_results("docs/model-card.md")  # v8/


def test_every_result_file_is_cited_by_a_page_and_the_results_stay_small():
    """benchmarks/results/ holds what the pages cite (git keeps the rest), under 5 MB."""
    files = {path for path in RESULTS.rglob("*") if path.is_file() and path != RESULTS / "README.md"}
    cited = set().union(*(cited_results(page) for page in PAGES))
    uncited = sorted(str(path.relative_to(ROOT)) for path in files - cited)
    assert not uncited, f"cite these in a page of {PAGES} or remove them (git keeps them): {uncited}"
    assert sum(path.stat().st_size for path in files) < 5_000_000


@pytest.mark.slow
def test_the_documentation_site_builds_without_a_warning_and_runs_the_gallery(tmp_path):
    """``sphinx-build -W -b html docs``: offline, every warning an error (a broken internal
    link or heading anchor among them), the gallery's examples run; the API reference
    names every public name and every parameter of the estimator."""
    from nesymres_sklearn import NeSymReSRegressor, __all__

    out = tmp_path / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-5000:]
    api = (out / "api.html").read_text()
    assert all(f'id="nesymres_sklearn.{name}"' in api for name in __all__)
    assert all(f"<strong>{name}</strong>" in api for name in NeSymReSRegressor().get_params())
    examples = sorted(path.stem for path in (ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 6
    for example in examples:
        assert (out / "_images" / f"sphx_glr_{example}_001.png").exists(), example


def test_every_docs_build_runs_every_example_whatever_an_earlier_build_left():
    """The gallery writes into ``docs/auto_examples``; a build after the test suite's
    reused that output and ran 0 of 6 examples (issue 65)."""
    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))
    assert conf["sphinx_gallery_conf"]["run_stale_examples"] is True


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub and MyST write them."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_anchors_are_github_slugs():
    assert anchors(ROOT / "docs" / "benchmarks.md") >= {
        "does-max_time-hold",
        "fastsrb-the-peer-benchmark-issue-52-model-v8-2026-11-28",
    }


@pytest.mark.parametrize("page", PAGES)
def test_links_to_a_heading_of_a_page_find_it(page):
    """The docs build checks the anchors of the pages under docs/; this checks them on
    every page, README.md and the results' index included."""
    folder = (ROOT / page).parent
    missing = []
    for target in LINK.findall((ROOT / page).read_text()):
        path, _, anchor = target.partition("#")
        local = anchor and path.endswith(".md") and not target.startswith("http")
        if local and anchor not in anchors(folder / path):
            missing.append(target)
    assert not missing, f"{page} links to headings that do not exist: {missing}"
