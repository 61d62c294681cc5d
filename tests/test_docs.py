"""The Python blocks of README.md and docs/usage.md run, in order, each page in one
namespace; a block right after ``<!-- docs-test: skip (reason) -->`` is not run."""

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
    assert len(python_blocks("README.md")) == 2 and len(python_blocks("docs/usage.md")) == 4
    assert "Hugging Face Hub" not in "".join(python_blocks("docs/usage.md"))


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/usage.md"])
def test_the_python_blocks_of_the_docs_run(page):
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for block in python_blocks(page):
            exec(compile(block, page, "exec"), namespace)
