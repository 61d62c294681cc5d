"""The operator table: each row's NumPy function, derivatives and SymPy forms agree."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn.expression.operators import OPERATORS, PAPER_OPERATORS, UNARY_OPERATORS
from nesymres_sklearn.expression.prefix import prefix_to_sympy, sympy_to_prefix
from nesymres_sklearn.expression.tokens import token_arity
from nesymres_sklearn.network.vocabulary import default_tokens

# Inside every operator's domain (acos/asin need |a| < 1, ln/sqrt/pow need a > 0).
A = np.array([0.2, 0.45, 0.7])
B = np.array([1.5, 2.0, 3.0])
STEP = 1e-6


@pytest.mark.parametrize("token", sorted(OPERATORS))
def test_numpy_function_matches_sympy(token):
    operator = OPERATORS[token]
    symbols = sympy.symbols("a b", positive=True)[: operator.arity]
    reference = sympy.lambdify(symbols, operator.sympy(*symbols), modules="numpy")
    args = (A, B)[: operator.arity]
    np.testing.assert_allclose(operator.numpy(*args), reference(*args), rtol=1e-12)


@pytest.mark.parametrize("token", sorted(OPERATORS))
def test_derivatives_match_central_differences(token):
    operator = OPERATORS[token]
    args = [A, B][: operator.arity]
    value = operator.numpy(*args)
    assert len(operator.derivatives) == operator.arity
    for i, derivative in enumerate(operator.derivatives):
        up = [arg + STEP if j == i else arg for j, arg in enumerate(args)]
        down = [arg - STEP if j == i else arg for j, arg in enumerate(args)]
        numeric = (operator.numpy(*up) - operator.numpy(*down)) / (2 * STEP)
        exact = np.broadcast_to(derivative(*args, value), value.shape)
        np.testing.assert_allclose(exact, numeric, rtol=1e-5)


@pytest.mark.parametrize("token", sorted(OPERATORS))
def test_token_arity_comes_from_the_table(token):
    assert token_arity(token) == OPERATORS[token].arity


@pytest.mark.parametrize("token", [t for t, op in OPERATORS.items() if op.sympy_class is not None])
def test_written_operators_round_trip_through_sympy(token):
    tokens = [token, "x_1"] if OPERATORS[token].arity == 1 else [token, "x_1", "x_2"]
    assert sympy_to_prefix(prefix_to_sympy(tokens)) == tokens


def test_sqrt_is_written_from_its_power_form():
    assert sympy_to_prefix(prefix_to_sympy(["sqrt", "x_1"])) == ["sqrt", "x_1"]


def test_default_vocabulary_holds_exactly_the_paper_operators():
    operators = [t for t in default_tokens(3) if t in OPERATORS]
    assert operators == sorted(PAPER_OPERATORS)
    assert "abs" in UNARY_OPERATORS and "abs" not in PAPER_OPERATORS


def test_generator_weights_are_the_paper_appendix():
    weights = {t: op.generator_weight for t, op in OPERATORS.items() if op.generator_weight}
    assert weights == {
        "add": 10,
        "mul": 10,
        "div": 5,
        "pow": 4,
        "sqrt": 4,
        "ln": 4,
        "exp": 4,
        "sin": 4,
        "cos": 4,
        "tan": 4,
        "asin": 1,
    }
