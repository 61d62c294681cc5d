"""Error bars by the delta method: ordinary least squares' standard errors on a skeleton
linear in its constants, coverage on simulated noise, and the estimator's
``constants_std_`` and ``predict(X, return_std=True)``."""

import pickle
import warnings

import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitting.constants import fit_constants
from nesymres_sklearn.uncertainty import constants_covariance

# c0*x0 + c1*x1 + c2: linear in its constants
LINEAR = Skeleton(("add", "add", "mul", "c", "x_1", "mul", "c", "x_2", "c"))
# c0*exp(c1*x0) + c2
NONLINEAR = Skeleton(("add", "mul", "c", "exp", "mul", "c", "x_1", "c"))


def ols_standard_errors(design: np.ndarray, y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares' coefficients and their standard errors, s²(XᵀWX)⁻¹."""
    root = np.sqrt(weights)[:, None]
    coefficients = np.linalg.lstsq(design * root, y * root[:, 0], rcond=None)[0]
    residuals = y - design @ coefficients
    noise = np.sum(weights * residuals**2) / (len(y) - design.shape[1])
    return coefficients, np.sqrt(np.diag(noise * np.linalg.inv(design.T @ (weights[:, None] * design))))


@pytest.mark.parametrize("weighted", [False, True])
def test_a_skeleton_linear_in_its_constants_gets_ordinary_least_squares_standard_errors(weighted):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 3, size=(40, 2))
    y = 1.5 * X[:, 0] - 0.7 * X[:, 1] + 2.0 + rng.normal(0, 0.3, 40)
    weights = rng.uniform(0.2, 2.0, 40) if weighted else np.ones(40)
    weights /= weights.mean()
    coefficients, expected = ols_standard_errors(np.column_stack([X, np.ones(40)]), y, weights)
    covariance = constants_covariance(LINEAR.program, X, y, coefficients, weights if weighted else None)
    np.testing.assert_allclose(covariance.std, expected, rtol=1e-10)


def test_constants_the_data_do_not_determine_have_infinite_standard_errors():
    product = Skeleton(("mul", "mul", "c", "c", "x_1"))  # only c0*c1 is determined
    X = np.linspace(1, 2, 20)[:, None]
    covariance = constants_covariance(product.program, X, 3 * X[:, 0] + 0.01 * np.sin(9 * X[:, 0]), np.array([1.5, 2]))
    assert np.all(np.isinf(covariance.std))
    assert np.all(np.isfinite(covariance.prediction_std(product.program, X, np.array([1.5, 2]))))


@pytest.mark.slow
def test_error_bars_cover_about_95_percent_of_fresh_draws_on_simulated_noise():
    rng = np.random.default_rng(0)
    truth = np.array([2.0, 0.3, 1.0])
    X = np.linspace(0, 4, 30)[:, None]
    X_new = np.linspace(0.2, 3.8, 10)[:, None]
    curve, curve_new = NONLINEAR.program(X, truth), NONLINEAR.program(X_new, truth)
    noise, repeats = 0.2, 400
    fresh_inside = curve_inside = 0
    for _ in range(repeats):
        y = curve + rng.normal(0, noise, len(curve))
        constants = fit_constants(NONLINEAR.program, X, y, 2, rng, None).constants
        covariance = constants_covariance(NONLINEAR.program, X, y, constants)
        predicted, std = (
            NONLINEAR.program(X_new, constants),
            covariance.prediction_std(NONLINEAR.program, X_new, constants),
        )
        fresh = curve_new + rng.normal(0, noise, len(curve_new))
        fresh_inside += np.sum(np.abs(fresh - predicted) <= 1.96 * std)
        # without the noise: the band of the curve itself
        curve_std = np.sqrt(std**2 - covariance.noise_variance)
        curve_inside += np.sum(np.abs(curve_new - predicted) <= 1.96 * curve_std)
    # 4000 draws, seeded (measured: 93.9% and 93.9%; 1.96 is the normal quantile, a little
    # narrower than Student's t with 27 degrees of freedom): a binomial standard error of
    # 0.4 percentage points, and the band several of them wide
    assert 0.92 <= fresh_inside / (repeats * len(X_new)) <= 0.97
    assert 0.91 <= curve_inside / (repeats * len(X_new)) <= 0.98


def test_the_estimator_gives_standard_errors_and_predictions_in_the_units_of_y(tiny_model):
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 5, size=(60, 2))
    y = X[:, 0] * np.sin(X[:, 1]) + rng.normal(0, 0.1, 60)
    fits = [
        NeSymReSRegressor(model=str(tiny_model), beam_size=4, refine=None, random_state=0).fit(X, y * factor)
        for factor in (1.0, 1e6)
    ]
    (mean, std), (mean_large, std_large) = (fit.predict(X, return_std=True) for fit in fits)
    skeleton = fits[0].equations_.loc[fits[0].best_index_, "skeleton"]
    assert len(fits[0].constants_std_) == sum(symbol.name.startswith("c") for symbol in skeleton.free_symbols)
    np.testing.assert_allclose(fits[1].constants_std_, fits[0].constants_std_, rtol=1e-6)
    np.testing.assert_allclose(mean_large, mean * 1e6, rtol=1e-6)
    np.testing.assert_allclose(std_large, std * 1e6, rtol=1e-6)
    assert np.all(std > 0) and np.array_equal(fits[0].predict(X), mean)
    with pytest.raises(ValueError, match="selected equation only"):
        fits[0].predict(X, index=fits[0].best_index_ + 1, return_std=True)


def test_a_constant_target_has_no_error_bar(tiny_model):
    X = np.random.default_rng(0).uniform(1, 5, size=(20, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        reg = NeSymReSRegressor(model=str(tiny_model), refine=None).fit(X, np.full(20, 2.5))
    assert np.array_equal(reg.constants_std_, [0.0])
    assert np.array_equal(reg.predict(X[:3], return_std=True)[1], np.zeros(3))


def test_the_bundled_models_fit_of_a_law_linear_in_its_constant_gets_its_ols_standard_error():
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 5, size=(200, 2))
    y = 2.37 * X[:, 0] / X[:, 1] + rng.normal(0, 0.05, 200)  # 2.5 would be written 5/2 (within its error bar)
    reg = NeSymReSRegressor(random_state=0, refine=None).fit(X, y)
    assert str(reg.equations_.loc[reg.best_index_, "skeleton"]) == "c_0*(x_1/x_2)"  # the law under noise
    coefficient, expected = ols_standard_errors((X[:, 0] / X[:, 1])[:, None], y, np.ones(200))
    assert float(reg.expression_.atoms(sympy.Float).pop()) == pytest.approx(coefficient[0], rel=1e-9)
    np.testing.assert_allclose(reg.constants_std_, expected, rtol=1e-8)


def test_error_bars_survive_pickling(tiny_model):
    X = np.random.default_rng(2).uniform(1, 5, size=(40, 2))
    y = X[:, 0] + np.random.default_rng(3).normal(0, 0.1, 40)
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=2, refine=None, random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(restored.predict(X, return_std=True)[1], reg.predict(X, return_std=True)[1])
    np.testing.assert_array_equal(restored.constants_std_, reg.constants_std_)
