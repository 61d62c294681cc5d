"""The import graph of ``nesymres_sklearn``, ``pretraining`` and ``benchmarks``: layers,
no cycle, and the modules that must not import torch.

*Upward* imports. The three packages stand in the order of ``PACKAGES``: the estimator,
then the pretraining that trains its networks, then the benchmarks that measure both.
Within a package, ``LAYERS`` lists its sub-packages and top-level modules from the bottom
up. A module may import from its own layer, from the layers before it and from earlier
packages; anything else (a later layer of its package, or a later package) is an upward
import. An import counts wherever it stands, at module level or inside a function. A
package's root ``__init__`` belongs to no layer (it only re-exports) and is below its
package's layers.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["nesymres_sklearn", "pretraining", "benchmarks"]
# Per package, lower layers first.
LAYERS = {
    "nesymres_sklearn": [
        "expression", "shared_setting", "inputs", "network", "search", "operon", "original", "neural_search",
        "estimator", "cli", "__main__",
    ],
    "pretraining": [
        "time_limit", "generator", "bank", "bank_pack", "data", "runtime", "checkpoint", "export", "config",
        "evaluation", "curves", "train", "validate", "window",
    ],
    "benchmarks": [
        "datasets", "metrics", "profiles", "methods", "tasks", "isolation", "results", "backends", "report",
        "runner", "studies",
    ],
}  # fmt: skip
# What unpickling a fitted estimator and predicting with it load, and the command line:
# no torch there (docs/architecture.md). The estimator imports neural_search on its first fit.
TORCH_FREE = [
    "nesymres_sklearn",
    "nesymres_sklearn.estimator",
    "nesymres_sklearn.cli",
    "nesymres_sklearn.__main__",
    "nesymres_sklearn.expression",
    "nesymres_sklearn.expression.export",
    "nesymres_sklearn.expression.operators",
    "nesymres_sklearn.expression.placeholders",
    "nesymres_sklearn.expression.prefix",
    "nesymres_sklearn.expression.program",
    "nesymres_sklearn.expression.skeleton",
    "nesymres_sklearn.expression.tokens",
    "nesymres_sklearn.shared_setting",
    "nesymres_sklearn.search",
    "nesymres_sklearn.search.budget",
    "nesymres_sklearn.search.candidates",
    "nesymres_sklearn.search.decomposition",
    "nesymres_sklearn.search.features",
    "nesymres_sklearn.search.fitting",
    "nesymres_sklearn.search.linear_scaling",
    "nesymres_sklearn.search.polynomial",
    "nesymres_sklearn.search.power_factor",
    "nesymres_sklearn.search.power_law",
    "nesymres_sklearn.search.problem",
    "nesymres_sklearn.search.pruning",
    "nesymres_sklearn.search.readable",
    "nesymres_sklearn.search.scaling",
    "nesymres_sklearn.search.selection",
    "nesymres_sklearn.search.settings",
    "nesymres_sklearn.search.table",
    "nesymres_sklearn.search.variable_support",
    "nesymres_sklearn.operon",
    "nesymres_sklearn.operon.refine",
    "nesymres_sklearn.operon.settings",
    "nesymres_sklearn.operon.stage",
    "nesymres_sklearn.operon.trees",
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}


def import_nodes(tree: ast.Module, module_level: bool):
    """The import statements of ``tree``; with ``module_level``, only those that run on
    import (not in functions, not under ``if TYPE_CHECKING``)."""
    if not module_level:
        yield from (node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom))
        return
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))


def imported_names(path: Path, module_level: bool = False) -> set[str]:
    """Every module name (and ``module.attribute``) that ``path`` imports."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in import_nodes(ast.parse(path.read_text()), module_level):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.update([target] + [f"{target}.{alias.name}" for alias in node.names])
        else:
            found.update(alias.name for alias in node.names)
    return found - {name}


def with_parents(names: set[str]) -> set[str]:
    """Importing ``a.b.c`` runs ``a`` and ``a.b`` first."""
    return {".".join(name.split(".")[:i]) for name in names for i in range(1, name.count(".") + 2)}


GRAPH = {name: imported_names(path) & MODULES.keys() for name, path in MODULES.items()}
LOADS = {
    name: (with_parents(imported_names(path, module_level=True) | {name}) & MODULES.keys()) - {name}
    for name, path in MODULES.items()
}


def rank(name: str) -> tuple[int, int]:
    """(package, layer); a package's root is below its layers."""
    parts = name.split(".")
    return PACKAGES.index(parts[0]), LAYERS[parts[0]].index(parts[1]) if len(parts) > 1 else -1


LAYERED = sorted(name for name in MODULES if "." in name)


def test_every_module_has_a_layer():
    assert [name for name in LAYERED if name.split(".")[1] not in LAYERS[name.split(".")[0]]] == []


@pytest.mark.parametrize("name", LAYERED)
def test_imports_go_down_the_layers(name):
    upward = sorted(target for target in GRAPH[name] if rank(target) > rank(name))
    assert not upward, f"{name} imports from a higher layer: {upward}"


def test_the_expression_layer_needs_neither_torch_nor_scikit_learn():
    for name, path in MODULES.items():
        if name.startswith("nesymres_sklearn.expression"):
            source = path.read_text()
            assert "import torch" not in source and "sklearn" not in source, name


def torch_route(name: str) -> list[str] | None:
    """A chain of module-level imports from ``name`` to a module that imports torch at
    module level; None when there is none."""
    seen, stack = {name}, [[name]]
    while stack:
        route = stack.pop()
        external = imported_names(MODULES[route[-1]], module_level=True) - MODULES.keys()
        if any("torch" in target.split(".") for target in external):
            return route
        for target in sorted(LOADS[route[-1]] - seen):
            seen.add(target)
            stack.append(route + [target])
    return None


@pytest.mark.parametrize("name", TORCH_FREE)
def test_torch_free_modules_import_no_torch(name):
    route = torch_route(name)
    assert route is None, f"{name} imports torch: {' -> '.join(route)}"


def test_the_torch_check_follows_module_level_imports_only():
    assert torch_route("nesymres_sklearn.neural_search") == ["nesymres_sklearn.neural_search"]
    route = torch_route("nesymres_sklearn.original")  # no torch import of its own
    assert route[0] == "nesymres_sklearn.original" and len(route) > 1
    # The estimator imports neural_search inside fit: in the graph, not loaded on import.
    assert "nesymres_sklearn.neural_search" in GRAPH["nesymres_sklearn.estimator"]
    assert "nesymres_sklearn.neural_search" not in LOADS["nesymres_sklearn.estimator"]


def test_no_import_cycle():
    # The package's __init__ reaches the estimator lazily (module __getattr__), not at import.
    graph = {name: targets - {"nesymres_sklearn"} for name, targets in GRAPH.items()}
    visiting, done = set(), set()

    def visit(name, path):
        visiting.add(name)
        for target in graph[name]:
            assert target not in visiting, f"import cycle: {' -> '.join(path + [target])}"
            if target not in done:
                visit(target, path + [target])
        visiting.discard(name)
        done.add(name)

    for name in graph:
        if name not in done:
            visit(name, [name])
