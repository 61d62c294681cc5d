"""The estimator on a bad day: odd column names, failed refits, odd targets, extreme
data, progress output, sample weights, and predicting without torch."""

import pickle

import numpy as np
import pandas as pd
import pytest
import sympy
from hub_server import run_python
from models import QUICK_OPERON
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from nesymres_sklearn import NeSymReSRegressor


@pytest.fixture
def regressor(tiny_model):
    return NeSymReSRegressor(model=str(tiny_model), beam_size=4, random_state=0, operon_settings=QUICK_OPERON)


@pytest.mark.parametrize(
    "names, printed, latex",
    [
        (["sin", "x"], "`sin`*sin(x)", r"\text{sin} \sin{\left(x \right)}"),
        (["x-1", "a b"], "`x-1`*sin(`a b`)", r"\text{x-1} \sin{\left(\text{a b} \right)}"),
        (["1", "E"], "`1`*sin(`E`)", r"\text{1} \sin{\left(\text{E} \right)}"),
    ],
)
def test_any_column_name_predicts_and_prints_unambiguously(names, printed, latex):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(1, 5, size=(64, 2)), columns=names)
    y = frame.iloc[:, 0] * np.sin(frame.iloc[:, 1])
    regressor = NeSymReSRegressor(beam_size=4, random_state=0).fit(frame, y)
    assert str(regressor.expression_) == printed
    assert regressor.latex() == latex
    np.testing.assert_allclose(regressor.predict(frame), y, rtol=1e-9)


def test_a_refit_that_raises_leaves_the_previous_fit_intact(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    before = regressor.predict(X)
    expression, table = regressor.expression_, regressor.equations_
    with pytest.raises(ValueError, match="Input X contains NaN"):
        regressor.fit(np.full((64, 5), np.nan), np.random.default_rng(2).random(64))
    assert regressor.n_features_in_ == 2
    assert regressor.expression_ is expression and regressor.equations_ is table
    np.testing.assert_array_equal(regressor.predict(X), before)


def test_a_first_fit_that_raises_leaves_no_fit(regressor):
    with pytest.raises(ValueError, match="Input y contains infinity"):
        regressor.fit(np.ones((10, 4)), np.r_[np.arange(9.0), np.inf])
    assert not hasattr(regressor, "n_features_in_")
    with pytest.raises(NotFittedError):
        regressor.predict(np.ones((3, 4)))


@pytest.mark.parametrize(
    "y, shown",
    [
        (np.array(["a"] * 20), "<U1 values such as 'a'"),
        (pd.Series(["1.5"] * 19 + ["high"]), "object values such as '1.5'"),
        (np.array([b"x"] * 20), "values such as b'x'"),
    ],
)
def test_non_numeric_targets_get_a_value_error_that_names_them(regressor, y, shown):
    X = np.random.default_rng(0).uniform(1, 5, size=(20, 2))
    with pytest.raises(ValueError, match=f"y must hold numbers .*{shown}.*pandas.to_numeric"):
        regressor.fit(X, y)


@pytest.mark.parametrize("to_target", [np.asarray, pd.Series], ids=["array", "series"])
def test_boolean_targets_are_refused_as_classification_targets(regressor, to_target):
    X = np.random.default_rng(0).uniform(1, 5, size=(40, 2))
    with pytest.raises(ValueError, match="y is boolean, a classification target.*LogisticRegression.*astype"):
        regressor.fit(X, to_target(X[:, 0] > 3))


def test_repeated_column_names_get_a_value_error_that_names_them(regressor):
    X = pd.DataFrame(np.random.default_rng(0).uniform(1, 5, size=(20, 3)), columns=["a", "b", "a"])
    with pytest.raises(ValueError, match="Feature names must be unique.*repeated column names: 'a'. Rename"):
        regressor.fit(X, X.iloc[:, 0])


def test_extreme_constant_targets_predict_finite_values(regressor):
    X = np.random.default_rng(0).uniform(size=(20, 2))
    for value in (np.finfo(float).max, -np.finfo(float).max):
        with pytest.warns(UserWarning, match="y is constant"):
            regressor.fit(X, np.full(20, value))
        np.testing.assert_array_equal(regressor.predict(X), np.full(20, value))


def test_no_finite_candidate_says_what_to_do(regressor, xy, monkeypatch):
    from nesymres_sklearn.search.selection import table

    def nothing_finite(equations):
        raise ValueError("No candidate equation is finite on the training data.")

    monkeypatch.setattr(table, "best_index", nothing_finite)
    with pytest.raises(ValueError, match="Look for extreme values in X and y .* rescale them"):
        regressor.fit(*xy)


PROGRESS = """
    import numpy as np
    from nesymres_sklearn import NeSymReSRegressor
    X = np.random.default_rng(0).uniform(1, 5, size=(40, 2))
    for verbose in (0, 1, 0):
        NeSymReSRegressor(model={model!r}, beam_size=2, n_restarts=1, refine=None, random_state=0, verbose=verbose).fit(
            X, X[:, 0] + X[:, 1]
        )
    print("DONE")
"""


@pytest.mark.slow
def test_verbose_fits_show_progress_on_stderr_without_a_logging_setup(tiny_model):
    result = run_python(PROGRESS.format(model=str(tiny_model)), {})
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("[NeSymReS]")]
    assert any("Searching 40 points" in line for line in lines)
    assert any("Beam " in line and "new skeletons fitted" in line for line in lines)
    # Only the fit with verbose=1 speaks, and its last message is the selection.
    assert lines[-1].startswith("[NeSymReS] Selected ")
    assert sum(line.startswith("[NeSymReS] Selected ") for line in lines) == 1
    assert sum(line.startswith("[NeSymReS] Searching ") for line in lines) == 1


def test_zero_weights_drop_points_and_weights_steer_the_fit(tiny_model):
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(60, 2))
    y = X[:, 0] + X[:, 1]
    garbage = rng.uniform(1, 5, size=(20, 2))
    X_all, y_all = np.vstack([X, garbage]), np.r_[y, rng.normal(size=20) * 100]
    weights = np.r_[np.full(60, 2.5), np.zeros(20)]
    make = dict(model=str(tiny_model), beam_size=4, random_state=0)
    weighted = NeSymReSRegressor(**make).fit(X_all, y_all, sample_weight=weights)
    clean = NeSymReSRegressor(**make).fit(X, y)
    assert sympy.srepr(weighted.expression_) == sympy.srepr(clean.expression_)
    np.testing.assert_allclose(weighted.predict(X), clean.predict(X))
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        NeSymReSRegressor(**make).fit(X, y, sample_weight=-np.ones(60))
    with pytest.raises(ValueError, match="Only 2 points have a positive sample_weight"):
        NeSymReSRegressor(**make).fit(X, y, sample_weight=np.r_[1.0, 1.0, np.zeros(58)])


def test_sample_weight_passes_through_pipeline_and_grid_search(tiny_model):
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(80, 2))
    y = X[:, 0] * X[:, 1]
    weights = np.r_[np.ones(60), np.zeros(20)]
    y_noisy = np.r_[y[:60], rng.normal(size=20) * 1e3]
    pipeline = make_pipeline(FunctionTransformer(), NeSymReSRegressor(model=str(tiny_model), random_state=0))
    pipeline.fit(X, y_noisy, nesymresregressor__sample_weight=weights)
    clean = NeSymReSRegressor(model=str(tiny_model), random_state=0).fit(X[:60], y[:60])
    assert sympy.srepr(pipeline[-1].expression_) == sympy.srepr(clean.expression_)
    search = GridSearchCV(NeSymReSRegressor(model=str(tiny_model), random_state=0), {"beam_size": [1, 2]}, cv=2)
    search.fit(X, y_noisy, sample_weight=weights)
    refit = NeSymReSRegressor(model=str(tiny_model), random_state=0, **search.best_params_).fit(X[:60], y[:60])
    assert sympy.srepr(search.best_estimator_.expression_) == sympy.srepr(refit.expression_)


UNPICKLE_WITHOUT_TORCH = """
    import pickle, sys
    import numpy as np
    class NoTorch:  # any import of torch now fails
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "torch":
                raise ImportError("torch is not installed here")
    sys.meta_path.insert(0, NoTorch())
    with open({path!r}, "rb") as handle:
        regressor = pickle.load(handle)
    X = np.load({X!r})
    np.save({out!r}, regressor.predict(X))
    print(regressor.expression_, regressor.latex())
    print("torch" in sys.modules)
"""


@pytest.mark.slow
def test_a_fitted_estimator_unpickles_and_predicts_without_torch(regressor, xy, tmp_path):
    X, y = xy
    regressor.fit(X, y)
    (tmp_path / "fitted.pkl").write_bytes(pickle.dumps(regressor))
    np.save(tmp_path / "X.npy", X)
    code = UNPICKLE_WITHOUT_TORCH.format(
        path=str(tmp_path / "fitted.pkl"), X=str(tmp_path / "X.npy"), out=str(tmp_path / "p.npy")
    )
    result = run_python(code, {})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"{regressor.expression_} {regressor.latex()}", "False"]
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), regressor.predict(X))


@pytest.mark.slow
def test_fits_in_threads_leave_torch_threads_and_logging_as_they_were(regressor, xy):
    import logging

    import torch
    from joblib import Parallel, delayed, parallel_config
    from sklearn.base import clone

    X, y = xy
    package_logger = logging.getLogger("nesymres_sklearn")
    threads, level, handlers = torch.get_num_threads(), package_logger.level, list(package_logger.handlers)
    torch.set_num_threads(2)
    try:
        with parallel_config(backend="threading"):
            fitted = Parallel(n_jobs=4)(
                delayed(clone(regressor).set_params(verbose=k % 2, refine=None).fit)(X, y) for k in range(8)
            )
        assert torch.get_num_threads() == 2
        assert package_logger.level == level and package_logger.handlers == handlers
        assert len({str(f.expression_) for f in fitted}) == 1  # same data, same seed, same equation
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize(
    "weight, message",
    [(float("inf"), "infinity"), (-1.0, "must be non-negative"), (0.0, "at least one non-zero")],
)
def test_a_scalar_sample_weight_gets_the_array_s_checks(tiny_model, weight, message):
    X = np.random.default_rng(0).uniform(1, 5, (20, 2))
    with pytest.raises(ValueError, match=message):
        NeSymReSRegressor(model=str(tiny_model), beam_size=2).fit(X, X[:, 0], sample_weight=weight)
