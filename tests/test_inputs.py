"""What a user passes: errors that name the column and the fix, warnings for data that
fit but mislead (issue 39); ``score`` without overflow (issue 53)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import r2_score

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.inputs import (
    check_columns,
    r2_score_scaled,
    warn_constant_features,
    warn_few_points,
    warn_outside_domain,
    warn_repeated_columns,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(1, 5, (40, 2))


@pytest.fixture(scope="module")
def fitted(tiny_model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return NeSymReSRegressor(model=str(tiny_model), beam_size=4, refine=None, random_state=0).fit(
            X, np.log(X[:, 0]) * X[:, 1]
        )


def test_a_datetime_column_is_named():
    frame = pd.DataFrame({"a": X[:, 0], "when": pd.date_range("2020-01-01", periods=len(X))})
    with pytest.raises(ValueError, match=r"Column 'when' of X holds dates or times .*total_seconds"):
        check_columns(frame)


@pytest.mark.parametrize("column", [pd.Categorical(["lo", "hi"] * 20), np.array(["lo", "hi"] * 20, dtype=object)])
def test_a_categorical_or_text_column_is_named(column):
    frame = pd.DataFrame({"a": X[:, 0], "level": column})
    with pytest.raises(ValueError, match=r"Column 'level' of X holds .* such as 'lo', not numbers.*get_dummies"):
        check_columns(frame)


@pytest.mark.parametrize("name", ["", "  "])
def test_a_blank_column_name_is_refused(name):
    with pytest.raises(ValueError, match=r"Column 1 of X has a blank name .*X.to_numpy\(\)"):
        check_columns(pd.DataFrame({"a": X[:, 0], name: X[:, 1]}))


def test_the_fit_names_a_bad_column_before_numpy_does(tiny_model):
    frame = pd.DataFrame({"a": X[:, 0], "when": pd.date_range("2020-01-01", periods=len(X))})
    with pytest.raises(ValueError, match="Column 'when'"):
        NeSymReSRegressor(model=str(tiny_model)).fit(frame, X[:, 1])


def test_repeated_or_collinear_columns_are_named():
    repeated = np.column_stack([X, X[:, 0], 3 * X[:, 1] + 2])
    with pytest.warns(UserWarning, match=r"x0 and x2; x1 and x3\. The equation may use either"):
        warn_repeated_columns(repeated, ["x0", "x1", "x2", "x3"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_repeated_columns(X, ["x0", "x1"])  # independent columns: no warning
        warn_repeated_columns(np.column_stack([X, np.ones(len(X))]), ["x0", "x1", "x2"])  # a constant one neither


def test_fewer_points_than_constants_warn():
    with pytest.warns(UserWarning, match="4 constants, fitted to only 3 points"):
        warn_few_points(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_few_points(4, 3)


def test_predictions_outside_the_domain_are_named():
    with pytest.warns(RuntimeWarning, match=r"2 of 4 points .* \(rows 1, 3\)"):
        warn_outside_domain(np.array([1.0, np.nan, 2.0, np.inf]))
    with pytest.warns(RuntimeWarning, match=r"7 of 7 points .* \(rows 0, 1, 2, 3, 4, \.\.\.\)"):
        warn_outside_domain(np.full(7, np.nan))


def test_predict_names_the_points_outside_a_fitted_logs_domain():
    positive = RNG.uniform(1, 5, (100, 1))
    regressor = NeSymReSRegressor(beam_size=8, refine=None, random_state=0).fit(positive, np.log(positive[:, 0]))
    assert str(regressor.expression_) == "log(x0)"
    with pytest.warns(RuntimeWarning, match=r"2 of 3 points lie outside .* \(rows 0, 2\)"):
        values = regressor.predict(np.array([[-1.0], [2.0], [-3.0]]))
    assert np.isnan(values[[0, 2]]).all() and values[1] == pytest.approx(np.log(2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        regressor.predict(positive)  # inside the domain: no warning


def test_negative_index_counts_from_the_end(fitted):
    last = len(fitted.equations_) - 1
    np.testing.assert_array_equal(fitted.predict(X, index=-1), fitted.predict(X, index=last))
    assert fitted.sympy(index=-1) == fitted.sympy(index=last)
    assert fitted.latex(index=-1) == fitted.latex(index=last)
    with pytest.raises(IndexError, match=rf"0 to {last}, or -{last + 1} to -1"):
        fitted.predict(X, index=-(last + 2))


def test_the_fit_warns_about_a_duplicated_column(tiny_model):
    with pytest.warns(UserWarning, match="x0 and x2"):
        NeSymReSRegressor(model=str(tiny_model), beam_size=4, refine=None, random_state=0).fit(
            np.column_stack([X, X[:, 0]]), X[:, 0] * np.sin(X[:, 1])
        )


def test_r2_score_scaled_is_sklearns_without_the_overflow():
    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    predicted = y + 0.1 * rng.normal(size=50)
    weights = rng.uniform(0, 2, size=50)
    Y, P = np.column_stack([y, 1e-5 * y]), np.column_stack([predicted, 1.1e-5 * predicted])
    assert r2_score_scaled(y, predicted) == r2_score(y, predicted)  # to the last bit
    assert r2_score_scaled(y, predicted, weights) == r2_score(y, predicted, sample_weight=weights)
    assert r2_score_scaled(Y, P, weights) == r2_score(Y, P, sample_weight=weights)
    assert r2_score_scaled(y, predicted[:, None]) == r2_score(y, predicted[:, None])
    with np.errstate(all="ignore"):
        assert np.isnan(r2_score(1e300 * y, 1e300 * predicted))  # the sums of squares overflow
    assert r2_score_scaled(1e300 * y, 1e300 * predicted) == r2_score(y, predicted)
    assert r2_score_scaled(1e300 * y, 1e300 * predicted, weights) == r2_score(y, predicted, sample_weight=weights)
    assert r2_score_scaled(1e-10 * y, np.full(50, 1.7e308)) == -np.inf  # far off, as r2_score says
    assert r2_score_scaled(np.zeros(5), np.zeros(5)) == r2_score(np.zeros(5), np.zeros(5)) == 1.0
    with pytest.raises(ValueError, match="infinity"):
        r2_score_scaled(y, np.r_[predicted[:-1], np.inf])


def test_score_does_not_overflow_near_1e300(fitted, tiny_model):
    y = np.log(X[:, 0]) * X[:, 1]
    weights = RNG.uniform(0.5, 2, size=len(X))
    assert fitted.score(X, y) == r2_score(y, fitted.predict(X))
    assert fitted.score(X, y, weights) == r2_score(y, fitted.predict(X), sample_weight=weights)
    big = NeSymReSRegressor(model=str(tiny_model), beam_size=4, refine=None, random_state=0).fit(X, 1e300 * y)
    predicted = big.predict(X)
    assert np.all(np.isfinite(predicted)) and np.median(np.abs(predicted)) > 1e299  # the tiny model fits roughly
    assert np.isfinite(big.score(X, 1e300 * y))
    assert big.score(X, 1e300 * y) == pytest.approx(r2_score(y, predicted / 1e300), rel=1e-12, abs=1e-12)


def test_constant_columns_with_a_varying_target_are_a_warning(tiny_model):
    """Issue 65: a constant came back without a word."""
    rng = np.random.default_rng(0)
    X, y = np.tile([2.0, 3.0], (40, 1)), rng.normal(size=40)
    regressor = NeSymReSRegressor(model=str(tiny_model), beam_size=2, n_restarts=1, refine=None, random_state=0)
    with pytest.warns(UserWarning, match=r"Every column of X is constant \(2 columns\) while y varies"):
        regressor.fit(X, y)
    assert np.ptp(regressor.predict(X)) == 0
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Every column of X is constant")
        warn_constant_features(X, np.ones(40))  # y constant too: nothing to explain
        warn_constant_features(np.column_stack([X, rng.normal(size=40)]), y)  # one column varies
