"""The search's units (:mod:`nesymres_sklearn.search.scaling`): powers of ten, and an
offset of ``y`` taken out before the search and put back into the law."""

import warnings

import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.scaling import Scaling, offset
from nesymres_sklearn.search.settings import SearchSettings

RATIO = SearchSettings().offset_ratio


def law(X):
    return X[:, 0] * np.sin(X[:, 1])


def data(n=150, seed=0):
    return np.random.default_rng(seed).uniform(1, 5, size=(n, 2))


def test_an_offset_far_above_the_spread_is_taken_out_rounded_below_the_spread():
    y = 1e9 + law(data())
    b = offset(y, RATIO)
    assert b == round(b) and abs(b - 1e9) <= 5  # to the unit: the spread is about 2.5
    scaling = Scaling.for_data(data(), y, RATIO)
    assert scaling.y_offset == b
    scaled = scaling.scale_y(y)
    assert abs(np.mean(scaled)) < np.std(scaled)  # spread around 0, in the network's band
    np.testing.assert_allclose(scaling.unscale_y(scaled), y, rtol=0, atol=1e-6)
    assert scaling.unscale_spread(np.ones(3)).tolist() == [scaling.y_scale] * 3


@pytest.mark.parametrize("y", [law(data()), 17.0 + 0.06 * law(data()), np.full(5, 3.0)])
def test_ordinary_targets_and_constants_keep_no_offset(y):
    assert offset(y, RATIO) == 0.0
    assert Scaling.for_data(data(len(y)), y, RATIO).y_offset == 0.0
    assert offset(1e9 + law(data()), None) == 0.0  # None: never


def test_the_written_law_carries_the_offset():
    x0, x1 = sympy.symbols("x0 x1")
    scaling = Scaling((1.0, 1.0), 1.0, 1e9)
    written = scaling.unscale_expression(x0 * sympy.sin(x1) + 3, (x0, x1), evaluate=True)
    assert written == x0 * sympy.sin(x1) + 1000000003  # an integral offset stays exact
    floats = scaling.unscale_expression(x0 * sympy.sin(x1), (x0, x1))
    assert float(floats.subs({x0: 2.0, x1: 1.0})) == pytest.approx(1e9 + 2 * np.sin(1.0), abs=1e-6)


def test_settings_reject_a_ratio_that_is_not_positive():
    with pytest.raises(ValueError, match="offset_ratio must be positive or None"):
        SearchSettings(offset_ratio=0)


@pytest.mark.parametrize("b", [1e8, 1e12])
def test_a_fit_on_a_large_offset_writes_the_law_plus_the_offset(tiny_model, b):
    """The guess is the law; before the offset was taken out, the target read as the
    constant 1 in the search's units and no row fitted its variation."""
    X = data()
    regressor = NeSymReSRegressor(
        model=str(tiny_model), beam_size=2, n_restarts=1, refine=None, random_state=0, guesses=["x0*sin(x1)"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        regressor.fit(X, b + law(X))
    assert regressor._writer.scaling.y_offset != 0.0
    fresh = np.random.default_rng(1).uniform(0.5, 10, size=(200, 2))  # beyond the training box
    predicted = sympy.lambdify(sympy.symbols("x0 x1"), regressor.expression_)(fresh[:, 0], fresh[:, 1])
    np.testing.assert_allclose(predicted - b, law(fresh), rtol=0, atol=1e-6 * 10 + 64 * np.spacing(b))
    np.testing.assert_allclose(regressor.predict(fresh) - b, law(fresh), rtol=0, atol=1e-5 + 64 * np.spacing(b))


def test_the_offset_of_values_near_the_largest_float_overflows_nothing():
    with np.errstate(all="raise"):
        assert offset(1e300 * law(data()), RATIO) == 0.0
        b = offset(1e300 + 1e290 * law(data()), RATIO)
    assert b != 0.0 and abs(b / 1e300 - 1) < 1e-9
