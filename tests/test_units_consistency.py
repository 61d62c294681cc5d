import numpy as np
import pytest
import sympy

from nesymres_sklearn.units.consistency import InconsistentError, dimension, is_consistent, sympy_dimension

x, t, v = sympy.symbols("x t v")
SYMBOLS = [x, t, v]
# rows: x, t, v; columns: exponents of [length], [time]
DIMENSIONS = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]])
LENGTH = np.array([1.0, 0.0])


def _dimension(text):
    return sympy_dimension(sympy.sympify(text, locals={"x": x, "t": t, "v": v}), SYMBOLS, DIMENSIONS)


@pytest.mark.parametrize(
    "text",
    [
        "v*t",
        "x + v*t",
        "2.5*x*exp(-x/(v*t))",
        "x**2/x",
        "sqrt(x*v*t)",
        "x*sin(1.3*v*t/x)",
        "pi*x*(x/(v*t))**(1/2)",
        "x*(t**0.5)**2/t",
        "x*(log(x) - log(v*t))",  # = x*log(x/(v*t)): logs of one dimension cancel
        "x*exp(2*log(x) - log(x*v*t))",
        "x*(log(x)/2 - log(sqrt(v*t)))",
    ],
)
def test_consistent_laws_have_the_units_of_y(text):
    assert np.allclose(_dimension(text), LENGTH)


@pytest.mark.parametrize(
    "text, message",
    [
        ("x + t", "a sum of terms of different dimensions"),
        ("x + 1", "a sum of terms of different dimensions"),  # a fitted constant is dimensionless
        ("x*sin(x)", "sin takes a dimensional argument"),
        ("x*exp(t)", "exp takes a dimensional argument"),
        ("x*log(x)", "log of a dimensional quantity"),
        ("log(x)*log(v*t)", "product or quotient of logs"),
        ("x*(log(x) - log(t))", "times a factor that is not a known number"),  # x times a log of length/time
        ("log(x) - log(t)", "the law holds the log of a dimensional quantity that does not cancel"),
        ("x*sin(log(x))", "the argument of sin holds the log"),
        ("x**t", "a dimensional exponent"),
    ],
)
def test_inconsistent_laws_say_why(text, message):
    with pytest.raises(InconsistentError, match=message):
        _dimension(text)


def test_candidates_are_checked_on_their_tokens_and_constants():
    # c * x_1 ** c: the exponent is the fitted constant, so its value decides
    tokens = ["mul", "c", "pow", "x_1", "c"]
    assert is_consistent(tokens, DIMENSIONS, [2.0, 0.0], [3.0, 2.0])
    assert not is_consistent(tokens, DIMENSIONS, [2.0, 0.0], [3.0, 1.5])
    with pytest.raises(InconsistentError, match="not a known number"):
        dimension(tokens, DIMENSIONS)  # constants unknown
    assert not is_consistent(["x_3"], DIMENSIONS, LENGTH)  # consistent, but a velocity
    assert np.allclose(dimension(["abs", "x_1"], DIMENSIONS), LENGTH)


def test_logs_cancel_in_a_candidate_only_with_equal_known_factors():
    # x_1 * (c*ln(x_1) + c*ln(x_3*x_2)) over lengths: consistent when the factors cancel the length
    tokens = ["mul", "x_1", "add", "mul", "c", "ln", "x_1", "mul", "c", "ln", "mul", "x_3", "x_2"]
    assert is_consistent(tokens, DIMENSIONS, LENGTH, [2.0, -2.0])
    assert not is_consistent(tokens, DIMENSIONS, LENGTH, [2.0, -1.5])
    assert not is_consistent(tokens, DIMENSIONS, LENGTH)  # factors unknown
    assert is_consistent(["ln", "div", "x_1", "mul", "x_3", "x_2"], DIMENSIONS, [0.0, 0.0])
