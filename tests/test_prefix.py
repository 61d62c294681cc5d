import pytest
import sympy

from nesymres_sklearn.expression.prefix import (
    InvalidPrefixError,
    check_prefix,
    is_valid_prefix,
    prefix_to_sympy,
    skeletonize,
    sympy_to_prefix,
    variable_symbols,
)

x1, x2, x3 = variable_symbols(3)


@pytest.mark.parametrize(
    "expr, prefix",
    [
        (x1 * sympy.sin(x1), ["mul", "x_1", "sin", "x_1"]),
        (x1 - x2, ["add", "x_1", "mul", "-1", "x_2"]),
        (x1 / x2, ["mul", "x_1", "pow", "x_2", "-1"]),
        (x1 / 3, ["mul", "div", "1", "3", "x_1"]),
        (sympy.sqrt(x1**2 + 2), ["sqrt", "add", "2", "pow", "x_1", "2"]),
        (sympy.exp(x1) + x2 + x3, ["add", "x_2", "add", "x_3", "exp", "x_1"]),
        (sympy.log(x1) * sympy.cos(x2), ["mul", "cos", "x_2", "ln", "x_1"]),
    ],
)
def test_sympy_to_prefix_conventions(expr, prefix):
    assert sympy_to_prefix(expr) == prefix
    assert sympy.simplify(prefix_to_sympy(prefix) - expr) == 0


@pytest.mark.parametrize(
    "expr",
    [
        sympy.asin(x1 * sympy.sin(x2)),
        x1 * x2 / (4 * x3**2),
        sympy.tanh(x1) + sympy.coth(x2) - sympy.atan(x3) * sympy.acos(x1 / 5),
        sympy.sinh(x1) ** 3 / sympy.cosh(x2),
        sympy.tan(x1) ** sympy.Rational(3, 2),
    ],
)
def test_round_trip_sympy_prefix_sympy(expr):
    assert prefix_to_sympy(sympy_to_prefix(expr)) == expr


def test_skeletonize_replaces_numbers_without_token():
    expr = 4.2 * sympy.sin(0.3 * x1) + x2 + 7 * x3 + sympy.pi
    skeleton = skeletonize(expr)
    assert skeleton.count("c") == 4
    assert all(token not in skeleton for token in ("4.2", "0.3", "7"))
    c0, c1, c2, c3 = sympy.symbols("c_0:4", real=True)
    rebuilt = prefix_to_sympy(skeleton)
    assert rebuilt.free_symbols == {x1, x2, x3, c0, c1, c2, c3}


def test_numbers_without_token_need_skeletonize():
    with pytest.raises(ValueError, match="has no token"):
        sympy_to_prefix(2.5 * x1)


def test_constants_are_numbered_left_to_right():
    expr = prefix_to_sympy(["add", "c", "mul", "c", "x_1"])
    c0, c1 = sympy.symbols("c_0 c_1", real=True)
    assert expr == c0 + c1 * x1


def test_prefix_with_custom_variable_symbols():
    a, b = sympy.symbols("a b")
    assert prefix_to_sympy(["add", "x_1", "x_2"], variables=[a, b]) == a + b
    with pytest.raises(InvalidPrefixError, match="x_3 has no symbol"):
        prefix_to_sympy(["x_3"], variables=[a, b])


@pytest.mark.parametrize(
    "tokens, message",
    [
        (["add", "x_1"], "Incomplete"),
        (["mul", "c", "x_1", "x_1"], "Leftover"),
        (["sin", "<eos>"], "cannot appear"),
        ([], "Incomplete"),
    ],
)
def test_invalid_prefix(tokens, message):
    assert not is_valid_prefix(tokens)
    with pytest.raises(InvalidPrefixError, match=message):
        check_prefix(tokens)


def test_unsupported_functions_are_rejected():
    with pytest.raises(ValueError, match="Cannot write"):
        sympy_to_prefix(sympy.Abs(x1))


def test_rounding_dropped_removes_coefficients_that_cancel_to_rounding_and_merges_exponentials():
    x0, x1 = sympy.symbols("x0 x1")
    cancelling = ["add", "mul", "c", "x_1", "add", "mul", "c", "x_2", "mul", "c", "x_1"]
    values = [sympy.Float(0.01124144687099537), sympy.Float(2.0), sympy.Float(-0.011241446870995356)]
    assert prefix_to_sympy(cancelling, [x0, x1], values, rounding_dropped=True) == 2.0 * x1
    assert prefix_to_sympy(cancelling, [x0, x1], values) == 2.0 * x1 + sympy.Float(1.3877787807814457e-17) * x0
    # a difference above rounding stays, and so does a small term that nothing cancelled
    values[2] = sympy.Float(-0.0112414468709)
    assert prefix_to_sympy(cancelling, [x0, x1], values, rounding_dropped=True).has(x0)
    small = prefix_to_sympy(["add", "c", "x_1"], [x0], [sympy.Float(1e-17)], rounding_dropped=True)
    assert small == x0 + sympy.Float(1e-17)
    # x1*exp(-a*x1)*exp(-b*x0**2 + a'*x1), a = a' to rounding: x1*exp(-b*x0**2)
    exponentials = ["mul", "mul", "x_2", "exp", "mul", "c", "x_2"]
    exponentials += ["exp", "add", "mul", "c", "pow", "x_1", "2", "mul", "c", "x_2"]
    values = [sympy.Float(-0.0458898362703733), sympy.Float(-0.45), sympy.Float(0.0458898362703732)]
    merged = prefix_to_sympy(exponentials, [x0, x1], values, rounding_dropped=True)
    assert merged == x1 * sympy.exp(sympy.Float(-0.45) * x0**2)
    assert prefix_to_sympy(exponentials, [x0, x1], values).count(sympy.exp) == 2
