import numpy as np
import pytest
import sympy

from nesymres_sklearn.expression.operators import OPERATORS
from nesymres_sklearn.expression.prefix import constant_symbols, prefix_to_sympy, variable_symbols
from nesymres_sklearn.expression.program import PrefixProgram, evaluate

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


def _reference(tokens, X, constants):
    """The value and Jacobian by a plain interpreter of the operator table (the
    evaluator before compilation), as the compiled code's reference."""
    from nesymres_sklearn.expression.tokens import variable_index

    position, counter = 0, iter(range(len(constants)))

    def node():
        nonlocal position
        token = tokens[position]
        position += 1
        if token == "c":
            k = next(counter)
            gradient = np.zeros((len(constants), 1))
            gradient[k] = 1.0
            return np.float64(constants[k]), gradient
        if (index := variable_index(token)) is not None:
            return X[:, index], np.zeros((len(constants), 1))
        if token not in OPERATORS:
            return np.float64(token), np.zeros((len(constants), 1))
        operator = OPERATORS[token]
        args = [node() for _ in range(operator.arity)]
        values = [value for value, _ in args]
        value = operator.numpy(*values)
        gradient = sum(d(*values, value) * g for (_, g), d in zip(args, operator.derivatives) if np.any(g))
        return value, gradient if np.ndim(gradient) else np.zeros((len(constants), 1))

    with np.errstate(all="ignore"):
        value, gradient = node()
    return np.broadcast_to(value, (len(X),)), np.broadcast_to(gradient, (len(constants), len(X))).T


EDGE_POINTS = np.array([[0.0, -1.0], [-2.0, 0.0], [1.0, 1.0], [1e300, -1e300], [np.nan, 0.5], [1e-300, 2.0]])


@pytest.mark.parametrize("token", sorted(OPERATORS))
def test_compiled_code_equals_the_operator_table_at_domain_edges_overflow_and_nan(token):
    """Each operator, in ``op(c*x_1 + c)`` or ``op(c*x_1, c + x_2)``, evaluated where it
    is undefined, overflows or reads NaN: the compiled values and Jacobian are the
    table's (NaN and inf where the table gives them), wherever the table's are finite."""
    arity = OPERATORS[token].arity
    tokens = [token, "add", "mul", "c", "x_1", "c"] if arity == 1 else [token, "mul", "c", "x_1", "add", "c", "x_2"]
    program = PrefixProgram(tokens)
    for constants in ([1.0, 0.5, 1.0][: program.n_constants], [-2.0, 3.0, 0.0][: program.n_constants]):
        values, jacobian = program.value_and_jacobian(EDGE_POINTS, constants)
        expected_values, expected_jacobian = _reference(tokens, EDGE_POINTS, np.array(constants))
        np.testing.assert_array_equal(values, expected_values)
        np.testing.assert_array_equal(program(EDGE_POINTS, constants), expected_values)
        finite = np.isfinite(expected_jacobian)
        np.testing.assert_allclose(jacobian[finite], expected_jacobian[finite], rtol=1e-12)


def test_programs_are_compiled_once_per_token_sequence_and_pickle_without_their_code():
    import pickle

    from nesymres_sklearn.expression.program import compiled

    tokens = ["mul", "c", "sin", "add", "mul", "c", "x_1", "c"]
    first, second = PrefixProgram(tokens), PrefixProgram(list(tokens))
    assert first.compiled is second.compiled is compiled(tuple(tokens))
    assert "sin" in first.compiled.source and "for " not in first.compiled.source  # straight-line code
    restored = pickle.loads(pickle.dumps(first))
    X = np.linspace(0, 1, 12).reshape(-1, 1)
    np.testing.assert_array_equal(restored(X, [1.5, 2.0, 0.5]), first(X, [1.5, 2.0, 0.5]))


@pytest.mark.parametrize("tokens", [*EXPRESSIONS, ["mul", "3", "c"], ["add", "x_1", "mul", "-1", "x_2"], ["x_2"]])
def test_evaluation_without_compiling_gives_the_compiled_values_bit_for_bit(tokens):
    """Pruning scores its trials with :func:`evaluate`: the selected equation must not
    depend on which of the two computed a value, at the domain's edges and NaN too."""
    rng = np.random.default_rng(2)
    X = np.vstack([rng.uniform(-4, 4, size=(30, 3)), np.resize(EDGE_POINTS, (6, 3))])
    program = PrefixProgram(tokens)
    constants = rng.uniform(-2, 2, size=program.n_constants)
    values = evaluate(tokens, X, constants)
    assert values.shape == (len(X),)
    np.testing.assert_array_equal(values, program(X, constants))
