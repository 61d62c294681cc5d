"""Polynomial identities (search/identities.py): rational laws of many variables and their
square roots, exact to rounding or none."""

import numpy as np
import pytest
import sympy
from clocks import TickingClock

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.operon.settings import OperonSettings
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import CandidateRows
from nesymres_sklearn.search.identities import (
    angle_identity,
    angle_monomial_identity,
    exact_identity,
    exponential_identity,
    identity_rows,
    least_squares_monomial,
    power_law_monomial,
)
from nesymres_sklearn.search.identities_under_noise import (
    AngleLawUnderNoise,
    IdentityUnderNoise,
    identities_to_the_noise,
    noise_tolerance,
    noisy_angle_law,
    noisy_identity,
    noisy_identity_rows,
)
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.search.settings import SearchSettings

C = 300.0
G = 6.674e-11


def wide(rng, n, n_features, signed=()):
    """Features log-uniform over three decades, ``signed`` columns of either sign."""
    X = 10 ** rng.uniform(-1, 2, size=(n, n_features))
    X[:, list(signed)] *= rng.choice([-1.0, 1.0], size=(n, len(signed)))
    return X


# name: (number of features, signed columns, law); each an identity t*Q - P = 0 with t = y or y**2.
LAWS = {
    "weighted mean": (4, (1, 3), lambda v: (v[0] * v[1] + v[2] * v[3]) / (v[0] + v[2])),
    "difference of squares": (5, (0,), lambda v: v[0] * v[1] / (v[2] * (v[3] ** 2 - v[4] ** 2))),
    "velocity addition": (2, (0, 1), lambda v: (v[0] + v[1]) / (1 + v[0] * v[1] / C**2)),
    "distance": (4, (0, 1, 2, 3), lambda v: np.sqrt((v[0] - v[1]) ** 2 + (v[2] - v[3]) ** 2)),
    "speed times mass": (4, (1, 2, 3), lambda v: v[0] * np.sqrt(v[1] ** 2 + v[2] ** 2 + v[3] ** 2)),
    "kinetic energy": (4, (1, 2, 3), lambda v: v[0] * (v[1] ** 2 + v[2] ** 2 + v[3] ** 2) / 2),
    "potential difference": (4, (), lambda v: G * v[0] * v[1] * (1 / v[2] - 1 / v[3])),
    "root of a difference": (3, (), lambda v: np.sqrt(3e3 * v[0] - 2 * v[1] / v[2] ** 2)),
    "negative root": (2, (), lambda v: -np.sqrt(v[0]) * v[1]),
    # y changes sign with the factor outside the root (FastSRB's III.10.19)
    "signed moment": (4, (0, 1, 2, 3), lambda v: v[0] * np.sqrt(v[1] ** 2 + v[2] ** 2 + v[3] ** 2)),
    # y changes sign with a polynomial outside the root, in the numerator or the denominator
    "relativistic length": (3, (0, 1), lambda v: (v[0] - v[1] * v[2]) / np.sqrt(1 - v[1] ** 2 / C**2)),
    "root over a signed difference": (3, (0, 1, 2), lambda v: np.sqrt(v[1] ** 2 + v[2] ** 2) / (v[0] - v[2])),
}


def problem_of(X, y):
    """The problem as the estimator makes it: in the search's units."""
    scaling = Scaling.for_data(X, y)
    return Problem(scaling.scale_X(X), scaling.scale_y(y)), scaling


def drawn(name, n=512, seed=0):
    n_features, signed, law = LAWS[name]
    rng = np.random.default_rng(seed)
    X = wide(rng, 2 * n, n_features, signed)
    with np.errstate(all="ignore"):
        y = law(X.T)
    keep = np.isfinite(y)
    return X[keep][:n], y[keep][:n], law


@pytest.mark.parametrize("name", LAWS)
def test_a_rational_law_or_its_root_comes_back_exact_and_holds_far_outside_the_data(name):
    X, y, law = drawn(name)
    problem, scaling = problem_of(X, y)
    identity = exact_identity(problem)
    assert identity is not None and identity.ends_search(2)  # at most quadratic in each feature
    found = identity.fitted
    assert problem.is_exact_to_rounding(found.loss)
    n_features, signed, _ = LAWS[name]
    fresh = 10 ** np.random.default_rng(1).uniform(2, 4, size=(256, n_features))  # beyond the data's box
    with np.errstate(all="ignore"):
        expected = law(fresh.T)
    keep = np.isfinite(expected)
    predicted = scaling.unscale_y(found.skeleton.program(scaling.scale_X(fresh[keep]), found.constants))
    np.testing.assert_allclose(predicted, expected[keep], rtol=1e-7)


def test_the_row_has_origin_identity():
    X, y, _ = drawn("weighted mean")
    rows, ending = identity_rows(problem_of(X, y)[0], SearchSettings())
    assert len(rows) == 1 and rows.origins == ["identity"] and ending


def test_the_smallest_identity_has_no_extra_terms():
    X, y, _ = drawn("kinetic energy")
    found = exact_identity(problem_of(X, y)[0]).fitted
    assert sympy.srepr(found.skeleton.sympy).count("Symbol('c_") == 3  # c * (x1*x2**2 + c*x1*x3**2 + c*x1*x4**2)


@pytest.mark.parametrize("name", ["weighted mean", "distance", "potential difference"])
def test_noisy_data_give_no_identity(name):
    X, y, _ = drawn(name)
    noisy = y * (1 + 1e-3 * np.random.default_rng(2).standard_normal(len(y)))
    assert len(identity_rows(problem_of(X, noisy)[0], SearchSettings())[0]) == 0


def test_a_law_that_is_no_rational_function_gives_no_identity():
    rng = np.random.default_rng(0)
    X = wide(rng, 512, 2)
    assert exact_identity(problem_of(X, np.sin(X[:, 0]) * X[:, 1])[0]) is None


def test_a_rational_approximation_that_holds_only_on_a_narrow_range_is_not_a_law():
    # Exact to rounding on the data at degrees (3, 5): Padé's sin on [0.1, 0.5], which
    # fitted on the points x <= its median no longer holds beyond them.
    X = np.random.default_rng(0).uniform(0.1, 0.5, size=(512, 1))
    assert exact_identity(problem_of(X, np.sin(X[:, 0]))[0]) is None


def test_a_rational_function_of_high_degree_that_matches_a_log_on_a_narrow_range_does_not_end_the_search():
    # log(x3) on [6.6, 9.4] is a rational function of degree 4 to rounding, also beyond
    # half of each feature: a candidate, but the network still runs.
    rng = np.random.default_rng(0)
    X = rng.uniform([5.0, -9.7, 6.6, -6.8], [7.9, -5.2, 9.4, -0.5], size=(512, 4))
    y = -X[:, 0] + X[:, 1] + 1.775 * X[:, 3] + np.log(2.299 * X[:, 2]) - 1
    identity = exact_identity(problem_of(X, y)[0])
    assert identity is None or (identity.degree > 2 and not identity.ends_search(2))


@pytest.mark.parametrize(
    "law",
    [
        lambda v: v[0] * np.sqrt(v[1]),  # y**2 = x0**2 * x1, and x0 carries y's sign
        lambda v: (v[0] - v[1]) * np.sqrt(v[1]),  # y**2 = (x0 - x1)**2 * x1: the difference carries it
    ],
)
def test_y_of_both_signs_comes_back_as_a_root_where_a_factor_outside_it_carries_the_sign(law):
    rng = np.random.default_rng(0)
    X = wide(rng, 512, 2, signed=(0,))
    problem, scaling = problem_of(X, law(X.T))
    identity = exact_identity(problem)
    assert identity is not None and identity.fitted.skeleton.tokens.count("sqrt") == 1
    fresh = wide(np.random.default_rng(1), 256, 2, signed=(0,))
    predicted = scaling.unscale_y(identity.fitted.skeleton.program(scaling.scale_X(fresh), identity.fitted.constants))
    np.testing.assert_allclose(predicted, law(fresh.T), rtol=1e-8)


def test_y_of_both_signs_as_no_factor_outside_a_root_gives_no_root_law():
    rng = np.random.default_rng(0)
    X = wide(rng, 512, 2, signed=(0, 1))
    # y**2 = (x0 - x1)**2 * |x1| is no rational function where x1 < 0
    assert exact_identity(problem_of(X, (X[:, 0] - X[:, 1]) * np.sqrt(np.abs(X[:, 1])))[0]) is None


def test_features_bound_by_a_relation_give_no_system_but_their_power_law_may_hold():
    from nesymres_sklearn.search.identities import _exact_identity

    rng = np.random.default_rng(0)
    X = wide(rng, 512, 2)
    X = np.column_stack([X, X[:, 0]])  # a feature twice: every system has more than one identity
    problem = problem_of(X, X[:, 0] / X[:, 1])[0]
    assert _exact_identity(problem, SearchSettings().identity_overdetermined) is None
    # over its power law (the least-norm slopes 0.5, -1, 0.5 rounded) the ratio is constant
    found = exact_identity(problem).fitted
    assert found.skeleton.tokens == ("mul", "div", "x_1", "x_2", "c") and found.constants[0] == pytest.approx(1.0)


def test_the_deadline_stops_the_search_between_systems():
    X, y, _ = drawn("difference of squares")
    problem = problem_of(X, y)[0]
    assert exact_identity(problem, Deadline(np.inf, TickingClock())) is not None
    clock = TickingClock()
    assert exact_identity(problem, Deadline(3.0, clock)) is None
    assert clock.now <= 5.0  # it stopped at the first read past the deadline
    assert identity_rows(problem, SearchSettings(), Deadline(0.0, TickingClock()))[1] is False


@pytest.mark.slow
def test_the_estimator_returns_the_exact_law_of_five_variables_and_plans_the_step():
    rng = np.random.default_rng(0)
    X = wide(rng, 300, 5)
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]) / (X[:, 0] + X[:, 2] + X[:, 4])
    regressor = NeSymReSRegressor(random_state=0).fit(X, y)
    x0, x1, x2, x3, x4 = sympy.symbols("x0:5", real=True)
    assert sympy.simplify(regressor.expression_ - (x0 * x1 + x2 * x3) / (x0 + x2 + x4)) == 0
    assert regressor.equations_.loc[regressor.best_index_, "origin"] == "identity"
    steps = list(zip(regressor.plan_["unit"], regressor.plan_["status"]))
    assert steps[:2] == [("identities", "done"), ("network", "skipped: an exact identity")]
    assert regressor.timings_["identities"] > 0 and len(regressor.features_seen_by_network_) == 0
    budgeted = NeSymReSRegressor(random_state=0, max_time=5.0).fit(X, y)
    assert budgeted.expression_ == regressor.expression_  # a budget only cuts the plan
    plain = NeSymReSRegressor(random_state=0, search_settings=SearchSettings(identities=False), max_time=0.5)
    assert "identities" not in set(plain.fit(X, y).plan_["unit"])


# name: law of three features (v0, v1 either sign in [0.1, 10], v2 > 0 over two decades)
# of the form +-m*exp(P/Q)
EXPONENTIAL_LAWS = {
    "gaussian of a difference": lambda v: np.exp(-(((v[0] - v[1]) / v[2]) ** 2) / 2) / (np.sqrt(2 * np.pi) * v[2]),
    "boltzmann factor": lambda v: 3e25 * v[0] ** 2 * np.exp(-9.8e-2 * v[1] / (1.38e-2 * v[2])),
    "negative damped root": lambda v: -np.sqrt(v[2]) * np.exp(-(v[0] ** 2) * v[2] / 50),
}


def exponential_drawn(law, n=512, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0.1, 10, (n, 2)) * rng.choice([-1.0, 1.0], (n, 2)), 10 ** rng.uniform(-1, 1, n)])
    X[:, 1] = np.abs(X[:, 1]) if law is EXPONENTIAL_LAWS["boltzmann factor"] else X[:, 1]
    with np.errstate(all="ignore"):
        return X, law(X.T)


@pytest.mark.parametrize("name", EXPONENTIAL_LAWS)
def test_a_law_of_a_monomial_times_the_exponential_of_a_rational_law_comes_back_exact_beyond_the_data(name):
    X, y = exponential_drawn(EXPONENTIAL_LAWS[name])
    problem, scaling = problem_of(X, y)
    assert exact_identity(problem) is None  # no rational law
    identity = exponential_identity(problem)
    assert identity is not None and problem.is_exact_to_rounding(identity.fitted.loss)
    assert identity.fitted.skeleton.tokens.count("exp") == 1
    fresh, expected = exponential_drawn(EXPONENTIAL_LAWS[name], 256, seed=1)
    fresh[:, 2] *= 3  # beyond the data's range of v2
    with np.errstate(all="ignore"):
        expected = EXPONENTIAL_LAWS[name](fresh.T)
    found = identity.fitted
    predicted = scaling.unscale_y(found.skeleton.program(scaling.scale_X(fresh), found.constants))
    np.testing.assert_allclose(predicted, expected, rtol=1e-7, atol=1e-300)
    # the same row as the identities' stage gives it
    rows, _ = identity_rows(problem, SearchSettings())
    assert rows.origins == ["identity"] and rows.skeletons[0] == found.skeleton


def test_the_exponential_identity_reads_the_points_where_an_exponential_underflows_to_zero():
    X, y = exponential_drawn(EXPONENTIAL_LAWS["gaussian of a difference"])
    assert np.sum(y == 0) >= 50  # (v0 - v1)/v2 up to 200: exp(-20000) is 0.0
    problem = problem_of(X, y)[0]
    found = exponential_identity(problem).fitted
    with np.errstate(all="ignore"):
        predicted = found.skeleton.program(problem.X, found.constants)
    assert np.all(predicted[y == 0] < 1e-300) and problem.is_exact_to_rounding(found.loss)


def test_the_exponential_identity_writes_the_exponent_s_constant_term_as_a_factor():
    # exp(-(v0 - v1)**2/(2*v2**2) - log(sqrt(2*pi))): the factor 1/sqrt(2*pi) outside
    X, y = exponential_drawn(EXPONENTIAL_LAWS["gaussian of a difference"])
    found = exponential_identity(Problem(X, y)).fitted
    assert found.skeleton.tokens[:2] == ("mul", "c") and found.constants[0] == pytest.approx(1 / np.sqrt(2 * np.pi))
    assert found.skeleton.tokens.count("exp") == 1 and found.skeleton.n_constants == len(found.constants)


@pytest.mark.parametrize(
    "law",
    [
        lambda v: np.exp(v[0] / v[2]) + v[1],  # exp of a rational law plus a term
        lambda v: np.abs(v[0]) ** 0.3 * np.exp(v[1] / v[2]),  # a power that is not a multiple of one half
        lambda v: v[2] * np.exp(np.sin(v[0])),  # the exponential of no rational law
        lambda v: v[0] * np.exp(v[1] / v[2]),  # y of both signs
    ],
)
def test_a_law_not_of_the_exponential_form_gives_no_exponential_identity(law):
    X, y = exponential_drawn(law)
    assert exponential_identity(problem_of(X, y)[0]) is None


def test_the_exponential_identity_stops_at_the_deadline():
    X, y = exponential_drawn(EXPONENTIAL_LAWS["gaussian of a difference"])
    clock = TickingClock()
    assert exponential_identity(problem_of(X, y)[0], Deadline(2.0, clock)) is None
    assert clock.now <= 4.0


def test_the_power_law_monomial_is_read_where_log_y_is_mostly_a_power_law():
    from nesymres_sklearn.search.identities import power_law_monomial

    rng = np.random.default_rng(0)
    X = wide(rng, 512, 3, signed=(0,))
    assert power_law_monomial(X, X[:, 0] * X[:, 1] ** 2 / X[:, 2] ** 3 * (2 + np.sin(X[:, 1]))) == [1, 2, -3]
    assert power_law_monomial(X, np.sin(X[:, 0]) + np.cos(X[:, 1])) is None  # no power law
    assert power_law_monomial(X, 3.0 + 0 * X[:, 0]) is None  # a constant: every exponent 0
    # SearchSettings.identity_power_law_r2: the (2 + sin) factor leaves 0.18% of log|y| unexplained
    assert power_law_monomial(X, X[:, 0] * X[:, 1] ** 2 / X[:, 2] ** 3 * (2 + np.sin(X[:, 1])), 0.999) is None
    # a root's share of two features, slopes -0.51 and -0.47: rounded, or towards 0 within `halves`
    y = X[:, 0] / np.sqrt(X[:, 1] ** 2 + X[:, 2] ** 2)
    assert power_law_monomial(X, y, 0.5) == [1, -1, 0] and power_law_monomial(X, y, 0.5, halves=0.1) == [1, 0, 0]


def test_a_law_of_high_degree_is_found_over_its_power_law_monomial():
    # degree 10 as it stands, degree 2 over its monomial v0*v1/v2**5 (FastSRB's II.6.15a)
    rng = np.random.default_rng(0)
    X = wide(rng, 512, 5, signed=(0, 3, 4))
    y = X[:, 0] * X[:, 1] * np.sqrt(X[:, 3] ** 2 + X[:, 4] ** 2) / X[:, 2] ** 5
    problem, scaling = problem_of(X, y)
    identity = exact_identity(problem)
    assert identity is not None and not identity.ends_search(2)  # of degree 5 in v2: the network still runs
    fresh = 10 ** np.random.default_rng(1).uniform(2, 4, size=(256, 5))
    predicted = scaling.unscale_y(identity.fitted.skeleton.program(scaling.scale_X(fresh), identity.fitted.constants))
    expected = fresh[:, 0] * fresh[:, 1] * np.sqrt(fresh[:, 3] ** 2 + fresh[:, 4] ** 2) / fresh[:, 2] ** 5
    np.testing.assert_allclose(predicted, expected, rtol=1e-7)


def test_a_monomial_of_high_degree_beside_other_columns_is_its_power_law_times_a_constant():
    # degree 7 in five columns: too many monomials for a system, but y over its power law is constant
    rng = np.random.default_rng(0)
    X = wide(rng, 512, 5)
    y = -3.6e87 * X[:, 0] * X[:, 1] ** 4 / X[:, 2] ** 2
    problem, scaling = problem_of(X, y)
    identity = exact_identity(problem)
    assert identity is not None and problem.is_exact_to_rounding(identity.fitted.loss)
    assert identity.fitted.skeleton.n_constants == 1 and identity.degree == 4
    fresh = wide(np.random.default_rng(1), 64, 5) * 100
    predicted = scaling.unscale_y(identity.fitted.skeleton.program(scaling.scale_X(fresh), identity.fitted.constants))
    np.testing.assert_allclose(predicted, -3.6e87 * fresh[:, 0] * fresh[:, 1] ** 4 / fresh[:, 2] ** 2, rtol=1e-9)


def test_the_basis_holds_a_sine_to_a_power_of_at_most_one_and_fewer_monomials_than_unknowns():
    from nesymres_sklearn.search.identity_systems import basis_exponents

    exponents = basis_exponents(3, 60, frozenset({2}))
    assert tuple(exponents[0]) == (0, 0, 0) and exponents[:, 2].max() == 1 and exponents[:, 0].max() >= 2
    degrees = exponents.sum(axis=1)
    assert np.all(np.diff(degrees) >= 0) and len(exponents) < 60  # by total degree, fewer than the unknowns
    assert len(basis_exponents(3, 60)) > len(exponents)  # without the sine's bound there are more


def test_angle_columns_are_those_within_one_turn_that_span_a_radian():
    from nesymres_sklearn.search.identities import angle_columns

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 2 * np.pi, 64), rng.uniform(0, 0.5, 64), rng.uniform(1, 30, 64)])
    assert angle_columns(X, np.ones(3)) == {0: 1.0}
    assert angle_columns(X, np.ones(3), min_span=0.4) == {0: 1.0, 1: 1.0}  # identity_angle_span
    assert angle_columns(X, np.ones(3), min_span=7.0) == {}  # wider than one turn
    assert angle_columns(X, np.ones(3), turns=5.0) == {0: 1.0, 2: 1.0}  # within 5 turns (identity_wide_turns)
    X[:, 0] /= 10
    assert angle_columns(X, np.array([10.0, 1.0, 1.0])) == {0: 10.0}  # a scaled column, and its multiplier


ANGLE_LAWS = {  # (law of (g, t), angles): FastSRB's B10 (relativistic aberration) and I.12.11 over its groups
    "aberration": lambda g, t: (np.cos(t) - g) / (1 - g * np.cos(t)),
    "force": lambda g, t: 1 + g * np.sin(t),
    "law of cosines": lambda g, t: np.sqrt(1 + g**2 - 2 * g * np.cos(t)),
}


@pytest.mark.parametrize("name", ANGLE_LAWS)
def test_a_rational_law_of_an_angles_cosine_and_sine_comes_back_exact_and_holds_beyond_the_data(name):
    from nesymres_sklearn.search.identities import angle_identity

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0.05, 0.9, 512), rng.uniform(0, 2 * np.pi, 512)])
    law = ANGLE_LAWS[name]
    problem = Problem(X, law(*X.T))
    assert exact_identity(problem) is None  # no rational law of the angle itself
    found = angle_identity(problem, {1: 1.0}).fitted
    assert problem.is_exact_to_rounding(found.loss)
    assert {"cos", "sin"} & set(found.skeleton.tokens)
    fresh = np.column_stack([rng.uniform(-3, 3, 256), rng.uniform(-20, 20, 256)])  # other ratios, other turns
    with np.errstate(all="ignore"):
        expected = law(*fresh.T)
        predicted = found.skeleton.program(fresh, found.constants)
    keep = np.isfinite(expected)
    np.testing.assert_allclose(predicted[keep], expected[keep], rtol=1e-7, atol=1e-9)


def test_an_angle_that_enters_beyond_a_rational_law_of_its_sine_and_cosine_gives_no_identity():
    from nesymres_sklearn.search.identities import angle_identity

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0.5, 2, 512), rng.uniform(0, 2 * np.pi, 512)])
    assert angle_identity(Problem(X, np.exp(np.cos(X[:, 1])) * X[:, 0]), {1: 1.0}) is None
    assert angle_identity(Problem(X, np.cos(X[:, 0] * X[:, 1])), {1: 1.0}) is None  # the angle times a feature
    assert angle_identity(Problem(X, X[:, 0] + np.cos(X[:, 1])), {}) is None  # no angle: no system


# laws of (r1, r2, t1, t2) where the angles enter by their difference (the angle between two directions)
DIFFERENCE_LAWS = {
    "distance of two points in polar coordinates": lambda v: np.sqrt(
        v[0] ** 2 + v[1] ** 2 - 2 * v[0] * v[1] * np.cos(v[2] - v[3])
    ),
    "conic section": lambda v: v[0] * (1 - v[1] ** 2) / (1 + v[1] * np.cos(v[2] - v[3])),
}


@pytest.mark.parametrize("name", DIFFERENCE_LAWS)
def test_a_rational_law_of_the_cosine_of_two_angles_difference_comes_back_exact_beyond_the_data(name):
    from nesymres_sklearn.search.identities import angle_differences, angle_identity

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0.5, 9, 512), rng.uniform(0.05, 0.9, 512), rng.uniform(0, 2 * np.pi, (512, 2))])
    law = DIFFERENCE_LAWS[name]
    problem = Problem(X, law(X.T))
    angles = {2: 1.0, 3: 1.0}
    assert angle_identity(problem, angles) is None  # too many monomials of both angles' cosines and sines
    assert angle_differences(angles) == [(2, 3)] and angle_differences({2: 1.0, 3: np.pi / 180}) == []
    found = angle_identity(problem, angles, difference=(2, 3)).fitted
    assert problem.is_exact_to_rounding(found.loss) and "cos" in found.skeleton.tokens
    rows, _ = identity_rows(problem, SearchSettings())  # the identities' stage finds it too
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    fresh = np.column_stack([rng.uniform(10, 20, 256), rng.uniform(0.05, 0.9, 256), rng.uniform(-20, 20, (256, 2))])
    with np.errstate(all="ignore"):
        expected, predicted = law(fresh.T), found.skeleton.program(fresh, found.constants)
    np.testing.assert_allclose(predicted, expected, rtol=1e-7)


def test_a_law_of_square_roots_of_features_and_an_angle_comes_back_exact_beyond_the_data():
    """Two waves' interference, ``x0 + x1 + 2*sqrt(x0*x1)*cos(x2)``: no rational law of
    the features, nor of their angle's cosine, but one of their square roots."""
    rng = np.random.default_rng(0)
    X = np.column_stack([10 ** rng.uniform(-3, -1, (512, 2)), rng.uniform(0, 2 * np.pi, 512)])

    def law(v):
        return v[0] + v[1] + 2 * np.sqrt(v[0] * v[1]) * np.cos(v[2])

    problem, scaling = problem_of(X, law(X.T))
    assert angle_identity(problem, {2: 1.0}) is None
    found = angle_identity(problem, {2: 1.0}, roots=True).fitted
    assert problem.is_exact_to_rounding(found.loss) and found.skeleton.tokens.count("sqrt") >= 2
    rows, _ = identity_rows(problem, SearchSettings())
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    fresh = np.column_stack([10 ** rng.uniform(-1, 1, (256, 2)), rng.uniform(-9, 9, 256)])
    predicted = scaling.unscale_y(found.skeleton.program(scaling.scale_X(fresh), found.constants))
    np.testing.assert_allclose(predicted, law(fresh.T), rtol=1e-7)


@pytest.mark.parametrize(
    "law",
    [
        lambda v: v[0] * (v[1] + v[2] * v[3] * np.sin(v[4])),  # the Lorentz force on a charge
        lambda v: v[0] / (v[1] * np.sqrt(v[2] ** 2 + v[3] ** 2 - 2 * v[2] * v[3] * np.cos(v[4]))),  # a potential
    ],
)
def test_an_angle_law_of_five_features_comes_back_over_its_power_law_monomial(law):
    # two decades each (FastSRB's I.12.11 and B13): log|y| is mostly a power law
    rng = np.random.default_rng(0)
    X = np.column_stack([10 ** rng.uniform(-1, 1, (512, 4)), rng.uniform(0, np.pi, 512)])
    problem, scaling = problem_of(X, law(X.T))
    assert angle_identity(problem, {4: 1.0}, replaced=True) is None  # too many monomials of five features
    rows, _ = identity_rows(problem, SearchSettings())
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    skeleton, constants = rows.best_first()[0]
    assert skeleton.tokens[0] == "mul" and {"sin", "cos"} & set(skeleton.tokens)
    fresh = np.column_stack([wide(rng, 256, 4) * 10, rng.uniform(-9, 9, 256)])
    predicted = scaling.unscale_y(skeleton.program(scaling.scale_X(fresh), constants))
    np.testing.assert_allclose(predicted, law(fresh.T), rtol=1e-7)


def test_a_power_of_a_half_angle_s_sine_comes_back_over_its_monomial():
    # Rutherford's scattering (FastSRB's B1 has its form): over the whole angle the law is
    # rational in cos(t), but 1 - cos(t) loses digits near t = 0, where y spans decades
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(1, 11, (512, 2)), 10 ** rng.uniform(-1, 1, 512), rng.uniform(0, 2 * np.pi, 512)])

    def law(v):
        return (v[0] * v[1] / (4 * v[2] * np.sin(v[3] / 2) ** 2)) ** 2

    problem, scaling = problem_of(X, law(X.T))
    rows, _ = identity_rows(problem, SearchSettings())
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    skeleton, constants = rows.best_first()[0]
    fresh = np.column_stack([rng.integers(1, 30, (256, 2)), 10 ** rng.uniform(-2, 2, 256), rng.uniform(0.01, 6.2, 256)])
    predicted = scaling.unscale_y(skeleton.program(scaling.scale_X(fresh), constants))
    np.testing.assert_allclose(predicted, law(fresh.T), rtol=1e-7)


def test_columns_that_no_exact_law_needs_are_dropped_least_relevant_first():
    """A Gaussian of three features with two added columns: the logs of five columns give
    too many unknowns, those of the three that the law reads do not."""
    rng = np.random.default_rng(0)
    X, y = exponential_drawn(EXPONENTIAL_LAWS["gaussian of a difference"])
    added = np.column_stack([X[:, :1], rng.uniform(1, 5, (len(X), 2)), X[:, 1:]])  # columns 1 and 2 are noise
    problem = Problem(added, y)
    assert len(identity_rows(problem, SearchSettings(identity_dropped_columns=0))[0]) == 0
    rows, _ = identity_rows(problem, SearchSettings())
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    read = {token for token in rows.skeletons[0].tokens if token.startswith("x_")}
    assert read == {"x_1", "x_4", "x_5"}  # every column of the law, none of the added ones
    # a search over fewer columns starts only where the time left before halfway to the
    # deadline holds what the search over every column took (here: each read of the clock)
    clock = TickingClock()
    rows, _ = identity_rows(problem, SearchSettings(), Deadline(1e9, clock))
    first = clock.now
    assert len(rows) == 1
    short = TickingClock()
    assert len(identity_rows(problem, SearchSettings(), Deadline(1.9 * first, short))[0]) == 0
    assert short.now < 1.2 * first  # no second search began
    with pytest.raises(ValueError, match="identity_dropped_columns"):
        SearchSettings(identity_dropped_columns=-1)


def test_the_readings_after_the_rational_identity_stop_halfway_to_the_deadline(monkeypatch):
    from nesymres_sklearn.search import identities
    from nesymres_sklearn.search.identities import identity_with_angles

    rng = np.random.default_rng(0)
    X = np.column_stack([10 ** rng.uniform(-1, 1, (512, 4)), rng.uniform(0, np.pi, 512)])
    y = X[:, 0] / (X[:, 1] * np.sqrt(X[:, 2] ** 2 + X[:, 3] ** 2 - 2 * X[:, 2] * X[:, 3] * np.cos(X[:, 4])))
    problem = Problem(X, y)  # found by a late reading: the angle over the power-law monomial

    class Clock:
        now, step = 0.0, 0.0

        def __call__(self):
            self.now += self.step
            return self.now

    clock = Clock()
    assert identity_with_angles(problem, np.ones(5), Deadline(1.0, clock)) is not None  # a stopped clock
    original = identities._rational_or_over_monomial

    def slow_first(*args, **kwargs):  # the rational identity took 0.6 of the deadline's 1.0
        found = original(*args, **kwargs)
        clock.now, clock.step = 0.6, 0.01
        return found

    monkeypatch.setattr(identities, "_rational_or_over_monomial", slow_first)
    clock.now = 0.0
    assert identity_with_angles(problem, np.ones(5), Deadline(1.0, clock)) is None
    assert clock.now < 0.85  # stopped at halfway (0.805), not at the deadline


def test_without_units_a_law_of_features_and_their_sines_comes_back_exact_in_the_searchs_units():
    # validation's VAL-WC-035 and VAL-WC-006: the angle also enters as itself
    rng = np.random.default_rng(0)
    X = rng.uniform(-9.9, 9.9, size=(128, 2))
    X[:, 0] = np.where(np.abs(X[:, 0]) < 0.5, 0.5, X[:, 0])
    for law in (
        lambda x: x[:, 0] + np.sin(x[:, 0]) + np.sin(2 * x[:, 0]),
        lambda x: 3.054 * x[:, 0] + np.cos(x[:, 1] + 2.84) + x[:, 1] / x[:, 0],
    ):
        problem, scaling = problem_of(X, law(X))
        assert exact_identity(problem) is None
        rows, _ = identity_rows(problem, SearchSettings())
        assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
        skeleton, constants = rows.best_first()[0]
        fresh = rng.uniform(-30, 30, size=(64, 2))  # beyond the data
        predicted = scaling.unscale_y(skeleton.program(scaling.scale_X(fresh), constants))
        np.testing.assert_allclose(predicted, law(fresh), rtol=1e-8)
        # in other units the search's units are the same, and so is the law
        assert identity_rows(problem_of(X * 1e-3, law(X))[0], SearchSettings())[0].best_first()[0][0] == skeleton


def _noisy(law, level=0.01, seed=0, n=500, low=1.0, high=5.0):
    """``law`` on ``n`` points of [low, high]^3 with Gaussian noise of ``level`` times its
    standard deviation, the noise-free targets and the noise's standard deviation."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(low, high, (n, 3))
    clean = law(X)
    sd = level * np.std(clean)
    return Problem(X, clean + rng.normal(0.0, sd, n)), clean, sd


@pytest.mark.parametrize(
    "law, most_constants",
    [
        (lambda X: X[:, 0] * X[:, 1] / (X[:, 2] + 1), 2),
        (lambda X: (X[:, 0] + X[:, 1]) / (X[:, 0] * X[:, 2]), 2),
        (lambda X: 3 * X[:, 0] * X[:, 1] / X[:, 2], 1),
    ],
)
def test_under_noise_the_rational_law_comes_back_with_its_terms_only(law, most_constants):
    problem, clean, sd = _noisy(law)
    found = noisy_identity(problem)
    assert found.skeleton.n_constants <= most_constants  # the terms the law has, no more
    with np.errstate(all="ignore"):
        predicted = found.skeleton.program(problem.X, found.constants)
    assert np.mean((predicted - clean) ** 2) < 0.02 * sd**2  # far closer to the law than the noise
    assert np.isclose(found.loss, np.mean((predicted - problem.y) ** 2))


@pytest.mark.parametrize(
    "law",
    [
        lambda X: X[:, 0] * np.sqrt(X[:, 1] ** 2 + X[:, 2] ** 2),
        lambda X: 2.5 * np.sqrt((X[:, 0] + X[:, 1]) / X[:, 2]),
    ],
)
def test_under_noise_the_root_of_a_rational_law_comes_back_and_not_without_its_form(law):
    problem, clean, sd = _noisy(law)
    found = noisy_identity(problem)
    assert "sqrt" in found.skeleton.tokens
    with np.errstate(all="ignore"):
        predicted = found.skeleton.program(problem.X, found.constants)
    assert np.mean((predicted - clean) ** 2) < 0.02 * sd**2
    rational = noisy_identity(problem, settings=SearchSettings(noisy_identity_forms=("rational",)))
    # without roots, a longer rational approximation that fits worse
    assert "sqrt" not in rational.skeleton.tokens and rational.loss > found.loss
    assert rational.skeleton.n_constants > found.skeleton.n_constants


def test_under_noise_a_law_over_its_power_law_monomial_comes_back_times_it():
    """``x0**2*x1**2*x2/(x3 + x4)``: of degree 5 in five variables, beyond the rational
    systems' unknowns; over the monomial that ``log|y|`` is mostly linear in
    (``x0**2*x1**2*x2`` on the largest values), ``1/(x3 + x4)`` is a small rational law."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, (500, 5))
    clean = X[:, 0] ** 2 * X[:, 1] ** 2 * X[:, 2] / (X[:, 3] + X[:, 4])
    sd = 0.01 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    found = noisy_identity(problem)
    with np.errstate(all="ignore"):
        predicted = found.skeleton.program(problem.X, found.constants)
    assert np.mean((predicted - clean) ** 2) < 0.02 * sd**2
    assert found.skeleton.tokens[:5] == ("mul", "mul", "pow", "x_1", "2")  # the monomial's factor leads
    assert found.skeleton.n_constants <= 2
    assert (
        noisy_identity(problem, settings=SearchSettings(noisy_identity_forms=("rational", "root"))).loss > 10 * sd**2
    )  # not without it


def test_the_forms_of_the_law_under_noise_are_named():
    with pytest.raises(ValueError, match="noisy_identity_forms must be a tuple of"):
        SearchSettings(noisy_identity_forms=("rational", "log"))
    with pytest.raises(ValueError, match="noisy_identity_forms must be a tuple of"):
        SearchSettings(noisy_identity_forms="rational")


def test_the_law_under_noise_is_a_row_only_where_its_misfit_is_the_noise_s():
    problem, _, sd = _noisy(lambda X: X[:, 0] * X[:, 1] / (X[:, 2] + 1))
    assert len(identity_rows(problem, SearchSettings())[0]) == 0  # the plan's identities: exact ones only
    found = noisy_identity_rows(problem, sd, SearchSettings(noisy_identity_unknowns=()), None)
    assert len(found) == 1 and found.origins == ["identity"]
    assert len(noisy_identity_rows(problem, sd / 3, SearchSettings(), None)) == 0  # above the noise given
    n_constants = found.skeletons[0].n_constants
    capped = SearchSettings(  # more constants than the caps
        noisy_identity_max_constants=n_constants - 1, noisy_identity_readings_constants=n_constants - 1
    )
    assert len(noisy_identity_rows(problem, sd, capped, None)) == 0
    # a law that no rational function of low degree follows to the noise
    wavy, _, sd = _noisy(lambda X: np.sin(3 * X[:, 0]) * np.exp(X[:, 1]) + X[:, 2], level=0.001)
    assert len(noisy_identity_rows(wavy, sd, SearchSettings(), None)) == 0


def test_a_noisy_fit_runs_the_law_under_noise_in_the_plan_before_operon_where_the_time_holds_it(
    tiny_model, manual_clock
):
    problem, clean, sd = _noisy(lambda X: X[:, 0] * X[:, 1] / (X[:, 2] + 1))
    quick = OperonSettings(population_size=50, generations=2, max_chunk_generations=2, max_length=20)
    reg = NeSymReSRegressor(model=tiny_model, random_state=0, beam_size=4, operon_settings=quick)
    units = list(reg.fit(problem.X, problem.y).plan_["unit"])
    assert units.index("identity under noise") < min(i for i, unit in enumerate(units) if unit.startswith("operon"))
    assert "identity" in set(reg.equations_["origin"])
    off = NeSymReSRegressor(
        model=tiny_model,
        random_state=0,
        beam_size=4,
        operon_settings=quick,
        search_settings=SearchSettings(noisy_identity_level=None),
    )
    assert "identity under noise" not in set(off.fit(problem.X, problem.y).plan_["unit"])
    loud, _, _ = _noisy(lambda X: X[:, 0] * X[:, 1] / (X[:, 2] + 1), level=0.5)  # beyond noisy_identity_max_level
    assert "identity under noise" not in set(reg.fit(loud.X, loud.y).plan_["unit"])
    # a budget whose time before the refinement's end cannot hold it skips it
    slow = SearchSettings(noisy_identity_seconds=1e6)
    timed = NeSymReSRegressor(model=tiny_model, random_state=0, beam_size=4, max_time=60.0, search_settings=slow)
    plan = timed.fit(problem.X, problem.y).plan_.set_index("unit")
    assert plan.loc["identity under noise", "status"] == "skipped: no time"


def test_the_plan_s_law_under_noise_reads_the_identities_to_the_noise_unless_their_sizes_are_empty(
    tiny_model, monkeypatch
):
    from nesymres_sklearn import pipeline

    problem, _, _ = _noisy(lambda X: X[:, 0] * X[:, 1] / (X[:, 2] + 1), level=0.001)
    calls = []
    search = pipeline.identities_to_the_noise
    monkeypatch.setattr(pipeline, "identities_to_the_noise", lambda *args: calls.append(args) or search(*args))
    quick = OperonSettings(population_size=50, generations=2, max_chunk_generations=2, max_length=20)
    reg = NeSymReSRegressor(model=tiny_model, random_state=0, beam_size=4, operon_settings=quick)
    reg.fit(problem.X, problem.y)
    assert len(calls) == 1 and calls[0][-1] == (16, 64, None)  # the settings' sizes, then the largest
    assert "identity" in set(reg.equations_["origin"])
    off = reg.set_params(search_settings=SearchSettings(noisy_identity_unknowns=()))
    assert "identity under noise" in set(off.fit(problem.X, problem.y).plan_["unit"])
    assert len(calls) == 1  # (): not at all


def test_an_odd_power_in_the_denominator_of_a_root_stays_inside_it():
    """``sqrt(x0*x1/x2)``, as the law is written, not ``sqrt(x0*x1*x2)/x2``: equal on
    positive data, but not where x2 < 0 and x0*x1 < 0 (a units fit lost AI-Feynman's
    I.47.23 out of its support to that form)."""
    X = np.random.default_rng(0).uniform(1, 5, (128, 3))
    found = exact_identity(Problem(X, np.sqrt(X[:, 0] * X[:, 1] / X[:, 2]))).fitted
    assert found.skeleton.tokens[:3] == ("mul", "c", "sqrt")  # one root, nothing outside it
    below = np.array([[-2.0, 3.0, -1.5]])  # x0*x1/x2 > 0: the law is defined there
    value = found.skeleton.program(below, found.constants)
    assert np.allclose(value, np.sqrt(-2.0 * 3.0 / -1.5))


def test_under_noise_the_polish_fits_a_rational_law_of_nearly_collinear_monomials_to_the_noise():
    """``x0 - x0/x1 + 1`` on features far from 0: the null vector fits the noise in
    ``y*Q`` with the law's terms far off; Gauss-Newton steps on the law's own error
    bring the fit to the noise, and close to the law."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(6, 10, 500), rng.uniform(2.5, 10, 500)])
    clean = X[:, 0] - X[:, 0] / X[:, 1] + 1
    sd = 0.01 * np.sqrt(np.mean(clean**2))
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    unpolished, polished = (
        noisy_identity(
            problem, settings=SearchSettings(noisy_identity_forms=("rational",), noisy_identity_polish=steps)
        )
        for steps in (0, 5)
    )
    assert unpolished.loss > 1.3**2 * sd**2 and polished.loss < 1.1**2 * sd**2
    predicted = polished.skeleton.program(X, polished.constants)
    assert np.mean((predicted - clean) ** 2) < 0.2 * sd**2
    with pytest.raises(ValueError, match="noisy_identity_polish must be an integer of at least 0"):
        SearchSettings(noisy_identity_polish=-1)


def test_under_noise_an_angle_law_comes_back_with_its_cosine_and_not_without_the_angle_form():
    """``x0*cos(x2)/x1`` under 1% noise, ``x2`` over a period: rational in ``x0``, ``x1``
    and ``cos(x2)``, and in no low degree of ``x2`` itself."""
    problem, clean, sd = _noisy(lambda X: X[:, 0] * np.cos(X[:, 2]) / X[:, 1], low=0.5, high=6.0)
    found = noisy_angle_law(problem)
    assert "cos" in found.skeleton.tokens and found.skeleton.n_constants <= 1
    predicted = found.skeleton.program(problem.X, found.constants)
    assert np.mean((predicted - clean) ** 2) < 0.02 * sd**2
    assert noisy_identity(problem).loss > 1.5**2 * sd**2  # no rational function of low degree follows it
    # as a source of the continuation: one turn's row where its misfit is the noise's
    source = AngleLawUnderNoise(problem, 1.5 * sd)
    first = source.propose(CandidateRows(), 0, None)
    assert len(first) == 1 and first.origins == ["identity"]
    assert len(source.propose(first, 1, None)) == 0
    assert len(AngleLawUnderNoise(problem, 0.5 * sd).propose(CandidateRows(), 0, None)) == 0

    def clock():
        return 0.0  # a stopped clock: the time left is the deadline's

    assert source.holds(Deadline(1.0, clock), 0) and not source.holds(Deadline(0.01, clock), 0)
    assert not source.holds(None, 1)  # its first turn is all it has
    slow = AngleLawUnderNoise(problem, 1.5 * sd, seconds=2.0)  # the plan's law under noise took 2 s
    assert not slow.holds(Deadline(1.0, clock), 0) and slow.holds(Deadline(3.0, clock), 0)
    beyond = _noisy(lambda X: X[:, 0] * X[:, 1], low=1e3, high=2e3)[0]  # beyond identity_wide_turns
    assert noisy_angle_law(beyond) is None


def test_under_noise_a_law_of_two_angles_difference_comes_back_by_its_cosine():
    """The conic section ``x0*(1 - x1**2)/(1 + x1*cos(x2 - x3))`` under 1% noise: too many
    monomials of both angles' cosines and sines for the law under noise, few of their
    difference's."""
    from nesymres_sklearn.search.identities import turned_columns

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0.5, 9, 500), rng.uniform(0.05, 0.9, 500), rng.uniform(0, 2 * np.pi, (500, 2))])
    clean = X[:, 0] * (1 - X[:, 1] ** 2) / (1 + X[:, 1] * np.cos(X[:, 2] - X[:, 3]))
    sd = 0.01 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, 500))
    found = noisy_angle_law(problem)
    assert ("cos", "add", "x_3", "mul", "-1", "x_4") in zip(*(found.skeleton.tokens[k:] for k in range(6)))
    assert found.loss < 1.3 * sd**2  # its misfit is the noise's
    predicted = found.skeleton.program(problem.X, found.constants)
    assert np.mean((predicted - clean) ** 2) < 0.3 * sd**2
    # the angles by their own cosines and sines leave a hundred times the noise
    turned, sines, _ = turned_columns(problem, {2: 1.0, 3: 1.0}, True)
    assert noisy_identity(turned, None, SearchSettings(), sines).loss > 50 * sd**2


def test_under_noise_the_power_law_monomial_of_a_target_over_decades_is_read_on_its_largest_values():
    """``x0**2*x1**3*x2/(x3 + 1)`` over [1, 20]^4 (log-uniform, ``y`` over three decades
    and more) with noise of 0.001 of ``y``'s spread: the noise swamps the logs of the
    small values, so the monomial's fit on every point explains too little; on the half
    of the largest ``|y|`` it is ``x0**2*x1**3*x2/x3``, and the law comes back."""
    rng = np.random.default_rng(0)
    X = np.exp(rng.uniform(0, np.log(20), (500, 4)))
    clean = X[:, 0] ** 2 * X[:, 1] ** 3 * X[:, 2] / (X[:, 3] + 1)
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    found = noisy_identity(problem)
    assert found.loss < 1.1**2 * sd**2 and found.skeleton.n_constants <= 2
    # the power law of log|y| on every point is not that monomial
    assert power_law_monomial(problem.X, problem.y) != [2, 3, 1, -1]


def test_the_least_squares_monomial_of_a_target_over_four_decades_is_read_where_the_logs_are_buried():
    """``x0*x1**4/x2**2`` over [1, 30]^3 with noise of 0.001 of ``y``'s spread: the
    largest value is 46,000 times the median, so the noise buries the logarithms
    of most points (no power law of ``log|y|`` on any share of them); least squares on
    ``y`` reads the monomial, and the law comes back times it."""
    rng = np.random.default_rng(0)
    X = np.exp(rng.uniform(0, np.log(30), (400, 3)))
    clean = 3e-5 * X[:, 0] * X[:, 1] ** 4 / X[:, 2] ** 2
    sd = 0.001 * np.std(clean)
    y = clean + rng.normal(0.0, sd, len(clean))
    assert least_squares_monomial(X, y) == [1, 4, -2]
    loud = np.abs(y) >= np.quantile(np.abs(y), 0.5)
    assert power_law_monomial(X[loud], y[loud]) is None
    found = noisy_identity(Problem(X, y))
    assert found.loss < 1.1**2 * sd**2 and found.skeleton.n_constants == 1


def test_the_least_squares_monomial_reads_signs_zeros_and_weights_and_nothing_from_a_sine():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (200, 3))
    X[0, 1] = 0.0  # x1 only to the power 0 or above there
    y = 2 * X[:, 0] ** 3 / X[:, 2] + rng.normal(0, 0.01, 200)
    assert least_squares_monomial(X, y) == [3, 0, -1]
    assert least_squares_monomial(X, np.sin(3 * X[:, 0])) is None
    wrong = y.copy()
    wrong[:20] = 1e4  # points that no monomial holds: weighted out, they do not count
    weights = np.ones(200)
    weights[:20] = 0.0
    assert least_squares_monomial(X, wrong) is None
    assert least_squares_monomial(X, wrong, weights=weights) == [3, 0, -1]
    assert least_squares_monomial(np.ones((10, 0)), np.ones(10)) is None


def _to_the_noise(problem: Problem, sd: float, most_unknowns: int | None = None):
    """The law of :func:`identity_rows` with identities that hold to the noise ``sd``, or ``None``."""
    tolerance = noise_tolerance(problem, sd, SearchSettings(), most_unknowns)
    rows, ends = identity_rows(problem, SearchSettings(), tolerance=tolerance)
    assert not ends  # under noise no identity ends the search
    return (rows.skeletons[0], rows.constants[0]) if len(rows) else None


@pytest.mark.parametrize(
    "law, high, unknowns, expected",
    [
        (lambda X: np.sin(X[:, 0]) / np.sin(X[:, 1]), 1.5, 16, "sin(x_1)/sin(x_2)"),  # angles, by their sines
        # positive columns by their roots beside an angle (the others beyond a turn)
        (lambda X: X[:, 0] + X[:, 1] + 2 * np.sqrt(X[:, 0] * X[:, 1]) * np.cos(X[:, 2]), (12, 12, 1.5), 64, None),
        (lambda X: X[:, 0] * np.sqrt(X[:, 1] ** 2 + X[:, 2] ** 2), 1.5, 16, "x_1*sqrt(x_2**2 + x_3**2)"),
    ],
)
def test_an_identity_holds_to_the_noise_where_none_is_exact(law, high, unknowns, expected):
    rng = np.random.default_rng(3)
    X = rng.uniform(0.2, np.broadcast_to(high, (3,)), (600, 3))
    clean = law(X)
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    assert len(identity_rows(problem, SearchSettings())[0]) == 0  # exact to rounding: none
    skeleton, constants = _to_the_noise(problem, sd, unknowns)
    with np.errstate(all="ignore"):
        predicted = skeleton.program(X, constants)
    assert np.sqrt(np.mean((predicted - clean) ** 2)) < 0.3 * sd  # the law, not the noise
    assert skeleton.n_constants <= 3
    if expected is not None:  # its form, every constant 1
        ones = {symbol: 1 for symbol in skeleton.sympy.free_symbols if symbol.name.startswith("c")}
        assert str(sympy.simplify(skeleton.sympy.subs(ones))) == expected


def test_a_large_system_under_noise_is_searched_only_where_its_unknowns_are_allowed():
    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, (800, 4))
    X[:, 0] = np.abs(X[:, 0]) + 0.1
    clean = X[:, 0] * X[:, 3] ** 2 * (X[:, 1] ** 2 + X[:, 2] ** 2) / 4  # degree 5 in 4 features: 126 monomials
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    assert _to_the_noise(problem, sd, 64) is None
    skeleton, constants = _to_the_noise(problem, sd)
    with np.errstate(all="ignore"):
        assert np.sqrt(np.mean((skeleton.program(X, constants) - clean) ** 2)) < 0.3 * sd
    assert skeleton.n_constants <= 3
    # as a source of the continuation: its first turn, the law; later turns, nothing
    plan = SearchSettings(noisy_identity_forms=())  # the plan's sizes alone, without the law of the criterion
    assert len(noisy_identity_rows(problem, sd, plan, None)) == 0
    source = IdentityUnderNoise(problem, sd)
    first = source.propose(CandidateRows(), 0, None)
    assert first.skeletons == [skeleton] and first.origins == ["identity"]
    assert len(source.propose(first, 1, None)) == 0

    def clock():
        return 0.0  # a stopped clock: the time left is the deadline's

    slow = IdentityUnderNoise(problem, sd, seconds=2.0)  # the plan's law under noise took 2 s
    assert not slow.holds(Deadline(1.0, clock), 0) and slow.holds(Deadline(3.0, clock), 0)


def test_an_approximation_to_the_noise_that_does_not_extrapolate_is_no_identity():
    rng = np.random.default_rng(5)
    X = rng.uniform(0.0, 2.0, (600, 3))
    clean = np.exp(X[:, 0]) * X[:, 1] + X[:, 2]  # within 1e-3 of rational laws of 20 monomials on [0, 2]
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    assert _to_the_noise(problem, sd, 64) is None


def test_under_noise_a_law_over_a_pole_that_the_points_approach_extrapolates():
    """``x_2*x_3/(x_1 - 1)`` with ``x_1`` from 1: the law fitted on the points where ``x_1``
    is at most its median, refitted by least squares from the null vector's constants
    (a few thousandths off the pole), converged beyond the points nearest the pole, and
    the law failed its own test of extrapolation; from the constants fitted on every
    point as well (the lower loss on those points kept), it passes."""
    found = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = np.column_stack([rng.uniform(1, 2, 300), 10 ** rng.uniform(0, 2, 300), 10 ** rng.uniform(-1, 1, 300)])
        clean = X[:, 1] * X[:, 2] / (X[:, 0] - 1)
        sd = 0.001 * np.std(clean)
        problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
        law = identities_to_the_noise(problem, sd, SearchSettings(), None, seed, (16, 64, None))
        found += len(law) == 1 and " ".join(law.skeletons[0].tokens) == "mul c mul mul x_2 x_3 div 1 add c x_1"
    assert found >= 8  # 9 of 10 here; none when the refit started from the null vector's constants alone


def test_the_sizes_of_the_systems_under_noise_are_settings():
    assert SearchSettings().noisy_identity_unknowns == (16, 64)
    for wrong in ((16, 1), [16], (16.0,)):
        with pytest.raises(ValueError, match="noisy_identity_unknowns must be a tuple of integers"):
            SearchSettings(noisy_identity_unknowns=wrong)
    problem, _, sd = _noisy(lambda X: X[:, 0] * X[:, 1] / (X[:, 2] + 1), level=0.001)
    found = identities_to_the_noise(problem, sd, SearchSettings(), None, 0, SearchSettings().noisy_identity_unknowns)
    assert len(found) == 1 and found.skeletons[0].n_constants <= 2  # the law
    assert len(identities_to_the_noise(problem, sd, SearchSettings(), None, 0, ())) == 0  # no sizes, no search


def test_under_noise_a_law_over_a_monomial_of_features_over_decades_holds_to_the_noise():
    """Features over two decades make ``y`` span six, and noise of 0.001 ``std(y)`` buries
    most points: each row of a system weighs by its point's noise, so the law over its
    monomial comes back (on rows of unit norm the noisiest points let ``c*x_2`` pass)."""
    rng = np.random.default_rng(6)
    X = 10 ** rng.uniform(-1, 1, (512, 4)) * np.where(rng.random((512, 4)) < 0.5, -1.0, 1.0)
    X[:, 0] = np.abs(X[:, 0])
    clean = X[:, 0] * X[:, 3] ** 2 * (X[:, 1] ** 2 + X[:, 2] ** 2) / 4
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    found = identities_to_the_noise(problem, sd, SearchSettings(), None, 0, (16, 64, None))
    assert len(found) == 1
    skeleton, constants = found.skeletons[0], found.constants[0]
    assert np.sqrt(np.mean((skeleton.program(X, constants) - clean) ** 2)) < 0.3 * sd
    assert skeleton.n_constants <= 2


def test_under_noise_a_larger_system_writes_the_law_of_fewer_constants_that_a_small_one_approximates():
    """``x0/(x1*sin(x2))`` to 0.003 noise: 16 unknowns hold ``c*x0/(x1*x2*(1 + c*x2**2))``
    (two constants), 64 the sine's law (one), which comes back."""
    rng = np.random.default_rng(8)
    X = np.column_stack([10 ** rng.uniform(-1, 1, (512, 2)), rng.uniform(0.01, 1.57, 512)])
    clean = X[:, 0] / (X[:, 1] * np.sin(X[:, 2]))
    sd = 0.003 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    small = identities_to_the_noise(problem, sd, SearchSettings(), None, 0, (16,))
    assert len(small) == 1 and "sin" not in small.skeletons[0].tokens and small.skeletons[0].n_constants == 2
    found = identities_to_the_noise(problem, sd, SearchSettings(), None, 0, (16, 64))
    assert len(found) == 1 and "sin" in found.skeletons[0].tokens and found.skeletons[0].n_constants == 1


def test_under_noise_a_monomial_of_an_angle_s_cosine_and_sine_over_decades_comes_back():
    """``3*x0*cos(x1)*sin(x1)/x2**3`` with ``x2`` over two decades and noise of 0.001
    ``std(y)``: the systems' first-order test passes many mixtures of null vectors, whose
    sparse terms miss the law; the monomial of ``x0``, ``x2``, ``cos(x1)`` and
    ``sin(x1)`` from a line in the logarithms leaves a constant ratio."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(-10, 10, 512), rng.uniform(0.01, 3.1, 512), 10 ** rng.uniform(-1, 1, 512)])
    clean = 3 * X[:, 0] * np.cos(X[:, 1]) * np.sin(X[:, 1]) / X[:, 2] ** 3
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    settings = SearchSettings()
    tolerance = noise_tolerance(problem, sd, settings)
    # the precondition: the systems alone miss this law
    assert angle_identity(problem, {1: 1.0}, tolerance=tolerance) is None
    found = angle_monomial_identity(problem, {1: 1.0}, settings, tolerance=tolerance)
    assert found is not None
    assert {"cos", "sin"} <= set(found.fitted.skeleton.tokens) and found.fitted.skeleton.n_constants <= 2
    assert np.sqrt(np.mean((found.fitted.skeleton.program(X, found.fitted.constants) - clean) ** 2)) < 0.3 * sd
    rows = identities_to_the_noise(problem, sd, settings, None, 0, settings.noisy_identity_unknowns)
    assert len(rows) == 1 and {"cos", "sin"} <= set(rows.skeletons[0].tokens)
    assert angle_monomial_identity(problem, {}, settings, tolerance=tolerance) is None  # no angle, no reading


def test_under_noise_a_gaussian_whose_tails_the_noise_takes_below_zero_comes_back():
    """``exp(-(x0/x1)**2/2)/x1`` under noise of 0.001 ``std(y)``: its tails lie within the
    noise of 0, where some targets are negative; the sign is read on the points the
    logarithms read (``|y|`` at least ``LOG_NOISE`` times the noise), where it is one."""
    rng = np.random.default_rng(2)  # both features over two decades, x0 of either sign
    X = np.column_stack([10 ** rng.uniform(-1, 1, 512) * rng.choice([-1.0, 1.0], 512), 10 ** rng.uniform(-1, 1, 512)])
    clean = np.exp(-((X[:, 0] / X[:, 1]) ** 2) / 2) / X[:, 1]
    sd = 0.001 * np.std(clean)
    problem = Problem(X, clean + rng.normal(0.0, sd, len(clean)))
    assert np.any(problem.y < 0) and np.any(problem.y > 0)
    found = exponential_identity(problem, tolerance=noise_tolerance(problem, sd, SearchSettings()))
    assert found is not None
    assert "exp" in found.fitted.skeleton.tokens and found.fitted.skeleton.n_constants <= 2
    assert np.sqrt(np.mean((found.fitted.skeleton.program(X, found.fitted.constants) - clean) ** 2)) < 0.3 * sd
    assert exponential_identity(problem) is None  # to rounding, a sign change is no exponential


@pytest.mark.parametrize("k,count", [(1, 1), (3, 2), (12, 1), (40, 2)])
def test_null_vectors_under_noise_are_scipys_generalized_eigenvectors(k, count):
    """The direct LAPACK call gives the eigenvectors that scipy.linalg.eigh gives for the
    largest eigenvalues of the ridged generalized problem, bit for bit."""
    import scipy.linalg

    from nesymres_sklearn.search.identity_systems import NULL_RIDGE, _largest_generalized

    rng = np.random.default_rng(k)
    A, N = rng.standard_normal((200, k)), 0.01 * rng.standard_normal((200, k))
    gram, noise = A.T @ A, N.T @ N
    ridged = gram + NULL_RIDGE * np.trace(gram) / k * np.eye(k)
    expected = scipy.linalg.eigh(noise, ridged, subset_by_index=[k - count, k - 1], check_finite=False)[1]
    found = _largest_generalized(noise, gram, count)
    assert found.shape == (k, count)
    np.testing.assert_array_equal(found, expected)


def test_null_vectors_under_noise_name_a_failed_factorisation():
    """A ridged matrix that is not positive definite raises, as scipy's eigh does."""
    from nesymres_sklearn.search.identity_systems import _largest_generalized

    with pytest.raises(np.linalg.LinAlgError, match="dsygvx"):
        _largest_generalized(np.eye(2), -np.eye(2), 1)
