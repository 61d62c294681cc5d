import numpy as np
import pytest

from nesymres_sklearn.search.exactness import FVU_FLOOR
from nesymres_sklearn.search.selection.scores import (
    COLUMNS,
    best_index,
    candidate_table,
    log_fvu,
    pareto_front,
)


def rows(*pairs):
    return [
        {
            "expression": f"e{i}",
            "skeleton": f"s{i}",
            "loss": loss,
            "complexity": complexity,
            "log_prob": -float(i),
            "origin": "beam",
        }
        for i, (loss, complexity) in enumerate(pairs)
    ]


def test_table_sorted_by_log_fvu_plus_penalty():
    table, order = candidate_table(rows((1e-3, 3), (1e-3, 9), (0.5, 1)), complexity_penalty=0.01, variance=2.0)
    assert list(table.columns) == COLUMNS
    assert table["expression"].tolist() == ["e0", "e1", "e2"]
    assert order.tolist() == [0, 1, 2]
    expected = np.log([1e-3 / 2, 1e-3 / 2, 0.5 / 2]) + 0.01 * np.array([3, 9, 1])
    np.testing.assert_allclose(table["score_lower_is_better"], expected)
    assert best_index(table) == 0


def test_score_does_not_depend_on_units():
    a, _ = candidate_table(rows((0.3, 5), (0.1, 9)), 0.05, variance=4.0)
    b, _ = candidate_table(rows((0.3e6, 5), (0.1e6, 9)), 0.05, variance=4.0e6)
    np.testing.assert_allclose(a["score_lower_is_better"], b["score_lower_is_better"])


def test_exact_fits_tie_and_the_penalty_picks_the_shorter():
    table, order = candidate_table(rows((1e-30, 7), (1e-25, 2)), complexity_penalty=0.01, variance=1.0)
    assert table.loc[best_index(table), "expression"] == "e1"
    assert order.tolist() == [1, 0]
    assert log_fvu(np.array([0.0]), 1.0)[0] == pytest.approx(np.log(FVU_FLOOR))


def test_a_small_gain_does_not_pay_for_many_tokens():
    # Fitting noise: 4% less unexplained variance is not worth 11 more tokens.
    table, _ = candidate_table(rows((0.0100, 4), (0.0096, 15)), complexity_penalty=0.01, variance=1.0)
    assert table.loc[best_index(table), "expression"] == "e0"


def test_infinite_losses_are_never_selected():
    table, order = candidate_table(rows((np.inf, 1), (10.0, 30)), complexity_penalty=0.0, variance=1.0)
    assert table.loc[best_index(table), "expression"] == "e1"
    assert order.tolist() == [1, 0]
    with pytest.raises(ValueError, match="No candidate"):
        best_index(candidate_table(rows((np.inf, 1)), 0.0, 1.0)[0])


def test_equal_scores_keep_the_proposal_order():
    table, order = candidate_table(rows((0.1, 4), (0.2, 1), (0.1, 4)), complexity_penalty=0.0, variance=1.0)
    assert table["expression"].tolist() == ["e0", "e2", "e1"]
    assert order.tolist() == [0, 2, 1]


def test_pareto_front():
    loss = np.array([0.5, 0.1, 0.1, 0.3, 0.05, np.inf])
    complexity = np.array([1, 5, 7, 6, 9, 2])
    assert pareto_front(loss, complexity).tolist() == [True, True, False, False, True, False]


def test_exact_ties_share_a_place_on_the_front():
    loss = np.array([0.5, 0.1, 0.1, 0.1, np.inf, np.inf])
    complexity = np.array([1, 5, 5, 6, 1, 1])
    assert pareto_front(loss, complexity).tolist() == [True, True, True, False, False, False]


def test_the_selected_rows_constants_are_polished_to_float64s_optimum():
    """A row fitted in float32 (Operon's) ends at the least-squares optimum in float64;
    constants that are already optimal, or a row without constants, stay as they are."""
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.selection.final import polished

    rng = np.random.default_rng(1)
    X = rng.uniform(1, 5, size=(200, 2))
    y = 2.5 * X[:, 0] / X[:, 1] + rng.normal(0, 0.05, 200)
    problem = Problem(X, y)
    skeleton = Skeleton(("div", "mul", "c", "x_1", "x_2"))
    design = X[:, 0] / X[:, 1]
    optimum = float(design @ y / (design @ design))
    float32 = np.array([optimum], dtype=np.float32).astype(np.float64)
    assert float32[0] != optimum
    assert polished(skeleton, float32, problem)[0] == pytest.approx(optimum, rel=1e-12)
    np.testing.assert_array_equal(polished(skeleton, np.array([optimum]), problem), [optimum])
    bare = Skeleton(("div", "x_1", "x_2"))
    assert polished(bare, np.empty(0), problem).shape == (0,)


def test_rows_that_restate_a_better_row_leave_the_table():
    """Issue 65: the tables were padded with ``x0*(1.0*sin(x1))`` and ``x0*sin(x1 - 5.06e-8)``."""
    import sympy

    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search.fitted import CandidateRows, Fitted
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.scaling import Scaling
    from nesymres_sklearn.search.selection.final import select
    from nesymres_sklearn.search.selection.table import without_restatements
    from nesymres_sklearn.writing.export import feature_symbols
    from nesymres_sklearn.writing.writer import Writer, write_selected

    X = np.random.default_rng(0).uniform(1, 5, size=(100, 2))
    problem = Problem(X, X[:, 0] * np.sin(X[:, 1]))
    candidates = CandidateRows()
    for tokens, constants in [
        (("mul", "x_1", "mul", "c", "sin", "x_2"), [1.0]),  # x0*(1.0*sin(x1))
        (("mul", "x_1", "sin", "add", "x_2", "c"), [-5.06e-8]),  # x0*sin(x1 - 5.06e-8)
        (("mul", "x_1", "sin", "x_2"), []),  # the law
        (("mul", "x_1", "sin", "add", "x_2", "c"), [0.01]),  # close, but another law
        (("mul", "c", "x_1"), [0.5]),
    ]:
        skeleton = Skeleton(tokens)
        values = np.array(constants)
        loss = float(np.mean((skeleton.program(X, values) - problem.y) ** 2))
        candidates.add(Fitted(skeleton, values, loss), origin="beam")
    distinct = without_restatements(candidates, problem, 0.01)
    assert [str(s) for s in distinct.skeletons] == ["mul x_1 sin x_2", "mul x_1 sin add x_2 c", "mul c x_1"]
    assert distinct.constants[1].tolist() == [0.01]
    writer = Writer(Scaling.identity(2), tuple(feature_symbols(["x0", "x1"])))
    table = write_selected(select(candidates, problem, 0.01, writer, seed=0), problem, writer)
    assert len(table.equations) == 3
    assert table.equations.loc[table.best_index, "expression"] == sympy.sympify(
        "x0*sin(x1)", locals=dict(zip(["x0", "x1"], feature_symbols(["x0", "x1"])))
    )


def test_on_data_over_decades_the_law_beats_its_largest_term_alone():
    """``x0 + x3 + 3.5 + 1.4*exp(2.4*x1 + x2)``: the exponential alone ties the law under
    the plain floor (both below ``FVU_FLOOR``, the shorter wins) but not under the
    problem's (:attr:`.Problem.fvu_floor`)."""
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search.fitted import CandidateRows, Fitted, mse
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.selection.table import tabulate

    X = np.random.default_rng(0).uniform([4.5, -8.7, -2.8, -0.1], [8.6, 8.4, 3.6, 1.3], (128, 4))
    y = X[:, 0] + X[:, 3] + 3.5 + 1.4 * np.exp(2.4 * X[:, 1] + X[:, 2])
    problem = Problem(X, y)
    alone = Skeleton(("mul", "c", "exp", "add", "mul", "c", "x_2", "x_3"))
    law = Skeleton(("add", "add", "add", "x_1", "x_4", "c", *alone.tokens))
    rows = CandidateRows()
    for skeleton, constants in ((alone, np.array([1.4, 2.4])), (law, np.array([3.5, 1.4, 2.4]))):
        rows.add(Fitted(skeleton, constants, mse(skeleton.program, X, y, constants)), origin="beam")
    assert all(loss / problem.scale < FVU_FLOOR for loss in rows.losses)
    written = lambda skeleton, constants: str(skeleton.tokens)  # noqa: E731
    plain = tabulate(rows, 0.01, problem.scale, 1.0, written)
    scaled = tabulate(rows, 0.01, problem.scale, 1.0, written, problem.fvu_floor)
    assert plain.fitted[plain.best_index][0] == alone
    assert scaled.fitted[scaled.best_index][0] == law
