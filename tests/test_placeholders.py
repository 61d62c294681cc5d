import numpy as np
import pytest

from nesymres_sklearn.expression.placeholders import attach_constants, count_constants, neutral_constants
from nesymres_sklearn.expression.program import PrefixProgram


def test_unary_operators_and_variables_get_placeholders():
    tokens, kinds = attach_constants(["sin", "x_1"])
    assert tokens == ["mul", "c", "sin", "add", "mul", "c", "x_1", "c"]
    assert kinds == ["mul", "mul", "add"]


def test_binary_operators_integers_and_existing_constants():
    tokens, kinds = attach_constants(["pow", "x_2", "2"])
    assert tokens == ["pow", "add", "mul", "c", "x_2", "c", "2"]
    assert kinds == ["mul", "add"]
    tokens, kinds = attach_constants(["add", "c", "x_1"])
    assert kinds == ["existing", "mul", "add"]
    assert count_constants(tokens) == 3


@pytest.mark.parametrize(
    "tokens",
    [["sin", "x_1"], ["add", "exp", "x_1", "mul", "x_2", "ln", "x_3"], ["pow", "cos", "x_1", "2"]],
)
def test_neutral_constants_leave_the_expression_unchanged(tokens):
    X = np.random.default_rng(0).uniform(0.5, 3, size=(50, 3))
    attached, kinds = attach_constants(tokens)
    np.testing.assert_allclose(PrefixProgram(attached)(X, neutral_constants(kinds)), PrefixProgram(tokens)(X))
