import numpy as np
import pytest
import sympy

from nesymres_sklearn.units.consistency import InconsistentError, dimension, is_consistent

x, t, v = sympy.symbols("x t v")
# exponents of [length], [time]
DIMENSIONS = {x: np.array([1.0, 0.0]), t: np.array([0.0, 1.0]), v: np.array([1.0, -1.0])}
LENGTH = np.array([1.0, 0.0])


def _parse(text):
    return sympy.sympify(text, locals={"x": x, "t": t, "v": v})


@pytest.mark.parametrize(
    "text",
    ["v*t", "x + v*t", "2.5*x*exp(-x/(v*t))", "x**2.0/x", "sqrt(x*v*t)", "Abs(x) - x", "x*sin(1.3*v*t/x)"],
)
def test_consistent_laws_with_the_units_of_y(text):
    assert is_consistent(_parse(text), DIMENSIONS, LENGTH)


@pytest.mark.parametrize(
    "text",
    [
        "x + t",  # a sum of different dimensions
        "x + 1",  # a fitted constant is dimensionless
        "x*sin(x)",  # a dimensional argument
        "x*exp(t)",
        "x*log(v)",
        "x**t",  # a dimensional base to a variable power
        "v",  # consistent, but not y's dimensions
        "log(x) - log(v*t)",  # equal to log(x/(v*t)), but read as written
    ],
)
def test_inconsistent_laws_are_found(text):
    assert not is_consistent(_parse(text), DIMENSIONS, LENGTH)


def test_dimension_of_a_law_and_the_error_that_says_why():
    assert np.allclose(dimension(_parse("x**2/t"), DIMENSIONS), [2.0, -1.0])
    with pytest.raises(InconsistentError, match="adds terms of different dimensions"):
        dimension(_parse("x + t"), DIMENSIONS)
    with pytest.raises(InconsistentError, match="takes a dimensional argument"):
        dimension(_parse("cos(t)"), DIMENSIONS)
