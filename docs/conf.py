"""Sphinx configuration of the documentation site: ``sphinx-build -W -b html docs docs/_build/html``.

Built offline (no intersphinx), warnings as errors (``-W``): every link between pages,
every Markdown heading anchor (MyST) and every label must resolve (``nitpicky``), so
that a broken internal link fails the build; Python names that the reference does not
document are let through (below). The gallery (``examples/``) runs at every build, on
the bundled model, whatever an earlier build left in ``docs/auto_examples``;
``tests/test_docs.py`` runs this build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import nesymres_sklearn  # noqa: E402

project = "nesymres-sklearn"
author = "nesymres-sklearn contributors"
copyright = "2026, nesymres-sklearn contributors"
release = version = nesymres_sklearn.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
nitpicky = True
# Types named in numpydoc's "Parameters" lines are prose, not cross-references.
numpydoc_xref_param_type = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_typehints = "none"
nitpick_ignore_regex = [
    # Python objects that the reference does not document: third-party ones (no
    # intersphinx, built offline) and the package's internals that its docstrings name.
    # Every page, section, label and gallery reference must resolve.
    (r"py:.*", r".*"),
]

myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header"]

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    # Every build runs every example: the gallery's output lands in docs/auto_examples,
    # where an earlier build (the test suite's) left it, and a build that reused it ran
    # 0 of 6 examples, its outputs as stale as the code they came from (issue 65).
    "run_stale_examples": True,
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
    "show_memory": False,
}

html_theme = "pydata_sphinx_theme"
html_title = "nesymres-sklearn"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path: list[str] = []
