"""Constants fitted by Operon's Levenberg-Marquardt (C++, float32), polished in float64,
with MINPACK where Operon cannot run or to step into a skeleton's domain: the same fits
as MINPACK alone."""

import pickle
import sys

import numpy as np
import pytest

from nesymres_sklearn.expression.operators import OPERATORS
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.operon.plan import constant_runner
from nesymres_sklearn.search.exactness import EXACT_FIT
from nesymres_sklearn.search.fitted import mse
from nesymres_sklearn.search.fitting import constants as constants_module
from nesymres_sklearn.search.fitting.candidates import fit_candidates, skeleton_candidates
from nesymres_sklearn.search.fitting.constants import Evaluations, fit_constants, least_squares_run, polish, run_start
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchRequest, SearchSettings

op = pytest.importorskip("pyoperon")
from nesymres_sklearn.operon.fitting import OperonConstantFitter  # noqa: E402

RNG = np.random.default_rng(0)


def prefix(text: str) -> list[str]:
    return text.split()


X = RNG.uniform(1, 3, size=(128, 2))

# One skeleton per operator, its data from known constants, on points inside its domain.
CASES = {
    "add": ("add mul c x_1 c", lambda X: 2 * X[:, 0] + 0.5, [2, 0.5]),
    "mul": ("mul c mul x_1 x_2", lambda X: 1.5 * X[:, 0] * X[:, 1], [1.5]),
    "div": ("div c add x_1 mul c x_2", lambda X: 3 / (X[:, 0] + 2 * X[:, 1]), [3, 2]),
    "pow": ("mul c pow x_1 c", lambda X: 2 * X[:, 0] ** 1.7, [2, 1.7]),
    "abs": ("abs add x_1 c", lambda X: np.abs(X[:, 0] - 2.2), [-2.2]),
    "acos": ("acos mul c x_1", lambda X: np.arccos(0.3 * X[:, 0]), [0.3]),
    "asin": ("mul c asin mul c x_1", lambda X: 2 * np.arcsin(0.3 * X[:, 0]), [2, 0.3]),
    "atan": ("atan mul c x_1", lambda X: np.arctan(0.7 * X[:, 0]), [0.7]),
    "cos": ("mul c cos add x_1 c", lambda X: 1.3 * np.cos(X[:, 0] + 0.4), [1.3, 0.4]),
    "cosh": ("cosh mul c x_1", lambda X: np.cosh(0.6 * X[:, 0]), [0.6]),
    "coth": ("mul c coth mul c x_1", lambda X: 2 / np.tanh(0.3 * X[:, 0]), [2, 0.3]),
    "exp": ("mul c exp mul c x_2", lambda X: 2 * np.exp(-0.4 * X[:, 1]), [2, -0.4]),
    "ln": ("ln add x_1 c", lambda X: np.log(X[:, 0] - 0.9), [-0.9]),
    "sin": (
        "add mul mul c x_1 sin mul c x_2 c",
        lambda X: 2.3 * X[:, 0] * np.sin(0.7 * X[:, 1]) + 0.5,
        [2.3, 0.7, 0.5],
    ),  # noqa: E501
    "sinh": ("sinh mul c x_1", lambda X: np.sinh(0.8 * X[:, 0]), [0.8]),
    "sqrt": ("mul c sqrt add x_1 c", lambda X: 2 * np.sqrt(X[:, 0] - 0.9), [2, -0.9]),
    "tan": ("tan mul c x_1", lambda X: np.tan(0.4 * X[:, 0]), [0.4]),
    "tanh": ("mul c tanh mul c x_2", lambda X: 3 * np.tanh(0.5 * X[:, 1]), [3, 0.5]),
}


def test_every_operator_has_a_case():
    assert set(CASES) == set(OPERATORS)


@pytest.mark.parametrize("token", sorted(CASES))
def test_operons_tree_computes_what_our_program_computes(token):
    """Node for node the same function: Operon's values of the tree at random constants
    equal our program's to float32 precision, wherever ours are finite."""
    tokens, function, truth = CASES[token]
    program = PrefixProgram(tokens.split())
    fitter = OperonConstantFitter(Problem(X, function(X)), 100)
    tree, order = fitter._tree(tuple(program.tokens))
    dataset = op.Dataset(np.column_stack([X, function(X)]))
    for constants in (np.asarray(truth, dtype=float), np.asarray(truth) * 1.1 + 0.05):
        tree.SetCoefficients(np.asarray(constants, dtype=np.float32)[order])
        theirs = np.asarray(op.Evaluate(fitter._dispatch, tree, dataset, op.Range(0, len(X))), dtype=np.float64)
        ours = program(X, np.asarray(constants, dtype=np.float32).astype(np.float64))
        finite = np.isfinite(ours)
        assert finite.any()
        np.testing.assert_allclose(theirs[finite], ours[finite], rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("token", sorted(CASES))
def test_a_fit_with_operon_is_the_fit_with_minpack(token):
    """From the same starts, fit_constants with Operon's runs reaches the exact fit that
    MINPACK alone reaches, polished to float64 (below EXACT_FIT), the same constants."""
    tokens, function, truth = CASES[token]
    program = PrefixProgram(tokens.split())
    y = function(X)
    runner = OperonConstantFitter(Problem(X, y), 100)
    with_operon = fit_constants(program, X, y, 8, np.random.default_rng(1), runner=runner)
    alone = fit_constants(program, X, y, 8, np.random.default_rng(1))
    assert alone.mse / np.var(y) <= EXACT_FIT
    assert with_operon.mse / np.var(y) <= EXACT_FIT
    np.testing.assert_allclose(program(X, with_operon.constants), y, rtol=1e-6, atol=1e-6 * np.std(y))


def test_constants_come_back_in_placeholder_order_and_only_placeholders_move():
    """Operon's nodes are in postfix order, the first argument last: the constants are
    mapped back to our prefix order. Integers and variable weights stay fixed, so
    ``2*c*x_1 + c/x_2`` fits ``6*x_1 + 5/x_2`` with c = (3, 5), not a split of the 6."""
    program = PrefixProgram(prefix("add mul 2 mul c x_1 div c x_2"))
    y = 6 * X[:, 0] + 5 / X[:, 1]
    found = OperonConstantFitter(Problem(X, y), 100).run(program.tokens, np.ones(2))
    np.testing.assert_allclose(found, [3, 5], rtol=1e-5)


def test_a_start_outside_the_domain_steps_into_it_and_operon_goes_on_from_there(monkeypatch):
    """Where the start is undefined at some points Operon cannot move (its cost is not
    finite). MINPACK's float64 run steps back into the domain and stops at the first
    point inside it; Operon fits from there, to the exact fit."""
    program = PrefixProgram(prefix("ln add x_1 c"))
    y = np.log(X[:, 0] - 0.9)
    runner = OperonConstantFitter(Problem(X, y), 100)
    start = np.array([-2.0])  # x_1 - 2 < 0 for x_1 < 2
    assert not np.isfinite(program(X, start)).all()
    assert np.all(runner.run(program.tokens, start) == start)  # Operon did not move
    runs, real_run = [], constants_module.least_squares_run

    def recorded(*args, **kwargs):
        runs.append((kwargs.get("until_defined", False), real_run(*args, **kwargs)))
        return runs[-1][1]

    monkeypatch.setattr(constants_module, "least_squares_run", recorded)
    found, loss = run_start(program, X, y, start, runner=runner)
    assert [until_defined for until_defined, _ in runs] == [True]
    inside = runs[0][1]
    assert np.isfinite(program(X, inside)).all() and not np.array_equal(inside, start)
    assert loss / np.var(y) <= EXACT_FIT
    np.testing.assert_allclose(found, [-0.9], rtol=1e-6)


def test_minpack_until_defined_stops_at_the_first_point_inside_the_domain():
    """Fewer evaluations than the whole run, and the point returned is defined
    everywhere but not yet the fit."""
    program = PrefixProgram(prefix("ln add x_1 c"))
    y = np.log(X[:, 0] - 0.9)
    start = np.array([-2.0])
    stepping, whole = Evaluations(100), Evaluations(100)
    inside = least_squares_run(program, X, y, start, evaluations=stepping, until_defined=True)
    fitted = least_squares_run(program, X, y, start, evaluations=whole)
    assert np.isfinite(program(X, inside)).all()
    assert stepping.left > whole.left
    assert mse(program, X, y, inside) > mse(program, X, y, fitted)
    np.testing.assert_allclose(fitted, [-0.9], rtol=1e-6)


def test_a_start_that_never_reaches_the_domain_gives_nothing():
    """``ln(-exp(c*x_1))`` is defined nowhere: no constants, an infinite error."""
    program = PrefixProgram(prefix("ln mul -1 exp mul c x_1"))
    y = X[:, 0]
    runner = OperonConstantFitter(Problem(X, y), 100)
    found, loss = run_start(program, X, y, np.ones(1), runner=runner)
    assert found is None and loss == np.inf


def test_polish_takes_a_float32_fit_to_float64_precision():
    program = PrefixProgram(prefix("mul c exp mul c x_2"))
    y = 2 * np.exp(-0.4 * X[:, 1])
    float32_fit = np.array([2.0000002, -0.40000001])
    before = np.mean((program(X, float32_fit) - y) ** 2)
    constants, loss = polish(program, X, y, float32_fit, before)
    assert before / np.var(y) > EXACT_FIT and loss / np.var(y) < 1e-24
    np.testing.assert_allclose(constants, [2, -0.4], rtol=1e-12)


def test_polish_keeps_the_constants_when_no_step_helps():
    """At a least-squares optimum that is not exact, a Gauss-Newton step does not lower
    the error, and the constants and their error are kept as they came."""
    program = PrefixProgram(prefix("add mul c x_1 c"))
    y = X[:, 0] ** 2
    optimum = np.polyfit(X[:, 0], y, 1)
    loss = np.mean((program(X, optimum) - y) ** 2)
    constants, polished_loss = polish(program, X, y, optimum, loss)
    np.testing.assert_array_equal(constants, optimum)
    assert polished_loss == loss


def test_a_pickled_fitter_fits_the_same():
    tokens, function, _ = CASES["sin"]
    fitter = OperonConstantFitter(Problem(X, function(X)), 100)
    copy = pickle.loads(pickle.dumps(fitter))
    start = np.array([1.0, 0.5, -1.0])
    np.testing.assert_array_equal(copy.run(tokens.split(), start), fitter.run(tokens.split(), start))


def test_the_runner_is_operon_only_where_it_can_run(monkeypatch):
    y = 2 * X[:, 0]
    assert isinstance(constant_runner(Problem(X, y), "operon"), OperonConstantFitter)
    assert constant_runner(Problem(X, y), "minpack") is None
    assert constant_runner(Problem(X, y, np.ones(len(y))), "operon") is None  # Operon's fit takes no weights

    monkeypatch.delitem(sys.modules, "nesymres_sklearn.operon.fitting")
    monkeypatch.setitem(sys.modules, "pyoperon", None)  # as if not installed: importing it fails
    assert constant_runner(Problem(X, y), "operon") is None


def test_an_unknown_constant_optimizer_is_refused():
    with pytest.raises(ValueError, match="constant_optimizer must be one of"):
        SearchSettings(constant_optimizer="bfgs")


@pytest.mark.slow
def test_candidates_fitted_with_operon_in_parallel_equal_the_serial_fits():
    from nesymres_sklearn.search.decoding.hypothesis import Hypothesis

    hypotheses = [Hypothesis(tuple(CASES[token][0].split()), -float(i)) for i, token in enumerate(("sin", "exp", "ln"))]
    problem = Problem(X, CASES["sin"][1](X) + 0.01 * X[:, 0] ** 2)
    candidates = skeleton_candidates(hypotheses)
    runner = constant_runner(problem, "operon")
    serial = fit_candidates(candidates, problem, SearchRequest(n_restarts=3, seed=5), None, 0, runner)
    parallel = fit_candidates(candidates, problem, SearchRequest(n_restarts=3, seed=5, n_jobs=2), None, 0, runner)
    for one, other in zip(serial, parallel):
        np.testing.assert_array_equal(one.constants, other.constants)
        assert one.mse == other.mse
