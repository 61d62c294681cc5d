"""Issue 66: a constant that changes results is a field of the settings classes. The
numeric module-level constants that remain are listed in ``module_constants.txt``; a new
one (or one that left) fails here until the list says so."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTED = ROOT / "tests" / "module_constants.txt"


def _numeric(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) and _numeric(node.right)
    return False


def module_constants(package: Path, root: Path = ROOT) -> set[str]:
    """``module.NAME`` (dotted from ``root``) of every upper-case module-level name bound to a number."""
    found = set()
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign):
                names, value = [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                names, value = [node.target.id], node.value
            else:
                continue
            found.update(f"{module}.{name}" for name in names if name.isupper() and _numeric(value))
    return found


def listed() -> set[str]:
    return {line.strip() for line in LISTED.read_text().splitlines() if line.strip() and not line.startswith("#")}


def test_the_module_constants_are_the_listed_ones():
    found = module_constants(ROOT / "nesymres_sklearn")
    assert found - listed() == set(), "new module constants: make them settings fields, or list them"
    assert listed() - found == set(), "listed constants that are gone: take them off the list"


def test_the_scan_finds_numbers_and_skips_the_rest(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    source = "A = 1\nB: float = -2e-3\nC = 2 * 3\nD = 'x'\nE = True\nlower = 4\ndef f():\n    F = 5\n"
    (package / "m.py").write_text(source)
    assert module_constants(package, tmp_path) == {"pkg.m.A", "pkg.m.B", "pkg.m.C"}
