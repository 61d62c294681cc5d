import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitted import mse
from nesymres_sklearn.search.fitting.candidates import Candidate
from nesymres_sklearn.search.fitting.constants import fit_constants
from nesymres_sklearn.search.fitting.linear_scaling import is_scaled, outer_scaling, scaled_candidates
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(100, 1))
    return X, 2.0 * np.sin(1.5 * X[:, 0]) + 1.0


def fitted(tokens, X, y, weights=None):
    candidate = Candidate(Skeleton(tokens), -1.0, "beam")
    return candidate, fit_constants(candidate.skeleton.program, X, y, 4, np.random.default_rng(0), None, weights)


def test_outer_scaling_is_the_least_squares_line():
    f = np.linspace(-1, 1, 50)
    assert outer_scaling(f, 3 * f - 2) == pytest.approx((3.0, -2.0))
    assert outer_scaling(np.full(50, 2.0), f) is None
    assert outer_scaling(np.where(f > 0, np.inf, f), f) is None


def test_outer_scaling_honours_weights():
    f = np.linspace(-1, 1, 50)
    y = 3 * f - 2
    y[:5] += 100.0  # outliers that weigh (almost) nothing
    weights = np.ones(50)
    weights[:5] = 1e-12
    a, b = outer_scaling(f, y, weights)
    assert (a, b) == pytest.approx((3.0, -2.0), rel=1e-6)
    assert outer_scaling(f, y)[1] > -1  # unweighted, the outliers pull the offset


def test_a_scaled_candidate_fits_what_the_skeleton_cannot(data):
    X, y = data
    candidate, fit = fitted(("sin", "mul", "c", "x_1"), X, y)
    assert fit.mse > 0.5  # no room for the factor 2 and the offset 1
    seen = {candidate.skeleton.key}
    scaled, fits = scaled_candidates([candidate], [fit], Problem(X, y), seen)
    assert [c.origin for c in scaled] == ["scaled"]
    assert scaled[0].skeleton.tokens == ("add", "c", "mul", "c", "sin", "mul", "c", "x_1")
    assert scaled[0].log_prob == candidate.log_prob
    assert fits[0].mse < 1e-20
    assert fits[0].mse == mse(scaled[0].skeleton.program, X, y, fits[0].constants)
    b, a, inner = fits[0].constants
    assert (b, a * np.sign(inner), abs(inner)) == pytest.approx((1.0, 2.0, 1.5))
    assert scaled[0].skeleton.key in seen


@pytest.mark.parametrize(
    "tokens",
    [
        ("add", "c", "mul", "c", "cos", "mul", "c", "x_1"),  # already scaled (and not exact)
        ("c",),  # the constant baseline
        ("mul", "c", "x_1"),  # an offset would explain almost nothing more
    ],
)
def test_no_scaled_candidate_where_it_cannot_help(data, tokens):
    X, y = data
    if tokens == ("mul", "c", "x_1"):
        y = 3 * X[:, 0] + 0.1 * np.sin(7 * X[:, 0])
    candidate, fit = fitted(tokens, X, y)
    assert scaled_candidates([candidate], [fit], Problem(X, y), set()) == ([], [])


def test_exact_fits_and_seen_skeletons_are_not_scaled(data):
    X, y = data
    exact, exact_fit = fitted(("add", "c", "mul", "c", "sin", "mul", "c", "x_1"), X, y)
    assert scaled_candidates([exact], [exact_fit], Problem(X, y), set()) == ([], [])
    candidate, fit = fitted(("sin", "mul", "c", "x_1"), X, y)
    seen = {Skeleton(("add", "c", "mul", "c", "sin", "mul", "c", "x_1")).key}
    assert scaled_candidates([candidate], [fit], Problem(X, y), seen) == ([], [])


def test_only_the_best_candidates_are_scaled(data):
    X, y = data
    worse, worse_fit = fitted(("cos", "mul", "c", "x_1"), X, y)
    better, better_fit = fitted(("sin", "mul", "c", "x_1"), X, y)
    assert better_fit.mse < worse_fit.mse
    scaled, _ = scaled_candidates(
        [worse, better], [worse_fit, better_fit], Problem(X, y), set(), SearchSettings(n_scaled=1)
    )
    assert [c.skeleton.tokens[4:] for c in scaled] == [better.skeleton.tokens]


def test_is_scaled():
    assert is_scaled(Skeleton(("add", "c", "mul", "c", "x_1")))
    assert not is_scaled(Skeleton(("add", "x_1", "mul", "c", "x_1")))
