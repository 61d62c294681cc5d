"""The import graph of ``nesymres_sklearn``, ``pretraining`` and ``benchmarks``: layers,
no cycle, and the modules that must not import torch.

*Upward* imports. The three packages stand in the order of ``PACKAGES``: the estimator,
then the pretraining that trains its networks, then the benchmarks that measure both.
Within a package, ``LAYERS`` lists its sub-packages and top-level modules from the bottom
up, and likewise within a sub-package that has an entry of its own (``search``). A module
may import from its own layer, from the layers before it and from earlier packages;
anything else (a later layer of its package or sub-package, or a later package) is an
upward import. An import counts wherever it stands, at module level or inside a function. A
package's root ``__init__`` belongs to no layer (it only re-exports) and is below its
package's layers.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["nesymres_sklearn", "pretraining", "benchmarks"]
# Per package, lower layers first.
LAYERS = {
    "nesymres_sklearn": [
        "expression", "shared_setting", "progress", "inputs", "attributes", "network", "search", "writing",
        "units", "operon", "original", "parameters", "neural_search", "uncertainty", "callables", "guesses",
        "restrictions", "pipeline", "multioutput", "estimator", "plot", "cli", "__main__",
    ],
    "nesymres_sklearn.search": [
        "exactness", "budget", "settings", "problem", "fitted", "views", "scaling", "decoding", "fitting", "noise",
        "selection", "variables", "pursuit", "offset_exponential", "offset_power", "identity_systems", "identities",
        "identities_under_noise", "looks", "anytime", "scheduler",
    ],
    "pretraining": [
        "time_limit", "generator", "bank", "bank_pack", "bank_merge", "data", "device_data", "runtime", "checkpoint",
        "export", "config", "evaluation", "curves", "widen", "train", "validate", "window",
    ],
    "benchmarks": [
        "datasets", "metrics", "profiles", "methods", "tasks", "isolation", "results", "backends", "report",
        "runner", "studies", "fastsrb",
    ],
}  # fmt: skip
# What unpickling a fitted estimator and predicting with it load, and the command line:
# no torch there (docs/architecture.md). The estimator imports neural_search on its first fit.
TORCH_FREE = [
    "nesymres_sklearn",
    "nesymres_sklearn.estimator",
    "nesymres_sklearn.cli",
    "nesymres_sklearn.callables",
    "nesymres_sklearn.writing",
    "nesymres_sklearn.writing.display",
    "nesymres_sklearn.writing.export",
    "nesymres_sklearn.writing.folding",
    "nesymres_sklearn.writing.readable",
    "nesymres_sklearn.writing.signs",
    "nesymres_sklearn.writing.writer",
    "nesymres_sklearn.guesses",
    "nesymres_sklearn.restrictions",
    "nesymres_sklearn.multioutput",
    "nesymres_sklearn.plot",
    "nesymres_sklearn.uncertainty",
    "nesymres_sklearn.__main__",
    "nesymres_sklearn.expression",
    "nesymres_sklearn.expression.monomial",
    "nesymres_sklearn.expression.operators",
    "nesymres_sklearn.expression.placeholders",
    "nesymres_sklearn.expression.prefix",
    "nesymres_sklearn.expression.program",
    "nesymres_sklearn.expression.skeleton",
    "nesymres_sklearn.expression.tokens",
    "nesymres_sklearn.shared_setting",
    "nesymres_sklearn.progress",
    "nesymres_sklearn.inputs",
    "nesymres_sklearn.attributes",
    "nesymres_sklearn.search",
    "nesymres_sklearn.search.budget",
    "nesymres_sklearn.search.problem",
    "nesymres_sklearn.search.exactness",
    "nesymres_sklearn.search.fitted",
    "nesymres_sklearn.search.identity_systems",
    "nesymres_sklearn.search.identities",
    "nesymres_sklearn.search.identities_under_noise",
    "nesymres_sklearn.search.pursuit",
    "nesymres_sklearn.search.offset_exponential",
    "nesymres_sklearn.search.offset_power",
    "nesymres_sklearn.search.noise",
    "nesymres_sklearn.search.scaling",
    "nesymres_sklearn.search.views",
    "nesymres_sklearn.search.settings",
    "nesymres_sklearn.search.fitting",
    "nesymres_sklearn.search.fitting.candidates",
    "nesymres_sklearn.search.fitting.constants",
    "nesymres_sklearn.search.fitting.linear_scaling",
    "nesymres_sklearn.search.fitting.polynomial",
    "nesymres_sklearn.search.selection",
    "nesymres_sklearn.search.selection.final",
    "nesymres_sklearn.search.selection.pruning",
    "nesymres_sklearn.search.selection.scores",
    "nesymres_sklearn.search.selection.table",
    "nesymres_sklearn.search.selection.variable_support",
    "nesymres_sklearn.search.variables",
    "nesymres_sklearn.search.variables.assembly",
    "nesymres_sklearn.search.variables.decomposition",
    "nesymres_sklearn.search.variables.features",
    "nesymres_sklearn.search.variables.partial_line",
    "nesymres_sklearn.search.variables.power_factor",
    "nesymres_sklearn.search.variables.power_law",
    "nesymres_sklearn.search.variables.reduction",
    "nesymres_sklearn.search.looks",
    "nesymres_sklearn.search.looks.residual",
    "nesymres_sklearn.search.looks.reciprocal",
    "nesymres_sklearn.search.looks.inverted",
    "nesymres_sklearn.search.looks.exhaustive",
    "nesymres_sklearn.units",
    "nesymres_sklearn.units.parsing",
    "nesymres_sklearn.units.groups",
    "nesymres_sklearn.units.consistency",
    "nesymres_sklearn.units.constants",
    "nesymres_sklearn.units.stage",
    "nesymres_sklearn.search.variables.routing",
    "nesymres_sklearn.search.variables.surrogate",
    "nesymres_sklearn.operon",
    "nesymres_sklearn.operon.plan",
    "nesymres_sklearn.operon.refine",
    "nesymres_sklearn.operon.settings",
    "nesymres_sklearn.operon.stage",
    "nesymres_sklearn.operon.trees",
    "nesymres_sklearn.operon.fitting",
    "nesymres_sklearn.operon.islands",
    "nesymres_sklearn.search.scheduler",
    "nesymres_sklearn.parameters",
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


def layers_of(name: str) -> list[tuple[list[str], str]]:
    """For each layered level above ``name``: that level's layers and ``name``'s part there."""
    parts = name.split(".")
    levels = []
    for depth in range(1, len(parts)):
        layers = LAYERS.get(".".join(parts[:depth]))
        if layers is None:
            break
        levels.append((layers, parts[depth]))
    return levels


def rank(name: str) -> tuple[int, ...]:
    """(package, layer, layer within a layered sub-package, ...); a package's root is
    below its layers."""
    return (PACKAGES.index(name.split(".")[0]), *(layers.index(part) for layers, part in layers_of(name)))


LAYERED = sorted(name for name in MODULES if "." in name)


def test_every_module_has_a_layer():
    assert [name for name in LAYERED if any(part not in layers for layers, part in layers_of(name))] == []


def test_a_sub_package_import_goes_up_when_it_goes_to_a_later_layer():
    assert rank("nesymres_sklearn.search.variables.routing") > rank("nesymres_sklearn.search.selection.table")
    assert rank("nesymres_sklearn.search.budget") < rank("nesymres_sklearn.search.fitting.constants")
    assert rank("nesymres_sklearn.search") < rank("nesymres_sklearn.search.budget") < rank("nesymres_sklearn.operon")


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
    # The estimator imports the pipeline inside fit: in the graph, not loaded on import.
    assert "nesymres_sklearn.pipeline" in GRAPH["nesymres_sklearn.estimator"]
    assert "nesymres_sklearn.pipeline" not in LOADS["nesymres_sklearn.estimator"]


def test_the_estimator_is_thin():
    """Issue 66: the estimator holds parameters, validation and fitted attributes; it
    imports at most six of the package's modules, and only the pipeline (which loads
    torch) inside a function."""
    path = MODULES["nesymres_sklearn.estimator"]
    modules = {name for name in GRAPH["nesymres_sklearn.estimator"] if name != "nesymres_sklearn"}
    assert len(modules) <= 6, sorted(modules)
    deferred = imported_names(path) - imported_names(path, module_level=True)
    assert (deferred & MODULES.keys()) - {"nesymres_sklearn"} == {"nesymres_sklearn.pipeline"}
    assert len(path.read_text().splitlines()) < 300


def methods(node: ast.ClassDef) -> dict[str, list[str]]:
    """The methods a class defines, each with its parameters after ``self``."""
    return {
        item.name: [arg.arg for arg in item.args.args[1:]]
        for item in node.body
        if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
    }


def view_classes() -> dict[str, dict[str, list[str]]]:
    """Every class of the package that maps a law back (defines ``back``): ``module.Class`` -> its methods."""
    found = {}
    for name, path in MODULES.items():
        if name.startswith("nesymres_sklearn"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef) and "back" in methods(node):
                    found[f"{name}.{node.name}"] = methods(node)
    return found


def test_every_view_implements_the_views_protocol():
    """Issue 66: scaling, the route and the dimensionless groups change the problem and
    map the answer back through one protocol (``search/views.py``'s ``View``), with its
    methods' parameters."""
    views = view_classes()
    protocol = views.pop("nesymres_sklearn.search.views.View")
    assert set(protocol) == {"forward", "back", "back_values", "back_columns", "symbols"}
    assert {
        "nesymres_sklearn.search.scaling.Scaling",
        "nesymres_sklearn.search.variables.routing.Route",
        "nesymres_sklearn.units.stage.Dimensionless",
        "nesymres_sklearn.search.views.Identity",
        "nesymres_sklearn.search.views.Chain",
    } <= set(views)
    for name, defined in views.items():
        assert {method: defined.get(method) for method in protocol} == protocol, name


def test_importing_the_estimator_loads_no_fitting_machinery():
    """Issue 53: the import took 2.5-3.9 s. torch, SymPy, pint and pyoperon load with the
    first fit (timings_["loading"]); pandas too, unless scikit-learn's own base imports it
    (``sklearn.utils.fixes`` does when it is installed). A fresh interpreter."""
    code = (
        "import sys\n"
        "heavy = ('torch', 'sympy', 'pandas', 'pint', 'pyoperon', 'matplotlib')\n"
        "import sklearn.base\n"
        "before = set(sys.modules)\n"
        "from nesymres_sklearn import NeSymReSRegressor\n"
        "NeSymReSRegressor(max_time=1.0).get_params()\n"
        "print(sorted(m for m in heavy if m in set(sys.modules) - before), 'sympy' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.splitlines()[-1] == "[] False"


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
