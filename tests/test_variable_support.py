import numpy as np

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import CandidateRows, Fitted, mse
from nesymres_sklearn.search.fitting.constants import least_squares_run
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.selection.pruning import prune
from nesymres_sklearn.search.selection.table import add_pruned, tabulate
from nesymres_sklearn.search.selection.variable_support import negligible_variables, unsupported_variables

X = np.random.default_rng(5).uniform(-3, 3, (200, 3))
y = np.sin(X[:, 0]) + X[:, 1] ** 2  # x2 unused
# An approximate form: a line in x0 where sin(x0) belongs, a term in the unused x2.
APPROXIMATE = Skeleton(("add", "add", "mul", "c", "x_1", "pow", "x_2", "2", "mul", "c", "x_3"))


def fitted(skeleton, start):
    constants = least_squares_run(skeleton.program, X, y, np.asarray(start, dtype=np.float64))
    return constants, mse(skeleton.program, X, y, constants)


def test_an_unused_column_gains_no_more_than_its_shuffled_copies_and_used_ones_do():
    constants, loss = fitted(APPROXIMATE, [1.0, 0.1])
    assert 0 < loss < 0.2 * np.var(y)  # approximate, and the unused x2 gets a nonzero constant
    assert constants[1] != 0
    assert list(unsupported_variables(APPROXIMATE, constants, X, y, float(np.var(y)))) == ["x_3"]


def test_an_unused_column_inside_a_frequency_is_replaced_where_the_law_fits_not_at_its_mean():
    # y = sin(40*x0); the row carries its frequency by sin(x1), near 1 where most of the
    # unused x1 lies: at x1's mean the refit of the frequency finds no way back, at a
    # quantile of x1 the row without it is the law
    rng = np.random.default_rng(3)
    n = 300
    unused = np.where(rng.random(n) < 0.8, rng.normal(np.pi / 2, 0.03, n), rng.uniform(1, 5, n))
    X_freq = np.column_stack([rng.uniform(1, 5, n), unused])
    y_freq = np.sin(40 * X_freq[:, 0])
    row = Skeleton(("sin", "mul", "mul", "c", "x_1", "sin", "x_2"))
    constants = least_squares_run(row.program, X_freq, y_freq, np.array([40.0]))
    assert 0.3 < mse(row.program, X_freq, y_freq, constants) / np.var(y_freq) < 0.6  # approximate
    replacements = unsupported_variables(row, constants, X_freq, y_freq, float(np.var(y_freq)))
    assert list(replacements) == ["x_2"]
    assert np.sin(replacements["x_2"]) > 0.99 > np.sin(np.mean(unused))


def test_an_exact_use_of_every_variable_is_supported():
    exact = Skeleton(("add", "sin", "x_1", "pow", "x_2", "2"))
    assert unsupported_variables(exact, np.array([]), X, y, float(np.var(y))) == {}


def test_rows_with_an_unsupported_variable_are_set_aside_and_the_row_without_it_is_selected():
    # x0/(x1**2 + 1.05) fitted by a form that lacks the divisor: c*x3/x1 (x2 unused) soaks
    # up enough of the error near x1 = 0 to pay for its tokens, so pruning keeps it
    X = np.random.default_rng(3).uniform(-3, 3, (200, 3))
    y = X[:, 0] / (X[:, 1] ** 2 + 1.05)
    approximate = Skeleton(
        ("add", "add", "mul", "c", "x_1", "mul", "c", "mul", "x_1", "pow", "x_2", "2", "mul", "c", "div", "x_3", "x_2")
    )
    constants = least_squares_run(approximate.program, X, y, np.full(3, 0.5))
    loss = mse(approximate.program, X, y, constants)
    assert "x_3" in prune(approximate, constants, X, y, 0.01)[0].tokens
    rows = CandidateRows()
    rows.add(Fitted(Skeleton(("c",)), np.array([y.mean()]), float(np.var(y))), log_prob=0.0, origin="baseline")
    rows.add(Fitted(approximate, constants, loss), log_prob=-1.0, origin="operon")
    problem = Problem(X, y)
    add_pruned(rows, problem, 0.01, seed=0)
    assert rows.set_aside == {"x_3"}
    table = tabulate(rows, 0.01, problem.scale, 1.0, lambda skeleton, values: skeleton.sympy)
    assert len(table.fitted) == len(rows) - 1  # the row with x2 is left out of the table
    assert all("x_3" not in skeleton.tokens for skeleton, _, _ in table.fitted)
    best, _, _ = table.fitted[table.best_index]
    assert {"x_1", "x_2"} <= set(best.tokens)
    assert table.equations.loc[table.best_index, "origin"] == "operon"  # the approximate row without x2
    assert table.equations.loc[table.best_index, "loss"] <= 1.2 * loss


def test_an_exact_best_row_is_not_tested():
    rows = CandidateRows()
    exact = Skeleton(("add", "sin", "x_1", "pow", "x_2", "2"))
    rows.add(Fitted(exact, np.array([]), 0.0), log_prob=-1.0, origin="beam")
    add_pruned(rows, Problem(X, y), 0.01, seed=0)
    assert rows.set_aside == set() and len(rows) == 1


def test_a_variable_whose_terms_cancel_to_rounding_in_an_exact_fit_is_negligible():
    # sin(x0) + x1**2 + (a - a')*x2 with a - a' at float64's rounding: exact, and x2 only seems used
    cancelling = Skeleton(("add", "add", "sin", "x_1", "pow", "x_2", "2", "add", "mul", "c", "x_3", "mul", "c", "x_3"))
    constants = np.array([0.01124144687099537, -0.011241446870995356])
    loss = mse(cancelling.program, X, y, constants)
    assert loss < 1e-30
    problem = Problem(X, y)
    assert negligible_variables(cancelling, constants, X, y, loss, problem.scale) == {"x_3": np.mean(X[:, 2])}
    rows = CandidateRows()
    rows.add(Fitted(cancelling, constants, loss), log_prob=-1.0, origin="operon")
    add_pruned(rows, problem, 0.01, seed=0)
    table = tabulate(rows, 0.01, problem.scale, 1.0, lambda skeleton, values: skeleton.sympy)
    best, values, _ = table.fitted[table.best_index]
    assert "x_3" not in best.tokens and mse(best.program, X, y, values) < 1e-28


def test_a_variable_that_carries_signal_is_not_negligible_however_small_its_share():
    # y = sin(x0) + x1**2 + 1e-6*x2, fitted exactly: x2's part is small, far above rounding
    small = y + 1e-6 * X[:, 2]
    exact = Skeleton(("add", "add", "sin", "x_1", "pow", "x_2", "2", "mul", "c", "x_3"))
    constants = np.array([1e-6])
    loss = mse(exact.program, X, small, constants)
    assert negligible_variables(exact, constants, X, small, loss, float(np.var(small))) == {}
    # an approximate fit: the term in the unused x2 lowers the error by less than noise would
    constants, loss = fitted(APPROXIMATE, [1.0, 0.1])
    with_signal = negligible_variables(APPROXIMATE, constants, X, y, loss, float(np.var(y)))
    assert "x_1" not in with_signal and "x_2" not in with_signal


def test_a_negligible_variable_is_set_aside_after_the_selection_s_time_is_spent():
    # the refits' deadline has passed, so the shuffled test cannot run; the cheap one still does
    approximate = Skeleton(("add", "add", "mul", "c", "x_1", "pow", "x_2", "2", "mul", "c", "x_3"))
    constants, loss = fitted(approximate, [1.0, 0.1])
    constants[1] = 1e-9  # the unused x2's term, of no weight
    loss = mse(approximate.program, X, y, constants)
    rows = CandidateRows()
    rows.add(Fitted(approximate, constants, loss), log_prob=-1.0, origin="operon")
    add_pruned(rows, Problem(X, y), 0.01, seed=0, deadline=Deadline(0.0, clock=lambda: 1.0))
    assert rows.set_aside == {"x_3"}
    assert "x_3" not in rows.skeletons[-1].tokens
