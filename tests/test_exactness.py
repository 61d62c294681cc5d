"""What "exact" means (``search/exactness.py``): one place, one predicate per meaning."""

import ast
from pathlib import Path

import numpy as np

from nesymres_sklearn.search import exactness
from nesymres_sklearn.search.problem import Problem

PACKAGE = Path(exactness.__file__).resolve().parents[1]
TOLERANCES = (
    "EXACT_FIT", "ROUNDING_FIT", "FVU_FLOOR", "POLYNOMIAL", "POWER_LAW", "SURROGATE", "READABLE", "NEAR_EXACT",
)  # fmt: skip


def test_the_tolerances_keep_their_values():
    values = [getattr(exactness, name) for name in TOLERANCES]
    assert values == [1e-14, 1e-24, 1e-12, 1e-12, 1e-10, 1e-9, 1e-9, 1e-8]


def test_every_tolerance_is_named_in_the_module_docstring():
    assert all(f"``{name}``" in exactness.__doc__ for name in TOLERANCES)


def test_the_problem_asks_the_predicates_in_its_variance():
    problem = Problem(np.zeros((3, 1)), np.array([0.0, 1.0, 2.0]))
    scale = problem.scale
    assert problem.is_exact(exactness.EXACT_FIT * scale) and not problem.is_exact(2 * exactness.EXACT_FIT * scale)
    assert problem.is_exact_to_rounding(exactness.ROUNDING_FIT * scale)
    assert not problem.is_exact_to_rounding(exactness.EXACT_FIT * scale)


def test_no_other_module_holds_a_threshold_of_exactness():
    """A module-level tolerance (a number below 1) whose name says exact (``EXACT_FIT``,
    ``EXACT_FVU``, ...) lives in ``search/exactness.py`` alone."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "exactness.py":
            continue
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                named = isinstance(target, ast.Name) and ("EXACT" in target.id or "FVU_FLOOR" in target.id)
                if named and isinstance(node.value, ast.Constant) and node.value.value < 1:
                    found.append(f"{path.relative_to(PACKAGE)}: {target.id}")
    assert found == []
