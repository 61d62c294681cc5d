import numpy as np
import pytest
import sympy

from nesymres_sklearn.expression.prefix import constant_symbols, prefix_to_sympy, variable_symbols
from nesymres_sklearn.expression.program import PrefixProgram

EXPRESSIONS = [
    ["mul", "c", "sin", "add", "mul", "c", "x_1", "c"],
    ["div", "exp", "mul", "c", "x_2", "add", "c", "pow", "x_1", "2"],
    ["add", "mul", "c", "ln", "x_1", "mul", "c", "sqrt", "x_2"],
    ["pow", "x_1", "c"],
    ["add", "tanh", "mul", "c", "x_3", "mul", "c", "coth", "x_1"],
    ["add", "atan", "mul", "c", "x_1", "mul", "asin", "div", "c", "x_2", "acos", "div", "c", "x_3"],
    ["add", "sinh", "mul", "c", "x_1", "add", "cosh", "c", "tan", "mul", "c", "x_2"],
    ["mul", "c", "cos", "c"],
]


@pytest.mark.parametrize("tokens", EXPRESSIONS)
def test_values_match_sympy(tokens):
    rng = np.random.default_rng(1)
    X = rng.uniform(2.5, 4, size=(40, 3))
    program = PrefixProgram(tokens)
    constants = rng.uniform(1, 2, size=program.n_constants)
    expr = prefix_to_sympy(tokens)
    reference = sympy.lambdify(variable_symbols(3) + constant_symbols(program.n_constants), expr)
    expected = np.broadcast_to(reference(*X.T, *constants), (40,))
    np.testing.assert_allclose(program(X, constants), expected, rtol=1e-10)


@pytest.mark.parametrize("tokens", EXPRESSIONS)
def test_jacobian_matches_symbolic_derivatives(tokens):
    rng = np.random.default_rng(2)
    X = rng.uniform(2.5, 4, size=(30, 3))
    program = PrefixProgram(tokens)
    constants = rng.uniform(1, 2, size=program.n_constants)
    cs = constant_symbols(program.n_constants)
    expr = prefix_to_sympy(tokens)
    values, jacobian = program.value_and_jacobian(X, constants)
    assert jacobian.shape == (30, program.n_constants)
    for i, c in enumerate(cs):
        derivative = sympy.lambdify(variable_symbols(3) + cs, sympy.diff(expr, c))
        expected = np.broadcast_to(derivative(*X.T, *constants), (30,))
        np.testing.assert_allclose(jacobian[:, i], expected, rtol=1e-8, atol=1e-12)


def test_undefined_points_give_nan_not_errors():
    program = PrefixProgram(["ln", "x_1"])
    out = program(np.array([[-1.0], [0.0], [np.e]]))
    assert np.isnan(out[0]) and out[1] == -np.inf and out[2] == pytest.approx(1.0)


def test_constant_expression_broadcasts_and_checks_inputs():
    program = PrefixProgram(["add", "2", "c"])
    np.testing.assert_array_equal(program(np.zeros((4, 1)), [3.0]), np.full(4, 5.0))
    with pytest.raises(ValueError, match="Expected 1 constants"):
        program(np.zeros((4, 1)), [])
    with pytest.raises(ValueError, match="X must have shape"):
        PrefixProgram(["x_2"])(np.zeros((4, 1)))
    assert PrefixProgram(["x_2"]).n_variables == 2


def test_division_by_a_zero_number_is_nan_or_inf_not_an_error():
    program = PrefixProgram(["div", "c", "0"])
    values, jacobian = program.value_and_jacobian(np.ones((3, 1)), [2.0])
    assert np.all(np.isinf(values)) and np.all(~np.isfinite(jacobian))
