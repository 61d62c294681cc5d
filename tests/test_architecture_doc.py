"""``docs/architecture.md`` names every module of the package and of ``pretraining/``,
every module it names exists, and so do the functions, classes, fitted attributes and
keys of ``timings_`` it cites: the document cannot drift from the code."""

import ast
import builtins
import re
from pathlib import Path

from nesymres_sklearn.attributes import PER_TARGET, timed_stages
from nesymres_sklearn.search.looks import LOOK_NAMES

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


# The names the document cites: in backticks, and in its diagrams the words that hold
# ``_``, ``.``, ``/`` or a call (``SearchSettings.budget(max_time, refined)``).
IDENTIFIER = r"[A-Za-z_]\w*"
CODE_NAME = re.compile(rf"^((?:{IDENTIFIER}/)*{IDENTIFIER}(?:\.{IDENTIFIER})*)(\(.*\))?(\[.*\])?$")
# Cited as written elsewhere: mathematics and physical constants, SymPy's and torch's names.
NOT_OURS = {"x_j", "k_B", "hbar", "sqrt(f**2)", "lambdify", "nn.Module", "dataclasses.replace(budget, max_time=None)"}
# Set by scikit-learn's validation, or by several targets.
OTHER_ATTRIBUTES = {"n_features_in_", "feature_names_in_", "estimators_"}


def cited_names(text: str) -> list[str]:
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    tokens = re.findall(r"`([^`]+)`", re.sub(r"```\n.*?```", "", text, flags=re.S))
    for block in blocks:
        tokens += [
            word for word in re.findall(r"[\w./]+(?:\([^)]*\))?", block) if re.search(r"[_./(]|[A-Z][a-z]+[A-Z]", word)
        ]
    return [token.strip().rstrip("=") for token in tokens if token.strip() not in NOT_OURS]


def defined_names() -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """Per module (its path without ``.py``, package-relative for the estimator's), the
    names it defines (functions, classes, assignments, parameters, attributes and, in the
    package, the strings that are names, such as the keys of ``timings_``); per class,
    its members; and every such name."""
    modules, classes, everywhere = {}, {}, set()
    for package in ("nesymres_sklearn", "pretraining", "benchmarks", "tests"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            names = _defined(ast.walk(tree), strings=package == "nesymres_sklearn")
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    classes.setdefault(node.name, set()).update(_defined(ast.walk(node), strings=False))
            base = ROOT / "nesymres_sklearn" if package == "nesymres_sklearn" else ROOT
            modules[str(path.relative_to(base).with_suffix("")).removesuffix("/__init__")] = names
            everywhere |= names | {path.stem}
    return modules, classes, everywhere


def _defined(nodes, strings: bool) -> set[str]:
    found = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            found.add(node.arg)
        elif strings and isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            found.add(node.value)
    return found


def unresolved(tokens: list[str]) -> list[str]:
    """The ``tokens`` that name nothing in the code: ``module.name`` (a module by its path
    or its name), ``Class.member``, or a name defined somewhere."""
    modules, classes, everywhere = defined_names()
    by_stem: dict[str, set[str]] = {}
    for key, names in modules.items():
        by_stem.setdefault(key.split("/")[-1], set()).update(names)
    folders = {
        path.name
        for top in ("nesymres_sklearn", "pretraining", "benchmarks", "tests", "docs")
        for path in [ROOT / top, *(ROOT / top).glob("**/")]
        if path.is_dir()
    }
    missing = []
    for token in tokens:
        match = CODE_NAME.match(token)
        if match is None or token.endswith(".py"):
            continue
        path, _, members = match[1].partition(".")
        if "/" in path:
            if path.split("/")[0] not in folders:
                continue  # arithmetic, such as c/g
            found = path in modules or (ROOT / "nesymres_sklearn" / path).is_dir() or (ROOT / path).is_dir()
            if not found or not set(filter(None, members.split("."))) <= modules.get(path, set()):
                missing.append(token)
        elif members and path in by_stem:
            missing += [] if set(members.split(".")) <= by_stem[path] else [token]
        elif members and path in classes:
            missing += [] if set(members.split(".")) <= classes[path] else [token]
        elif not all(part in everywhere or hasattr(builtins, part) for part in match[1].split(".")):
            missing.append(token)
    return missing


def test_every_name_the_document_cites_exists():
    assert unresolved(cited_names(DOC.read_text())) == []


def test_the_check_finds_a_stale_name():
    assert unresolved(
        ["_validated", "inputs.validated", "neural_search.nowhere", "Route.back", "search/anytime.search"]
    ) == [
        "_validated",
        "neural_search.nowhere",
    ]


def test_the_fitted_attributes_and_timings_the_document_names_are_the_estimator_s():
    text = DOC.read_text()
    attributes = set(re.findall(r"`([A-Za-z]\w*_)(?:\[[^`]*\])?`", text))
    assert attributes <= set(PER_TARGET) | OTHER_ATTRIBUTES
    [listed] = re.findall(r"`timings_` holds (.*?)\(", text, flags=re.S)
    assert tuple(re.findall(r"`(\w+)`", listed)) == timed_stages(LOOK_NAMES)


def test_the_fit_order_the_document_gives_is_plan_s(tiny_model):
    """Issue 66: the order of a fit's steps, as the document lists them, is the order of
    ``plan_``'s units in a fit that runs each of them."""
    import numpy as np

    from nesymres_sklearn import NeSymReSRegressor
    from nesymres_sklearn.operon.settings import OperonSettings
    from nesymres_sklearn.search.settings import SearchSettings

    [listed] = re.findall(r"`plan_` lists its steps in this order: (.*?)\(", DOC.read_text(), flags=re.S)
    order = re.findall(r"`(\w+)`", listed)
    X = np.random.default_rng(3).uniform(1, 5, (64, 2))
    fit = NeSymReSRegressor(
        model=str(tiny_model),
        beam_size=4,
        random_state=0,
        max_time=1e6,
        operon_settings=OperonSettings(population_size=20, generations=2, max_length=20),
        search_settings=SearchSettings(continuation_steps=2),
    ).fit(X, np.exp(-X[:, 0] / X[:, 1]) * np.sin(1.3 * X[:, 1]))
    units = [unit.split(":")[0].split()[0] for unit in fit.plan_["unit"]]
    ran = list(dict.fromkeys(units))  # each unit's first appearance, in order
    assert [unit for unit in order if unit in ran] == ran and set(ran) == set(order)
