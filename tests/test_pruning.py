import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.selection.pruning import prune, prune_best
from nesymres_sklearn.writing.readable import simple_numbers, tidy_numbers

X = np.random.default_rng(102).uniform(-3, 3, (200, 3))
y = X[:, 0] * np.sin(X[:, 1])
K = 9061438163468778.0


def test_a_factor_made_neutral_by_a_huge_constant_is_dropped():
    # -K*x0*sin(x1)/(x2 - K): the divisor is -K up to rounding, x2 only seems used
    skeleton = Skeleton(("div", "mul", "c", "mul", "x_1", "sin", "x_2", "add", "x_3", "c"))
    pruned, constants, loss = prune(skeleton, np.array([-K, -K]), X, y, 0.01)
    assert pruned.tokens == ("mul", "x_1", "sin", "x_2")
    assert len(constants) == 0 and loss < 1e-20


def test_a_negligible_term_is_dropped_and_a_used_variable_kept():
    skeleton = Skeleton(("add", "mul", "x_1", "sin", "x_2", "mul", "c", "x_3"))
    assert prune(skeleton, np.array([1e-14]), X, y, 0.01)[0].tokens == ("mul", "x_1", "sin", "x_2")
    used = X[:, 0] * np.sin(X[:, 1]) + 0.5 * X[:, 2]
    assert prune(skeleton, np.array([0.5]), X, used, 0.01)[0] == skeleton


# The best row of a fit of x0*sin(x1) on U(1, 5)**3 at max_time=0.5 (Operon's, issue 39): a line in x1
# disguised as 52.7*log(0.0219*x1 + 1.09) inside the sine, x2 used with a factor of 5e-6.
DISGUISED = Skeleton(
    ("add", "c", "mul", "c", "mul", "add", "mul", "c", "x_1", "c", "mul", "c", "sin", "mul", "c", "ln",
     "mul", "add", "mul", "c", "x_2", "c", "add", "mul", "c", "x_3", "c")
)  # fmt: skip
DISGUISED_CONSTANTS = np.array(
    [1.10650252e-03, 9.94824069e-01, 1.04980124, 1.79950700e-03, 9.59367870e-01, 5.26578938e01,
     2.18632088e-02, 1.08846735, -4.99721679e-06, 9.17383785e-01]
)  # fmt: skip


def test_a_part_in_one_variable_that_is_a_line_over_the_data_is_refitted_as_one():
    X_positive = np.random.default_rng(0).uniform(1, 5, (200, 3))
    target = X_positive[:, 0] * np.sin(X_positive[:, 1])
    pruned, constants, loss = prune(DISGUISED, DISGUISED_CONSTANTS, X_positive, target, 0.01)
    assert pruned.tokens == ("mul", "x_1", "sin", "x_2") and len(constants) == 0 and loss < 1e-20


def test_prune_best_prunes_the_lowest_score_and_says_when_nothing_changes():
    plain = Skeleton(("mul", "x_1", "sin", "x_2"))
    spurious = Skeleton(("div", "mul", "c", "mul", "x_1", "sin", "x_2", "add", "x_3", "c"))
    baseline = Skeleton(("c",))
    rows = [baseline, spurious], [np.array([0.0]), np.array([-K, -K])], [float(np.var(y)), 0.0]
    row, (pruned, _, loss) = prune_best(*rows, X, y, 0.01)
    assert (row, pruned, loss) == (1, plain, 0.0)
    assert prune_best([baseline, plain], [np.array([0.0]), np.array([])], [float(np.var(y)), 0.0], X, y, 0.01) is None


def test_large_constants_are_never_re_spelled_as_integers_or_fractions():
    assert simple_numbers(K) == [0, 1]
    x = sympy.Symbol("x")
    assert tidy_numbers(sympy.Float(K) * x) == sympy.Float(K) * x


@pytest.mark.parametrize(
    "seed, law, unused",  # fits that selected an unused column before pruning, or after it (55; benchmarks/studies)
    [
        (2, lambda X: 2.54 * X[:, 0] * np.sin(X[:, 2]), {"x1"}),
        (11, lambda X: np.exp(X[:, 1] / 2.0), {"x0"}),
        (55, lambda X: X[:, 1] / (X[:, 2] ** 2 + 1.05), {"x0", "x3", "x4"}),
    ],
)
def test_the_selected_equation_holds_no_unused_column(seed, law, unused):
    from benchmarks.studies.spurious_variables import case

    _, X, y, _ = case(seed)
    assert np.allclose(y, law(X))
    expression = NeSymReSRegressor(random_state=seed).fit(X, y).expression_
    assert not unused & {str(symbol) for symbol in expression.free_symbols}


def test_the_pruning_judges_no_trial_after_its_deadline(monkeypatch):
    from nesymres_sklearn.search.budget import Deadline
    from nesymres_sklearn.search.fitting.constants import Evaluations
    from nesymres_sklearn.search.selection import pruning

    class Ticking:  # each read of the clock is a second later
        def __init__(self):
            self.now = 0.0

        def __call__(self):
            self.now += 1.0
            return self.now

    X_positive = np.random.default_rng(0).uniform(1, 5, (200, 3))
    target = X_positive[:, 0] * np.sin(X_positive[:, 1])
    judged, mse = [], pruning.mse  # the pruning scores each row it judges by its mse
    monkeypatch.setattr(pruning, "mse", lambda *args: judged.append(1) or mse(*args))
    pruning.prune(DISGUISED, DISGUISED_CONSTANTS, X_positive, target, 0.01)
    whole = len(judged)
    judged.clear()
    late = Evaluations(10**6, Deadline(4.0, Ticking()))  # passes at the clock's fourth read
    pruned = pruning.prune(DISGUISED, DISGUISED_CONSTANTS, X_positive, target, 0.01, evaluations=late)
    assert len(judged) <= 4 < whole and pruned.skeleton == DISGUISED  # the row itself, then three trials


def test_an_exact_law_over_decades_keeps_the_constants_that_its_small_values_need():
    """``y = 2.3*x0*(exp(0.724*x1) - 1)`` from 1e-3 to 1e126: ``x0*(exp(0.72608*x1) - 1)``
    fits the largest values to rounding, and the sum of squares reads only them; every
    point's relative error does not let the constant go."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(1, 2, 200), np.geomspace(1e-3, 400, 200)])
    y = 2.3 * X[:, 0] * (np.exp(0.724 * X[:, 1]) - 1)
    skeleton = Skeleton(("mul", "mul", "c", "x_1", "add", "exp", "mul", "c", "x_2", "-1"))
    pruned = prune(skeleton, np.array([2.3, 0.724]), X, y, complexity_penalty=0.01)
    assert pruned.skeleton == skeleton
    np.testing.assert_allclose(pruned.skeleton.program(X, pruned.constants), y, rtol=1e-9)
