import numpy as np
import pytest

from nesymres_sklearn.search.selection import COLUMNS, best_index, candidate_table


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


def test_table_sorted_by_score_with_penalty():
    table, order = candidate_table(rows((1e-3, 3), (1e-3, 9), (0.5, 1)), complexity_penalty=1e-4)
    assert list(table.columns) == COLUMNS
    assert table["expression"].tolist() == ["e0", "e1", "e2"]
    assert order.tolist() == [0, 1, 2]
    np.testing.assert_allclose(table["score"], [1e-3 + 3e-4, 1e-3 + 9e-4, 0.5 + 1e-4])
    assert best_index(table) == 0


def test_penalty_breaks_ties_towards_shorter_skeletons():
    table, order = candidate_table(rows((0.0, 7), (0.0, 2)), complexity_penalty=1e-14)
    assert table.loc[best_index(table), "expression"] == "e1"
    assert order.tolist() == [1, 0]


def test_infinite_losses_are_never_selected():
    table, order = candidate_table(rows((np.inf, 1), (10.0, 30)), complexity_penalty=0.0)
    assert table.loc[best_index(table), "expression"] == "e1"
    assert order.tolist() == [1, 0]
    with pytest.raises(ValueError, match="No candidate"):
        best_index(candidate_table(rows((np.inf, 1)), 0.0)[0])


def test_equal_scores_keep_the_proposal_order():
    table, order = candidate_table(rows((0.1, 4), (0.2, 1), (0.1, 4)), complexity_penalty=0.0)
    assert table["expression"].tolist() == ["e0", "e2", "e1"]
    assert order.tolist() == [0, 2, 1]
