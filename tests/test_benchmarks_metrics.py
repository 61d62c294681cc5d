import numpy as np
import pytest

from benchmarks.metrics import (
    accuracy_a1,
    accuracy_a2,
    close_fraction,
    model_size,
    r2_finite,
    score,
    symbolic_scores,
    symbolic_solution,
)


@pytest.fixture
def y():
    return np.linspace(1.0, 10.0, 1000)


def test_exact_prediction_is_recovered(y):
    assert accuracy_a1(y, y.copy())
    assert accuracy_a2(y, y.copy())
    assert r2_finite(y, y) == 1.0


def test_off_by_ten_percent_fails_a1(y):
    assert close_fraction(y, 1.1 * y) == 0.0
    assert not accuracy_a1(y, 1.1 * y)


def test_within_tolerance_passes_a1(y):
    assert accuracy_a1(y, 1.01 * y)  # rtol 0.05
    assert accuracy_a1(np.zeros(100), np.full(100, 5e-4))  # atol 1e-3
    assert not accuracy_a1(np.zeros(100), np.full(100, 2e-3))


def test_a1_threshold_is_strictly_more_than_95_percent(y):
    pred = y.copy()
    pred[:50] = -1.0  # exactly 95% correct
    assert close_fraction(y, pred) == pytest.approx(0.95)
    assert not accuracy_a1(y, pred)
    pred[:49] = y[:49]
    assert accuracy_a1(y, pred)


def test_nans_are_kept_by_a1(y):
    truth = y.copy()
    truth[:100] = np.nan
    # Same NaNs in the prediction count as correct.
    pred = truth.copy()
    assert accuracy_a1(truth, pred)
    # A prediction that is finite where the truth is NaN is wrong there (10% of points).
    assert close_fraction(truth, y) == pytest.approx(0.9)
    assert not accuracy_a1(truth, y)
    # NaN predictions on 3% of the points are tolerated.
    pred = y.copy()
    pred[:30] = np.nan
    assert accuracy_a1(y, pred)
    # Infinities of the same sign match.
    assert accuracy_a1(np.array([np.inf, 1.0]), np.array([np.inf, 1.0]))
    assert not accuracy_a1(np.array([np.inf, 1.0]), np.array([-np.inf, 1.0]))


def test_a2_excludes_non_finite_values(y):
    pred = y.copy()
    pred[::2] = np.nan
    pred[1::4] = np.inf
    assert not accuracy_a1(y, pred)
    assert accuracy_a2(y, pred)
    truth = y.copy()
    truth[:500] = np.nan
    assert r2_finite(truth, y) == 1.0


def test_a2_threshold(y):
    rng = np.random.default_rng(0)
    noisy = y + rng.normal(0, 0.5 * y.std(), y.size)
    assert r2_finite(y, noisy) < 0.95
    assert not accuracy_a2(y, noisy)
    slightly = y + rng.normal(0, 0.05 * y.std(), y.size)
    assert accuracy_a2(y, slightly)


def test_constant_functions():
    truth = np.full(100, 3.0)
    assert accuracy_a1(truth, np.full(100, 3.0))
    assert accuracy_a2(truth, np.full(100, 3.0))
    # Within isclose tolerance, but R^2 of a constant is 0 unless exact.
    assert accuracy_a1(truth, np.full(100, 3.01))
    assert r2_finite(truth, np.full(100, 3.01)) == 0.0
    assert not accuracy_a2(truth, np.full(100, 3.01))
    # A scalar prediction is broadcast.
    assert accuracy_a1(truth, 3.0)
    # A constant prediction of a varying function is not recovered.
    y = np.linspace(0, 1, 100)
    assert not accuracy_a2(y, np.full(100, y.mean()))


def test_too_few_finite_points_is_not_recovered():
    assert np.isnan(r2_finite([1.0, np.nan], [1.0, 2.0]))
    assert not accuracy_a2([1.0, np.nan], [1.0, 2.0])


def test_isclose_is_relative_to_the_prediction():
    # numpy.isclose(y, y_hat) tests |y - y_hat| <= atol + rtol * |y_hat|.
    assert close_fraction([1.0], [1.052]) == 1.0  # 0.052 <= 0.001 + 0.0526
    assert close_fraction([1.052], [1.0]) == 0.0  # 0.052 > 0.001 + 0.05


def test_score_keys(y):
    result = score(y, y, suffix="_iid")
    assert result == {"a1_iid": True, "a2_iid": True, "close_iid": 1.0, "r2_iid": 1.0}


def test_shape_mismatch_raises():
    with pytest.raises(ValueError):
        accuracy_a1(np.ones(3), np.ones(4))


@pytest.mark.slow
@pytest.mark.parametrize(
    "model, truth",
    [
        ("x_1*sin(x_2)", "x_1*sin(x_2)"),
        ("2.0001*x_1 + 5", "2*x_1"),  # another constant added, a float that rounds to the true one
        ("3*sin(x_1)", "sin(x_1)"),  # a constant factor
        ("log(10*(x_1/10.0))", "log(x_1)"),  # a unit rescaling that cancels
        ("3.16227766016838*sqrt(x_1/10.0)", "sqrt(x_1)"),  # a rescaled variable: the ratio is constant
        ("x_1 - 4.3e-18*x_2", "x_1"),  # a negligible term is rounded away
        ("0.398942280401433*exp(-x_1**2/2)", "sqrt(2)*exp(-x_1**2/2)/(2*sqrt(pi))"),
    ],
)
def test_symbolic_solutions(model, truth):
    assert symbolic_solution(model, truth)


@pytest.mark.parametrize(
    "model, truth",
    [
        ("sin(1.1*x_1)", "sin(x_1)"),  # a constant inside changes the law
        ("x_1 + x_2", "x_1*x_2"),
        ("x_1/(x_2 + 1)", "x_1/x_2"),
        ("0", "x_1"),  # a zero ratio is not a solution
        ("x_1 + 0.01*x_2", "x_1"),  # a small but real term
        ("2*x_1 + 5", "x_1"),  # an affine map of the law
    ],
)
def test_not_symbolic_solutions(model, truth):
    assert not symbolic_solution(model, truth)


def test_model_size_counts_nodes_after_rounding_and_simplifying():
    assert model_size("x_1*sin(x_2)") == 4  # Mul, x_1, sin, x_2
    assert model_size("1.0000001*x_1*sin(x_2)") == model_size("x_1*sin(x_2)")
    assert model_size("x_1 + x_1") == model_size("2*x_1")
    assert symbolic_scores("2*x_1", "x_1") == {"solution": True, "model_size": 3, "relative_size": 3.0}
    assert not symbolic_scores("2*x_1 + 5", "x_1")["solution"]  # neither the difference nor the ratio is constant


def test_a_simplification_past_its_time_limit_is_not_a_solution(monkeypatch):
    import benchmarks.metrics as metrics
    from pretraining.time_limit import TimeLimitExceeded

    def out_of_time(seconds, function, *args):
        raise TimeLimitExceeded(f"{function.__name__} ran for more than {seconds} s")

    monkeypatch.setattr(metrics, "call_with_time_limit", out_of_time)
    assert not symbolic_solution("x_1", "x_1", seconds=0.1)
    assert model_size("x_1 + x_2") == 3  # counted as written


def test_a_model_that_sympy_cannot_simplify_is_not_a_solution(monkeypatch):
    import benchmarks.metrics as metrics

    def overflowing(expression, ratio=1):
        raise OverflowError("too many digits in integer")

    monkeypatch.setattr(metrics.sympy, "simplify", overflowing)
    monkeypatch.setattr(metrics, "call_with_time_limit", lambda seconds, function, *args: function(*args))
    assert not symbolic_solution("x_1", "x_1")
    assert model_size("x_1 + x_2") == 3  # counted as written
