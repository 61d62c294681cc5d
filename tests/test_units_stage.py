import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitted import CandidateRows, Fitted
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.views import Identity
from nesymres_sklearn.units.consistency import is_consistent
from nesymres_sklearn.units.stage import Units
from nesymres_sklearn.writing.export import feature_symbols

SYMBOLS = feature_symbols(["v", "t", "x"])


@pytest.fixture
def motion():
    """``x * sin(v*t/x)`` over v, t, x: one group, monomial ``x``."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(64, 3))
    return X, X[:, 2] * np.sin(X[:, 0] * X[:, 1] / X[:, 2])


def test_the_network_problem_is_the_groups_and_y_over_the_monomial(motion):
    X, y = motion
    units = Units.parse(["m/s", "s", "m"], "m", 3)
    dimensionless = units.dimensionless(Problem(X, y))
    group = X[:, 0] * X[:, 1] / X[:, 2]
    assert np.allclose(dimensionless.problem.X[:, 0] * dimensionless.scales[0], group)
    assert np.abs(dimensionless.problem.X).max() <= 10  # in the network's range
    assert np.allclose(dimensionless.problem.y * dimensionless.target_scale, np.sin(group))
    assert [str(s) for s in dimensionless.symbols(SYMBOLS)] == ["t*v/x"]


def test_a_candidate_over_the_groups_comes_back_over_the_features_with_its_loss(motion):
    X, y = motion
    whole = Problem(X, y)
    dimensionless = Units.parse(["m/s", "s", "m"], "m", 3).dimensionless(whole)
    # the network's variable is the group divided by its scale: sin(c * x_1) with c = scale is the law
    skeleton, constants, loss = dimensionless.back(
        Fitted(Skeleton(("sin", "mul", "c", "x_1")), np.array([dimensionless.scales[0]]), np.nan), whole
    )
    assert loss < 1e-20
    expression = skeleton.expression(constants, SYMBOLS)
    assert expression.free_symbols == set(SYMBOLS)
    units = Units.parse(["m/s", "s", "m"], "m", 3)
    assert is_consistent(skeleton.tokens, units.features, units.target, constants)


def test_without_groups_the_network_reads_the_features_and_the_monomial_candidate_is_exact():
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 5, size=(40, 2))  # spring constant, mass
    y = 2 * np.pi * np.sqrt(X[:, 1] / X[:, 0])  # period
    whole = Problem(X, y)
    units = Units.parse(["N/m", "kg"], "s", 2)
    groups = units.dimensionless(whole)
    assert isinstance(groups, Identity) and groups.forward(whole) is whole
    rows = units.rows(CandidateRows(), whole, groups)
    assert [str(s) for s in rows.skeletons] == ["mul c mul pow x_1 div -1 2 pow x_2 div 1 2"]
    assert rows.losses[0] < 1e-20 and np.isclose(rows.constants[0][0], 2 * np.pi)
    assert rows.origins == ["units"]


def _rows(*fitted):
    rows = CandidateRows()
    for tokens, constants, loss in fitted:
        rows.add(Fitted(Skeleton(tokens), np.array(constants, dtype=float), loss), log_prob=0.0, origin="beam")
    return rows


def test_inconsistent_candidates_are_set_aside(motion):
    X, y = motion
    problem = Problem(X, y)
    units = Units.parse(["m/s", "s", "m"], "m", 3)
    rows = _rows(
        (("add", "x_1", "x_2"), [], 0.0),  # v + t: the lowest loss, but inconsistent
        (("mul", "x_3", "sin", "div", "mul", "x_1", "x_2", "x_3"), [], 0.0),
    )
    kept = units.consistent(rows, problem, 0.9)
    assert [str(s) for s in kept.skeletons] == ["mul x_3 sin div mul x_1 x_2 x_3"]


def test_when_nothing_consistent_fits_every_candidate_stays_with_a_warning(motion):
    X, y = motion
    problem = Problem(X, y)
    units = Units.parse(["m/s", "s", "m"], "m", 3)
    poor = 0.2 * problem.scale  # R^2 of 0.8
    rows = _rows((("add", "x_1", "x_2"), [], 0.0), (("x_3",), [], poor))
    with pytest.warns(UserWarning, match="No dimensionally consistent candidate explains 90%"):
        kept = units.consistent(rows, problem, 0.9)
    assert len(kept) == 2


@pytest.fixture
def units_regressor(tiny_model):
    return NeSymReSRegressor(model=str(tiny_model), beam_size=4, random_state=0, refine=None)


def test_fit_with_units_reads_the_groups_and_keeps_the_features(units_regressor, motion):
    X, y = motion
    frame = pd.DataFrame(X, columns=["v", "t", "x"])
    reg = units_regressor.fit(frame, y, X_units=["m/s", "s", "m"], y_units="m")
    assert reg.X_units_ == ["m/s", "s", "m"] and reg.y_units_ == "m"
    assert reg.pi_groups_ == ["t*v/x"]
    assert reg.network_inputs_ == ["t*v/x"]
    names = {"v", "t", "x"}
    assert {s.name for s in reg.expression_.free_symbols} <= names
    units = Units.parse(["m/s", "s", "m"], "m", 3)
    for skeleton, constants, _ in reg._fitted:
        assert is_consistent(skeleton.tokens, units.features, units.target, constants)
    assert reg.predict(frame).shape == (64,)
    restored = pickle.loads(pickle.dumps(reg))
    assert np.allclose(restored.predict(frame), reg.predict(frame))


def test_fit_with_units_and_no_group_returns_the_monomial(units_regressor):
    rng = np.random.default_rng(2)
    X = rng.uniform(1, 5, size=(40, 3))  # length, gravity, mass
    y = 2 * np.pi * np.sqrt(X[:, 0] / X[:, 1])
    reg = units_regressor.fit(X, y, X_units=["m", "m/s^2", "kg"], y_units="s")
    assert reg.pi_groups_ == []  # the mass is the only one of its dimension: it cannot take part
    assert {s.name for s in reg.expression_.free_symbols} == {"x0", "x1"}
    assert np.allclose(reg.predict(X), y)


def test_units_given_by_column_name_are_read_by_name_not_by_key(units_regressor, motion):
    """A mapping used to be read through its keys: 'v', 't' and 'x' as pint's units."""
    X, y = motion
    frame = pd.DataFrame(X, columns=["v", "t", "x"])
    reg = units_regressor.fit(frame, y, X_units={"x": "m", "v": "m/s", "t": "s"}, y_units="m")
    assert reg.X_units_ == ["m/s", "s", "m"]
    assert reg.pi_groups_ == ["t*v/x"]
    with pytest.raises(ValueError, match=r"names no column \['speed'\] and gives no unit for \['v'\]"):
        units_regressor.fit(frame, y, X_units={"x": "m", "speed": "m/s", "t": "s"}, y_units="m")


@pytest.mark.parametrize("y_units, found", [("kg", "['G']"), ("K", "['k_B', 'm_e']")])
def test_a_law_whose_units_are_not_y_s_gets_a_warning_that_names_both(units_regressor, y_units, found):
    """``x0/x1`` in m and s is no mass: the constants found to close ``kg`` (``G``) are
    not in the law and cannot make up the difference; they used to be listed silently."""
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 2))
    with pytest.warns(
        UserWarning,
        match=r"y_units='[a-zA-Z]+' is \[[a-z]+\], but the selected law x0/x1 has "
        r"\[length\] \* \[time\]\^-1 in X_units=\['m', 's'\]",
    ) as caught:
        reg = units_regressor.fit(X, X[:, 0] / X[:, 1], X_units=["m", "s"], y_units=y_units)
    assert any(found in str(w.message) for w in caught)
    assert str(reg.expression_) == "x0/x1" and reg.physical_constants_ == {}


def test_a_law_whose_numbers_may_carry_constants_gets_no_units_warning():
    """A float may be a product of known constants (``-5.24e-83``: a power of G times one of c)."""
    units = Units.parse(["m", "s"], "kg", 2)
    x0, x1 = feature_symbols(["x0", "x1"])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="The units do not match")
        assert units.checked(sympy.Float(2.31e10) * x0 / x1, (x0, x1)) is units
        assert units.checked(sympy.Integer(0), (x0, x1)) is units  # a number has any units
    with pytest.warns(UserWarning, match="The units do not match"):
        units.checked(x0 / x1, (x0, x1))


def test_a_law_with_y_s_units_gets_no_units_warning(units_regressor):
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 2))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="The units do not match")
        reg = units_regressor.fit(X, X[:, 0] / X[:, 1], X_units=["m", "s"], y_units="m/s")
    assert str(reg.expression_) == "x0/x1"


def test_fit_without_units_has_none_of_them(units_regressor, motion):
    reg = units_regressor.fit(*motion)
    assert reg.X_units_ is None and reg.y_units_ is None and reg.pi_groups_ is None


def test_bad_units_raise_and_leave_the_estimator_as_it_was(units_regressor, motion):
    X, y = motion
    reg = units_regressor.fit(X, y)
    before = reg.expression_
    with pytest.raises(ValueError, match="X_units has 2 units but X has 3 features"):
        reg.fit(X, y, X_units=["m", "s"], y_units="m")
    with pytest.raises(ValueError, match="not a unit that pint reads"):
        reg.fit(X, y, X_units=["m", "m", "blorps"], y_units="s")
    assert reg.expression_ == before and reg.X_units_ is None


def test_units_that_no_constant_closes_warn_and_fit_without_units(units_regressor, motion):
    X, y = motion
    with pytest.warns(UserWarning, match="the fit goes on without units"):
        reg = units_regressor.fit(X, y, X_units=["m", "m", "m"], y_units="mol")
    assert reg.X_units_ is None and reg.pi_groups_ is None and reg.physical_constants_ == {}


def _recording(calls):
    """A stand-in for a look's candidates: records the problem, returns ``c*x_1`` fitted."""

    def look(problem, *args, **kwargs):
        calls.append(problem)
        skeleton = Skeleton(("mul", "c", "x_1"))
        constants = np.array([np.mean(problem.y) / np.mean(problem.X[:, 0])])
        return [(skeleton, constants, float(np.mean((skeleton.program(problem.X, constants) - problem.y) ** 2)))]

    return look


@pytest.mark.slow
@pytest.mark.parametrize(
    "max_time, with_units, inverted_groups, searched",
    [
        (None, True, True, True),
        (60.0, True, True, True),  # one plan: with and without a budget
        (None, False, True, False),  # the network reads features, not groups
        (None, True, False, False),
    ],
)
def test_the_groups_are_read_the_other_way_up_with_units(
    units_regressor, motion, monkeypatch, max_time, with_units, inverted_groups, searched
):
    from nesymres_sklearn.search import looks
    from nesymres_sklearn.search.settings import SearchSettings

    calls = []
    monkeypatch.setattr(looks, "inverted_candidates", _recording(calls))
    X, y = motion
    units = dict(X_units=["m/s", "s", "m"], y_units="m") if with_units else {}
    units_regressor.set_params(
        max_time=max_time, search_settings=SearchSettings(inverted_groups=inverted_groups, exhaustive=False)
    )
    reg = units_regressor.fit(X, y, **units)
    assert len(calls) == searched
    assert ("inverted" in set(reg.equations_["origin"])) == searched
    if searched:
        dimensionless = Units.parse(units["X_units"], "m", 3).dimensionless(Problem(X, y))
        np.testing.assert_allclose(calls[0].X, dimensionless.problem.X)  # the groups the network reads


@pytest.mark.slow
@pytest.mark.parametrize("with_units", [True, False])
def test_one_over_y_is_read_with_units_only_and_over_the_groups_either_way_up(
    units_regressor, motion, monkeypatch, with_units
):
    """``reciprocal="units"``: the reciprocal look over the groups, and inside the
    inverted look over their reciprocals; without units, neither."""
    from nesymres_sklearn.search import looks
    from nesymres_sklearn.search.settings import SearchSettings

    calls = []
    monkeypatch.setattr(looks, "reciprocal_candidates", _recording(calls))
    X, y = motion
    units = dict(X_units=["m/s", "s", "m"], y_units="m") if with_units else {}
    units_regressor.set_params(
        search_settings=SearchSettings(reciprocal="units", inverted_groups=True, exhaustive=False)
    )
    reg = units_regressor.fit(X, y, **units)
    assert len(calls) == (2 if with_units else 0)
    if with_units:
        groups, upside_down = calls[0].X[:, 0], calls[1].X[:, 0]
        ratio = upside_down * groups
        np.testing.assert_allclose(ratio, ratio[0])  # reciprocals, up to a power of ten
        assert {"reciprocal", "inverted"} <= set(reg.equations_["origin"])


def test_the_reciprocal_look_takes_true_false_or_units():
    from nesymres_sklearn.search.settings import SearchSettings

    assert SearchSettings(reciprocal="units").reciprocal == "units"
    with pytest.raises(ValueError, match="reciprocal must be one of"):
        SearchSettings(reciprocal="sometimes")


def test_the_groups_identity_reads_angles_by_their_sine_and_cosine(units_regressor):
    # FastSRB's B3, r = d*(1 - a**2)/(1 + a*cos(t1 - t2)): over the groups a, t1, t2 a
    # rational law of the angles' cosines and sines, found by the identity, not the network
    rng = np.random.default_rng(0)
    X = np.column_stack([10 ** rng.uniform(8, 10, 256), rng.uniform(0, 1, 256), *rng.uniform(0, 2 * np.pi, (2, 256))])

    def law(X):
        return X[:, 0] * (1 - X[:, 1] ** 2) / (1 + X[:, 1] * np.cos(X[:, 2] - X[:, 3]))

    units = Units.parse(["m", "", "", ""], "m", 4)
    problem = Problem(X, law(X))
    rows = units.dimensionless(problem).identity_rows(problem)
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    reg = units_regressor.fit(X, law(X), X_units=["m", "", "", ""], y_units="m")
    assert reg.equations_.loc[reg.best_index_, "origin"] == "identity"
    t1, t2 = sympy.symbols("x2:4", real=True)
    assert reg.expression_.has(sympy.cos(t1 - t2)) or reg.expression_.has(sympy.cos(t2 - t1))  # as written by hand
    fresh = np.column_stack([10 ** rng.uniform(5, 7, 64), rng.uniform(0, 0.9, 64), *rng.uniform(-9, 9, (2, 64))])
    np.testing.assert_allclose(reg.predict(fresh), law(fresh), rtol=1e-9)
    plain = NeSymReSRegressor(model=reg.model, beam_size=4, random_state=0, refine=None).fit(X, law(X))
    # without units too: the two angles of one turn by their difference's cosine and sine
    assert plain.equations_.loc[plain.best_index_, "origin"] == "identity"
    np.testing.assert_allclose(plain.predict(fresh), law(fresh), rtol=1e-9)


def test_a_group_over_many_turns_is_read_as_an_angle_in_radians_of_the_unscaled_features():
    # FastSRB's I.50.26, x*(cos(w*t) + a*cos(w*t)**2): w*t spans +-100 rad, a +-0.1 (no angle)
    from nesymres_sklearn.search.scaling import Scaling

    rng = np.random.default_rng(0)
    n = 256
    X = np.column_stack(
        [
            10 ** rng.uniform(-1, 1, n),
            10 ** rng.uniform(1, 3, n) * rng.choice([-1, 1], n),
            10 ** rng.uniform(-3, -1, n),
            10 ** rng.uniform(-3, -1, n) * rng.choice([-1, 1], n),
        ]
    )
    y = X[:, 0] * (np.cos(X[:, 1] * X[:, 2]) + X[:, 3] * np.cos(X[:, 1] * X[:, 2]) ** 2)
    units = Units.parse(["m", "1/s", "s", ""], "m", 4)
    scaling = Scaling.for_data(X, y)
    assert not scaling.is_identity
    problem = Problem(scaling.scale_X(X), scaling.scale_y(y))
    rows = units.dimensionless(problem).identity_rows(problem, None, scaling.x_scales)
    assert rows.origins == ["identity"] and problem.is_exact_to_rounding(rows.losses[0])
    skeleton, constants = rows.best_first()[0]
    fresh = np.column_stack([X[:64, 0], -X[:64, 1], X[:64, 2], X[:64, 3] / 2])  # other signs and amplitudes
    expected = fresh[:, 0] * (np.cos(fresh[:, 1] * fresh[:, 2]) + fresh[:, 3] * np.cos(fresh[:, 1] * fresh[:, 2]) ** 2)
    predicted = scaling.unscale_y(skeleton.program(scaling.scale_X(fresh), constants))
    np.testing.assert_allclose(predicted, expected, rtol=1e-9, atol=1e-12)
