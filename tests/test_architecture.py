"""The package's layers import only downwards, and its import graph has no cycle."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nesymres_sklearn"
# Lower layers first; a module may import from its own layer and the ones before it.
LAYERS = ["expression", "network", "search", "operon", "original", "neural_search", "estimator", "cli", "__main__"]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Package modules that ``path`` imports at module level or inside functions."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {name: imported_modules(path) for name, path in MODULES.items()}


def layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


@pytest.mark.parametrize("name", sorted(n for n in MODULES if layer(n) is not None))
def test_imports_go_down_the_layers(name):
    upward = [target for target in GRAPH[name] if layer(target) is not None and layer(target) > layer(name)]
    assert not upward, f"{name} imports from a higher layer: {upward}"


def test_the_expression_layer_needs_neither_torch_nor_scikit_learn():
    for name, path in MODULES.items():
        if layer(name) == 0:
            source = path.read_text()
            assert "import torch" not in source and "sklearn" not in source, name


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
