import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitted import Fitted, mse
from nesymres_sklearn.search.looks.reciprocal import reciprocal_candidates
from nesymres_sklearn.search.problem import Problem


class RecordingSolver:
    """A stand-in for the network: ``c*sqrt(1 - x**2)``'s skeleton, fitted from a start
    off by 10% (as the network's constant fitting might leave it), for any problem."""

    def __init__(self, skeleton: Skeleton):
        self.skeleton, self.problems = skeleton, []

    def __call__(self, problem: Problem):
        self.problems.append(problem)
        target = problem.y[0] * np.sqrt(1 / (1 - problem.X[0, 0] ** 2))  # the scale of 1/y
        constants = np.array([1.1 * target, 1.0, -1.0])
        return [Fitted(self.skeleton, constants, mse(self.skeleton.program, problem.X, problem.y, constants))]


def _lorentz(factor: float = 1.0) -> Problem:
    x = np.random.default_rng(0).uniform(0.1, 0.67, (128, 1))
    return Problem(x, factor / np.sqrt(1 - x[:, 0] ** 2))


# c*sqrt(c + c*x**2): the network's exact fit of 1/y for y = 1/sqrt(1 - x**2), times a scale.
SQRT = Skeleton(("mul", "c", "sqrt", "add", "c", "mul", "c", "pow", "x_1", "2"))


@pytest.mark.parametrize("factor", [1.0, 1e-4, -3.0])
def test_a_fit_of_one_over_y_gives_its_reciprocal_refitted_on_y(factor):
    problem, solve = _lorentz(factor), RecordingSolver(SQRT)
    [(skeleton, constants, loss)] = reciprocal_candidates(problem, solve)
    [upside_down] = solve.problems
    flipped = 1 / problem.y
    scale = upside_down.y / flipped
    np.testing.assert_allclose(scale, scale[0])  # 1/y up to a power of ten
    assert 0.1 <= np.max(np.abs(upside_down.y)) <= 1000  # the target's band
    assert np.log10(scale[0]) == pytest.approx(round(np.log10(scale[0])))
    assert skeleton.tokens == ("div", "c", *SQRT.tokens)
    assert problem.is_exact(loss)
    np.testing.assert_allclose(skeleton.program(problem.X, constants), problem.y, rtol=1e-8)


def test_nothing_is_searched_when_y_changes_sign():
    problem = _lorentz()
    problem = Problem(problem.X, problem.y - np.median(problem.y))
    solve = RecordingSolver(SQRT)
    assert reciprocal_candidates(problem, solve) == []
    assert solve.problems == []
