import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitted import Fitted, mse
from nesymres_sklearn.search.looks.inverted import inverted_candidates
from nesymres_sklearn.search.problem import Problem

# c*exp(c*x_1): exp(2/x) on the reciprocals of x.
EXP = Skeleton(("mul", "c", "exp", "mul", "c", "x_1"))


class ExactSolver:
    """A stand-in for the network: ``c*exp(c*x_1)`` fitted exactly to ``exp(2*r)``,
    where the problem's ``x_1`` is ``r`` divided by a power of ten (found from the data)."""

    def __init__(self):
        self.problems = []

    def __call__(self, problem: Problem):
        self.problems.append(problem)
        scale = np.log(problem.y[0]) / (2 * problem.X[0, 0])  # r / x_1
        constants = np.array([1.0, 2 * scale])
        return [Fitted(EXP, constants, mse(EXP.program, problem.X, problem.y, constants))]


@pytest.mark.parametrize(
    "low, high, scale, tokens",
    [
        (1.0, 5.0, 1.0, ("mul", "c", "exp", "mul", "c", "div", "1", "x_1")),  # 1/x in [0.2, 1]: as it is
        (0.001, 0.005, 100.0, ("mul", "c", "exp", "mul", "c", "div", "c", "x_1")),  # 1/x up to 1000: / 100
    ],
)
def test_a_fit_over_the_reciprocals_comes_back_over_the_inputs_with_its_loss(low, high, scale, tokens):
    x = np.random.default_rng(0).uniform(low, high, (64, 1))
    problem = Problem(x, np.exp(2 / x[:, 0] * low))
    solve = ExactSolver()
    [(skeleton, constants, loss)] = inverted_candidates(problem, solve)
    [upside_down] = solve.problems
    np.testing.assert_allclose(upside_down.X * scale, 1 / x)  # the reciprocals, in the features' band
    assert np.abs(upside_down.X).max() <= 10
    np.testing.assert_array_equal(upside_down.y, problem.y)
    assert skeleton.tokens == tokens
    assert loss == solve(upside_down)[0][2]  # the same function on the same points: not refitted
    np.testing.assert_allclose(skeleton.program(x, constants), problem.y, rtol=1e-10)


def test_every_input_is_turned_and_the_constants_stay_in_token_order():
    X = np.random.default_rng(1).uniform(1, 5, (32, 2))
    skeleton = Skeleton(("add", "mul", "c", "x_1", "mul", "c", "x_2"))  # c0/x_1 + c1/x_2 on the reciprocals
    y = 3 / X[:, 0] + 0.5 / X[:, 1]
    solve = lambda problem: [Fitted(skeleton, np.array([3.0, 0.5]), 0.0)]  # noqa: E731
    [(back, constants, _)] = inverted_candidates(Problem(X, y), solve)
    assert back.tokens == ("add", "mul", "c", "div", "1", "x_1", "mul", "c", "div", "1", "x_2")
    np.testing.assert_array_equal(constants, [3.0, 0.5])
    np.testing.assert_allclose(back.program(X, constants), y)


@pytest.mark.parametrize("column", [np.linspace(-1, 1, 32), np.r_[0.0, np.linspace(1, 2, 31)]])
def test_nothing_is_searched_when_an_input_changes_sign_or_is_zero(column):
    X = np.column_stack([np.linspace(1, 2, 32), column])
    solve = ExactSolver()
    assert inverted_candidates(Problem(X, X[:, 0]), solve) == []
    assert solve.problems == []


def test_the_inverted_look_keeps_the_best_and_the_best_scoring_fit():
    """Of the network's fits over the reciprocals, the best and the best-scoring come
    back (as the other looks keep), not all of them."""
    from nesymres_sklearn.search.looks import SECOND_LOOKS, LookContext
    from nesymres_sklearn.search.settings import SearchRequest, SearchSettings
    from nesymres_sklearn.search.variables.routing import Route

    x = np.random.default_rng(2).uniform(1, 5, (64, 1))
    problem = Problem(x, np.exp(2 / x[:, 0]))
    exact = ExactSolver()
    long = Skeleton(("add", "c", "mul", "c", "exp", "mul", "c", "x_1"))  # the lowest loss, but longer
    worse = [Fitted(EXP, np.array([c, 1.0]), 1.0 + c) for c in (1.0, 2.0, 3.0)]

    def solve(part):
        [fitted] = exact(part)
        return [*worse, Fitted(long, np.append(0.0, fitted.constants), fitted.loss / 2), fitted]

    settings = SearchSettings(reciprocal=False)
    request = SearchRequest(settings=settings, reads_groups=True)
    route = Route(problem, np.arange(1), 1)
    first = [Fitted(EXP, np.array([1.0, 1.0]), 1.0)]  # not exact
    context = LookContext(problem, route, request, first, solve, 1, None, lambda part: None)
    (look,) = [look for look in SECOND_LOOKS if look.name == "inverted"]
    assert look.applies(route, request)
    rows = look.rows(context)
    assert set(rows.origins) == {"inverted"}
    # of five fits: the best (the longer) and the best-scoring (the shorter), each with 1/x_1 for x_1
    assert [len(skeleton.tokens) for skeleton in rows.skeletons] == [len(long.tokens) + 2, len(EXP.tokens) + 2]
    for skeleton, constants in zip(rows.skeletons, rows.constants):
        np.testing.assert_allclose(skeleton.program(x, constants), problem.y, rtol=1e-10)
