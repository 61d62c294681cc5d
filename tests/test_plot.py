"""``plot.pareto``: every finite candidate, the Pareto front and the selected row; a
clear error without matplotlib, without a target among several, or before ``fit``."""

import sys

import matplotlib
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.plot import pareto

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def fitted(tiny_model):
    X = np.random.default_rng(0).uniform(1, 5, size=(50, 2))
    Y = np.column_stack([X[:, 0] * np.sin(X[:, 1]), X[:, 0] + X[:, 1]])
    return NeSymReSRegressor(model=str(tiny_model), beam_size=8, refine=None, random_state=0).fit(X, Y)


def test_the_plot_shows_the_candidates_the_front_and_the_selected_row(fitted):
    table, best = fitted.equations_[1], fitted.best_index_[1]
    ax = pareto(fitted, target=1)
    candidates, selected = ax.collections
    finite = table[np.isfinite(table["log_fvu"])]
    np.testing.assert_array_equal(candidates.get_offsets(), finite[["complexity", "log_fvu"]].to_numpy())
    np.testing.assert_array_equal(selected.get_offsets(), [[table.loc[best, "complexity"], table.loc[best, "log_fvu"]]])
    (front,) = ax.lines
    assert sorted(set(front.get_xdata())) == sorted(set(finite.loc[finite["pareto"], "complexity"]))
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["candidates", "Pareto front", "selected"]


def test_an_unfitted_estimator_is_not_fitted():
    with pytest.raises(NotFittedError, match="This NeSymReSRegressor instance is not fitted yet"):
        pareto(NeSymReSRegressor())


def test_several_targets_need_a_target(fitted):
    with pytest.raises(ValueError, match="The estimator has 2 targets: pass target=0 to 1"):
        pareto(fitted)


def test_without_matplotlib_the_error_says_how_to_install_it(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'pip install "nesymres-sklearn\[plot\]"'):
        pareto(fitted, target=0)
