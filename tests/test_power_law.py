import numpy as np
import pytest

from nesymres_sklearn.search.variables.power_law import power_law, power_law_skeleton

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 3.0, (100, 5))


def test_a_power_law_over_some_columns_comes_out_exact():
    y = -2.5 * X[:, 0] * X[:, 3] ** 2 / (X[:, 1] * np.sqrt(X[:, 4]))
    skeleton, constants, loss = power_law(X, y)
    assert skeleton == power_law_skeleton({0: 1.0, 3: 2.0, 1: -1.0, 4: -0.5})
    assert "x_3" not in skeleton.tokens  # x2's exponent is 0: it leaves the law
    np.testing.assert_allclose(constants, [-2.5])
    assert loss < 1e-20
    np.testing.assert_allclose(skeleton.program(X, constants), y)


@pytest.mark.parametrize(
    "exponents, tokens",
    [
        ({0: 1.5}, ("mul", "c", "mul", "x_1", "sqrt", "x_1")),
        ({1: -2.0}, ("div", "c", "pow", "x_2", "2")),
        ({0: 0.5, 2: -1.0}, ("mul", "c", "div", "sqrt", "x_1", "x_3")),
    ],
)
def test_exponents_are_written_with_powers_square_roots_and_a_division(exponents, tokens):
    assert power_law_skeleton(exponents).tokens == tokens


def test_columns_that_cross_zero_are_left_out_and_signs_of_y_must_agree():
    mixed = X.copy()
    mixed[:, 2] -= 1.75  # crosses zero
    y = X[:, 0] ** 2 * X[:, 1]
    skeleton, _, loss = power_law(mixed, y)
    assert "x_3" not in skeleton.tokens and loss < 1e-20
    assert power_law(X, y - np.median(y)) is None  # y changes sign
    assert power_law(X, np.r_[0.0, y[1:]]) is None  # y touches zero
    assert power_law(X - 1.75, y) is None  # no column keeps one sign


def test_weights_steer_the_exponents():
    y = X[:, 0] ** 2
    corrupted = y.copy()
    corrupted[:10] *= 50.0
    weights = np.r_[np.zeros(10), np.full(90, 100 / 90)]
    skeleton, constants, loss = power_law(X, corrupted, weights)
    assert skeleton == power_law_skeleton({0: 2.0}) and loss < 1e-20
    np.testing.assert_allclose(constants, [1.0])


def test_an_exact_power_law_joins_when_the_network_sees_every_feature():
    """Issue 53: x0**5/x1**3 on U(1, 20)^2 (data seed 0) came back as a product of
    linear factors and logs: the network wrote no fifth power, and the power-law
    candidate joined only when the network saw some of the features."""
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.variables.routing import Route

    x = RNG.uniform(1, 20, (200, 2))
    exact = Problem(x, x[:, 0] ** 5 / x[:, 1] ** 3)
    rows = Route(exact, np.arange(2), 2).all_feature_rows(exact, 0.01)
    assert rows.origins == ["power"] and rows.skeletons == [power_law_skeleton({0: 5.0, 1: -3.0})]
    inexact = Problem(x, x[:, 0] ** 5 / x[:, 1] ** 3 + x[:, 0])
    assert Route(inexact, np.arange(2), 2).all_feature_rows(inexact, 0.01).origins == []
