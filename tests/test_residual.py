import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitted import Fitted, mse
from nesymres_sklearn.search.looks.residual import residual_candidates
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.variables.assembly import kept_fits

# x4*x5 - x3 + x0*x1 + sin(x2) on U(-3, 3): the network, reading x3, x4, x5, writes the
# first two terms; the rest depends on x0, x1, x2 only.
FIRST = Skeleton(("add", "mul", "x_5", "x_6", "mul", "c", "x_4"))
REST = Skeleton(("add", "mul", "c", "mul", "x_1", "x_2", "sin", "x_3"))


def _problem():
    X = np.random.default_rng(0).uniform(-3, 3, (200, 6))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]
    return Problem(X, y)


def _first_fit(problem: Problem, slope: float = -0.6):
    """The network's best fit of the example, its slope off as when the rest is noise."""
    constants = np.array([slope])
    return Fitted(FIRST, constants, mse(FIRST.program, problem.X, problem.y, constants))


class RecordingSolver:
    """A stand-in for the network: the rest's skeleton, fitted, for any part."""

    def __init__(self):
        self.parts: list[Problem] = []

    def __call__(self, part: Problem):
        self.parts.append(part)
        constants = np.array([0.9])
        return [Fitted(REST, constants, mse(REST.program, part.X, part.y, constants))]


def test_the_network_reads_the_features_most_relevant_to_the_residual_and_its_fit_completes_the_law():
    problem, solve = _problem(), RecordingSolver()
    [(skeleton, constants, loss)] = residual_candidates(problem, _first_fit(problem), np.array([3, 4, 5]), 3, 0, solve)
    [part] = solve.parts
    np.testing.assert_array_equal(part.X, problem.X[:, [0, 1, 2]])
    np.testing.assert_allclose(part.y, problem.y - FIRST.program(problem.X, np.array([-0.6])))
    assert {f"x_{k}" for k in range(1, 7)} <= set(skeleton.tokens)  # f + g over all features
    assert problem.is_exact(loss)  # the refit corrects f's slope and g's scale together
    np.testing.assert_allclose(skeleton.program(problem.X, constants), problem.y, atol=1e-6)


def test_nothing_is_searched_after_an_exact_fit():
    problem, solve = _problem(), RecordingSolver()
    exact = Skeleton(("add", "add", "mul", "x_1", "x_2", "sin", "x_3", "add", "mul", "x_5", "x_6", "mul", "c", "x_4"))
    constants = np.array([-1.0])
    fitted = (exact, constants, mse(exact.program, problem.X, problem.y, constants))
    assert residual_candidates(problem, fitted, np.array([3, 4, 5]), 3, 0, solve) == []
    assert solve.parts == []


def test_nothing_is_searched_when_the_residual_depends_most_on_what_the_network_read():
    """Neither the network nor a line: the rest, ``x0*x1 + sin(x2) - 0.4*x3``, is no line worth its terms."""
    problem, solve = _problem(), RecordingSolver()
    assert residual_candidates(problem, _first_fit(problem), np.array([0, 1, 2]), 3, 0, solve) == []
    assert solve.parts == []


def test_the_residuals_line_over_every_feature_completes_a_law_whose_rest_is_linear():
    """``exp(x0 + x1) + 2*x2 - x4``: the first fit holds the exponential (its scale a
    little off), the rest of the residual is a line of two of the five features; the
    refit of the sum makes it exact, and the features the line does not need stay out."""
    X = np.random.default_rng(1).uniform(0, 2, (200, 5))
    problem = Problem(X, np.exp(X[:, 0] + X[:, 1]) + 2 * X[:, 2] - X[:, 4])
    first = Skeleton(("mul", "c", "exp", "add", "x_1", "x_2"))
    constants = np.array([1.01])
    fitted = Fitted(first, constants, mse(first.program, X, problem.y, constants))
    [line] = residual_candidates(problem, fitted, np.array([0, 1, 3]), 3, 0, lambda part: [])
    assert problem.is_exact(line.loss)
    np.testing.assert_allclose(line.skeleton.program(X, line.constants), problem.y, rtol=1e-9)
    assert {"x_3", "x_5"} <= set(line.skeleton.tokens) and "x_4" not in line.skeleton.tokens


def test_a_residual_with_no_line_adds_no_line():
    """Where the residual's line has no feature (the rest is pure noise), only the network's fits join."""
    X = np.random.default_rng(2).uniform(0, 2, (200, 3))
    y = np.exp(X[:, 0]) + np.random.default_rng(3).normal(0, 0.1, 200)
    problem = Problem(X, y)
    first = Skeleton(("mul", "c", "exp", "x_1"))
    fitted = Fitted(first, np.array([1.0]), mse(first.program, X, y, np.array([1.0])))
    assert residual_candidates(problem, fitted, np.array([0, 1, 2]), 3, 0, lambda part: []) == []


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nothing_is_searched_when_the_first_fit_is_not_finite_everywhere(value):
    problem, solve = _problem(), RecordingSolver()
    skeleton, constants, _ = _first_fit(problem)
    if value == np.inf:  # c/0 at every point
        broken = Skeleton(("add", "div", "c", "add", "x_1", "mul", "c", "x_1", *skeleton.tokens))
        constants = np.array([1.0, -1.0, -0.6])
    else:  # the logarithm of negative x_1
        broken = Skeleton(("add", "ln", "x_1", *skeleton.tokens))
    fitted = (broken, constants, np.inf)
    assert residual_candidates(problem, fitted, np.array([3, 4, 5]), 3, 0, solve) == []
    assert solve.parts == []


def test_the_parts_penalty_decides_whether_a_shorter_second_fit_is_kept():
    problem = _problem()
    longer = Fitted(REST, np.array([0.9]), 0.5 * problem.scale)
    shorter = Fitted(Skeleton(("sin", "x_3")), np.array([]), 0.6 * problem.scale)
    assert kept_fits([longer, shorter], problem, penalty=0.0) == [longer]
    assert kept_fits([longer, shorter], problem, penalty=0.1) == [longer, shorter]
