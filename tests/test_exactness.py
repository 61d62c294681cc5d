"""What "exact" means (``search/exactness.py``): one place, one predicate per meaning."""

import ast
from pathlib import Path

import numpy as np

from nesymres_sklearn.search import exactness
from nesymres_sklearn.search.exactness import EXACT, Tolerance
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


def _over_decades():
    """``x0 + x3 + 3.5 + 1.4*exp(2.4*x1 + x2)``: the exponential spans some eight
    decades, and most points are the line's."""
    X = np.random.default_rng(0).uniform([4.5, -8.7, -2.8, -0.1], [8.6, 8.4, 3.6, 1.3], (128, 4))
    line = X[:, 0] + X[:, 3] + 3.5
    return X, line, line + 1.4 * np.exp(2.4 * X[:, 1] + X[:, 2])


def test_on_data_over_decades_a_fit_that_misses_most_points_is_neither_exact_nor_tied():
    """The exponential alone leaves a fraction of variance unexplained far below
    ``EXACT_FIT`` while most points are off by a third of their value or more; scaled by the
    typical point's share, the tolerances see it."""
    X, line, y = _over_decades()
    problem = Problem(X, y)
    alone = float(np.mean(line**2))  # the exponential alone: the line is its error
    assert alone / problem.scale < exactness.EXACT_FIT and np.median(line / y) > 0.3
    assert problem.typical_share < 1e-6
    assert not problem.is_exact(alone) and alone / problem.scale > problem.fvu_floor
    assert problem.is_exact(1e-30 * problem.scale)  # the law, to float64's rounding
    # float64's rounding of the largest values stays below the floor
    assert problem.fvu_floor >= exactness.ROUNDING_FIT * np.mean(y**2) / problem.scale


def test_the_typical_share_is_one_unless_the_data_span_decades():
    """Centred targets, a cube, an offset (taken out by the search's scaling) and points
    whose large values weigh nothing keep the tolerances as they were; where most targets
    are 0 the share stops where an exact fit is still at least one exact to rounding."""
    from nesymres_sklearn.search.scaling import Scaling

    X, line, _ = _over_decades()
    x = X[:, 1]
    for y in (line, line - line.mean(), x**3, x * X[:, 2] * X[:, 3]):
        problem = Problem(X, y)
        assert problem.typical_share == 1.0 and problem.fvu_floor == exactness.FVU_FLOOR
    offset = Problem(X, 1e9 + line)
    scaled = Scaling.for_data(X, offset.y, 1e3).forward(offset)
    assert scaled.typical_share == 1.0
    spikes = line.copy()
    spikes[:5] = 1e12  # five points of no weight
    weights = np.where(np.arange(len(line)) < 5, 1e-30, 1.0)
    weights /= weights.mean()
    assert Problem(X, spikes, weights).typical_share == 1.0 and Problem(X, spikes).typical_share < 1e-6
    zeros = Problem(X, np.maximum(x - 2, 0.0))  # most targets 0
    assert zeros.typical_share == exactness.ROUNDING_FIT / exactness.EXACT_FIT
    assert zeros.is_exact(exactness.ROUNDING_FIT * zeros.scale)  # exact to rounding, so exact


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


def test_a_tolerance_to_the_noise_is_a_chi_square_test_of_the_law_s_errors():
    rng = np.random.default_rng(0)
    y = rng.normal(size=2000)
    sd = np.full(2000, 0.1)
    predicted = y + rng.normal(0.0, 0.1, 2000)  # errors of the noise's size
    loss = float(np.mean((y - predicted) ** 2))
    assert Tolerance(sd, 1.5).law_holds(y, predicted, loss, 1.0)
    assert not Tolerance(sd / 2, 1.5).law_holds(y, predicted, loss, 1.0)  # twice the noise given
    assert not EXACT.law_holds(y, predicted, loss, 1.0) and EXACT.exact
    assert EXACT.law_holds(y, y + 1e-14, 1e-28, 1.0)  # exact to rounding
    # the noise of y / m, y**2 and log|y|, to first order
    m = np.full(2000, 4.0)
    assert np.allclose(Tolerance(sd).over(m).sd, 0.025)
    assert np.allclose(Tolerance(sd).of_square(np.full(2000, -3.0)).sd, 0.6)
    assert np.allclose(Tolerance(sd).of_log(np.full(2000, 5.0)).sd, 0.02)
    assert Tolerance(sd).at(slice(0, 10)).sd.shape == (10,)
    assert EXACT.over(m) is EXACT and EXACT.unknowns(128) == 128
    assert Tolerance(sd, most_unknowns=64).unknowns(128) == 64
    # a null vector holds where its residual is the noise's share of it, or exact to rounding
    assert Tolerance(sd, 1.5).null_holds(0.02, 0.01) and not Tolerance(sd, 1.5).null_holds(0.03, 0.01)
    assert EXACT.null_holds(1e-26) and not EXACT.null_holds(1e-22)


def test_a_problem_at_some_points_keeps_their_weights():
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6.0)
    weighted = Problem(X, y, np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    part = weighted.at(np.array([1, 4]))
    assert np.array_equal(part.X, X[[1, 4]]) and np.array_equal(part.y, [1.0, 4.0])
    assert np.array_equal(part.weights, [2.0, 5.0])
    assert Problem(X, y).at(y > 3).weights is None and len(Problem(X, y).at(y > 3).y) == 2


def test_a_rewriting_keeps_every_point_s_relative_error():
    y = np.array([1e-6, 1.0, 1e60])
    exact = y * (1 + 1e-15)
    assert exactness.worst_relative_error(exact, y) < 2e-15
    # the largest value alone fits: the sum of squares cannot tell, the relative errors can
    largest_only = np.array([0.0, 0.0, 1e60])
    assert exactness.worst_relative_error(largest_only, y) == 1.0
    original = exactness.worst_relative_error(exact, y)
    assert not exactness.keeps_every_point(1.0, original)
    assert exactness.keeps_every_point(5e-10, original)  # within the floor
    assert exactness.keeps_every_point(100 * original, original)  # within the rise
    assert exactness.keeps_every_point(1.0, np.inf)  # nothing to keep: an approximation
    assert np.isnan(exactness.worst_relative_error(np.ones(2), np.zeros(2)))
    assert exactness.worst_relative_error(np.array([np.nan, 1.0]), np.ones(2)) == np.inf
