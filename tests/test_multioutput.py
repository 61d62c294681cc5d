"""Several targets: one equation per column of ``y``, fitted in parallel; lists of
fitted attributes, predictions of shape ``(n_samples, k)``; a single column keeps the
1-D behaviour with scikit-learn's ``DataConversionWarning``."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import DataConversionWarning

from nesymres_sklearn import NeSymReSRegressor


def data():
    X = np.random.default_rng(0).uniform(1, 5, size=(50, 2))
    return X, np.column_stack([X[:, 0] * np.sin(X[:, 1]), X[:, 0] + X[:, 1], np.exp(-X[:, 1])])


def regressor(tiny_model, **params):
    return NeSymReSRegressor(**{"model": str(tiny_model), "beam_size": 2, "refine": None, "random_state": 0, **params})


@pytest.mark.slow
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_each_column_gets_the_equation_its_own_fit_would(tiny_model, n_jobs):
    X, Y = data()
    reg = regressor(tiny_model, n_jobs=n_jobs).fit(X, Y)
    singles = [regressor(tiny_model).fit(X, Y[:, j]) for j in range(3)]
    assert reg.expression_ == [single.expression_ for single in singles]
    assert [len(t) for t in reg.equations_] == [len(single.equations_) for single in singles]
    assert reg.predict(X).shape == (50, 3)
    np.testing.assert_array_equal(reg.predict(X), np.column_stack([single.predict(X) for single in singles]))
    mean, std = reg.predict(X, return_std=True)
    assert std.shape == (50, 3) and np.array_equal(mean, reg.predict(X))
    assert reg.sympy() == reg.expression_ and len(reg.latex()) == 3 and len(reg.equation()) == 3
    assert reg.__sklearn_tags__().target_tags.multi_output


def test_several_targets_read_repr_export_and_pickle(tiny_model):
    X, Y = data()
    frame = pd.DataFrame(X, columns=["a", "b"])
    reg = regressor(tiny_model).fit(frame, Y)
    assert list(reg.feature_names_in_) == ["a", "b"] and reg.n_features_in_ == 2
    text = repr(reg)
    assert text.count("equation (row") == 3 and "target 2:" in text
    functions = reg.to_callable()
    np.testing.assert_allclose(np.column_stack([f(X) for f in functions]), reg.predict(frame), rtol=1e-9, atol=1e-12)
    restored = pickle.loads(pickle.dumps(reg))
    assert restored.expression_ == reg.expression_
    np.testing.assert_array_equal(restored.predict(frame), reg.predict(frame))
    with pytest.raises(ValueError, match=r"with several targets use estimators_\[j\]\.predict"):
        reg.predict(frame, index=1)


def test_a_single_column_is_one_target_with_a_conversion_warning(tiny_model):
    X, Y = data()
    with pytest.warns(DataConversionWarning, match="column-vector y was passed when a 1d array was expected"):
        reg = regressor(tiny_model).fit(X, Y[:, :1])
    assert not hasattr(reg, "estimators_") and reg.predict(X).shape == (50,)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        assert reg.expression_ == regressor(tiny_model).fit(X, Y[:, 0]).expression_


def test_a_refit_on_one_target_forgets_the_several(tiny_model):
    X, Y = data()
    reg = regressor(tiny_model).fit(X, Y)
    reg.fit(X, Y[:, 0])
    assert not hasattr(reg, "estimators_") and reg.predict(X).shape == (50,)


def test_units_reach_every_target_one_unit_for_all_or_one_per_column(tiny_model):
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 5, size=(40, 3))  # speed, time, distance
    Y = np.column_stack([X[:, 0] * X[:, 1], X[:, 2] / X[:, 1]])  # a distance and a speed
    reg = regressor(tiny_model).fit(X, Y, X_units=["m/s", "s", "m"], y_units=["m", "m/s"])
    assert reg.X_units_ == [["m/s", "s", "m"]] * 2 and reg.y_units_ == ["m", "m/s"]
    assert reg.pi_groups_ == [single.pi_groups_ for single in reg.estimators_] and reg.pi_groups_[0] is not None
    same = regressor(tiny_model).fit(X, Y[:, [0, 0]], X_units=["m/s", "s", "m"], y_units="m")
    assert same.y_units_ == ["m", "m"]
    with pytest.raises(ValueError, match="y has 2 columns but y_units holds 3 units"):
        regressor(tiny_model).fit(X, Y, X_units=["m/s", "s", "m"], y_units=["m", "m/s", "s"])
