"""Dimensional constants in the units stage: found, declared, checked and written."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.units.consistency import is_consistent
from nesymres_sklearn.units.constants import (
    as_known_constants,
    closing_constants,
    declared_constants,
    depends,
    takes_part,
)
from nesymres_sklearn.units.parsing import parse_unit
from nesymres_sklearn.units.stage import Units
from nesymres_sklearn.writing.readable import named_constants

C = 299792458.0


def _dimensions(*units):
    return [parse_unit(unit, "test") for unit in units]


def _symbols(found):
    return [constant.symbol for constant in found]


@pytest.mark.parametrize(
    ("X_units", "y_units", "expected"),
    [
        (["kg", "m/s"], "kg", ["c"]),  # m0/sqrt(1 - v**2/c**2): v takes part only with c
        (["1/s", "K"], "", ["hbar", "k_B"]),  # 1/(exp(hbar*w/(k_B*T)) - 1)
        (["C", "m"], "V/m", ["epsilon_0"]),  # q/(4*pi*epsilon_0*r**2)
    ],
)
def test_the_fewest_known_constants_close_the_units(X_units, y_units, expected):
    found = closing_constants(_dimensions(*X_units), parse_unit(y_units, "y"), np.ones(len(X_units), bool))
    assert [_symbols(constants) for constants in found] == [expected]


def test_every_fewest_set_is_a_candidate():
    # a time from a length: x/c or sqrt(x/g)
    found = closing_constants(_dimensions("m"), parse_unit("s", "y"), np.ones(1, bool))
    assert [_symbols(constants) for constants in found] == [["c"], ["g"]]


def test_the_data_choose_between_constants_that_both_close_the_units():
    # m1*c**2/r, hbar**2/(m1*r**3) and G*m1*m2/r**2 are all forces: the data say which
    features, target = _dimensions("kg", "kg", "m"), parse_unit("N", "y")
    found = closing_constants(features, target, np.ones(3, bool))
    assert [_symbols(constants) for constants in found] == [["c"], ["hbar"], ["G"]]
    rng = np.random.default_rng(0)
    X = 10 ** rng.uniform([20, 20, 6], [25, 25, 9], size=(300, 3))
    y = 6.6743e-11 * X[:, 0] * X[:, 1] / X[:, 2] ** 2
    units = Units.parse(["kg", "kg", "m"], "N", 3, None, ["x0", "x1", "x2"], X, y)
    assert _symbols(units.constants) == ["G"]


def test_a_feature_that_y_does_not_depend_on_brings_in_no_constant():
    # the pendulum's mass takes part in no group; no constant should bring it in
    features, target = _dimensions("m", "m/s^2", "kg"), parse_unit("s", "y")
    assert list(takes_part(features, target)) == [True, True, False, True]
    assert closing_constants(features, target, np.array([False, False, False])) == [[]]
    assert closing_constants(features, target, np.array([False, False, True]))[0]  # were y to depend on the mass


def test_units_that_nothing_closes_are_reported():
    assert closing_constants(_dimensions("m", "s"), parse_unit("mol", "y"), np.ones(2, bool)) == []


def test_depends_reads_monotone_and_even_dependence_and_not_noise():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, 500)
    assert depends(np.exp(x), x)
    assert depends(1 / np.sqrt(1 - (x / 4) ** 2), x)  # even in x
    assert not depends(rng.normal(size=500), x)
    assert not depends(np.full(500, 2 * np.pi), x)


def test_declared_constants_are_known_ones_or_units_to_fit():
    c, k = declared_constants({"c": "speed_of_light", "k": "J/K"}, ["x0"])
    assert (c.symbol, c.value, c.free) == ("c", C, False)
    assert (k.symbol, k.value, k.free, k.source) == ("k", 1.0, True, "J/K")
    assert k.dimensions == parse_unit("J/K", "k")


@pytest.mark.parametrize(
    ("constants", "error", "match"),
    [
        (["c"], TypeError, "constants must be a dict"),
        ({"2c": "speed_of_light"}, ValueError, "not a name for a constant"),
        ({"x0": "speed_of_light"}, ValueError, "also a feature's name"),
        ({"k": "blorps"}, ValueError, "not a unit that pint reads"),
    ],
)
def test_bad_declared_constants_raise_with_the_fix(constants, error, match):
    with pytest.raises(error, match=match):
        declared_constants(constants, ["x0"])


def test_constants_without_units_raise():
    with pytest.raises(ValueError, match="constants are given without units"):
        Units.parse(None, None, 2, {"c": "speed_of_light"})


def test_the_units_stage_writes_groups_over_constants_and_folds_them_back():
    rng = np.random.default_rng(0)
    X = np.c_[rng.uniform(1, 5, 64), rng.uniform(-2e8, 2e8, 64)]
    y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / C**2)
    units = Units.parse(["kg", "m/s"], "kg", 2, None, ["x0", "x1"], X, y)
    assert _symbols(units.constants) == ["c"]
    assert units.groups.describe(units.symbols(sympy.symbols("x0 x1"))) == ["x1/c"]
    from nesymres_sklearn.search.problem import Problem

    dimensionless = units.dimensionless(Problem(X, y))
    group = dimensionless.problem.X[:, 0] * dimensionless.scales[0]
    np.testing.assert_allclose(group, X[:, 1] / C)
    # a candidate over the group, back over the features, holds c in its constants
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search.fitted import Fitted

    skeleton = Skeleton(("mul", "c", "x_1"))
    back, constants, _ = dimensionless.back(Fitted(skeleton, np.array([2.0]), np.nan), Problem(X, y))
    np.testing.assert_allclose(back.program(X, constants), dimensionless.factor * 2.0 * dimensionless.problem.X[:, 0])
    assert "x_2" in back.tokens and "x_3" not in back.tokens  # over the two features only


def test_a_feature_y_does_not_depend_on_keeps_the_stage_as_it_was():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(40, 3))  # length, gravity, mass
    y = 2 * np.pi * np.sqrt(X[:, 0] / X[:, 1])
    units = Units.parse(["m", "m/s^2", "kg"], "s", 3, None, ["x0", "x1", "x2"], X, y)
    assert units.constants == () and units.groups.n_groups == 0


def test_free_constants_carry_the_units_their_place_needs():
    dimensions = np.array([[1.0, -1.0]])  # x_1 in m/s over (m, s)
    target = np.zeros(2)
    tokens = ("add", "1", "mul", "c", "pow", "x_1", "2")  # 1 + c*x**2
    assert not is_consistent(tokens, dimensions, target, [1.0])
    assert is_consistent(tokens, dimensions, target, [1.0], free_constants=True)
    # a function of a dimensional argument without a constant stays inconsistent
    assert not is_consistent(("sin", "x_1"), dimensions, target, [], free_constants=True)
    # a sum of terms of different dimensions without constants too
    assert not is_consistent(("add", "x_1", "mul", "x_1", "x_1"), dimensions, np.array([1.0, -1.0]), [], True)


def test_numbers_that_are_constants_are_written_with_them():
    c, hbar, k = sympy.symbols("c hbar k_B", positive=True)
    x = sympy.Symbol("x")
    known = {c: C, hbar: 1.0545718176461565e-34, k: 1.380649e-23}
    written = named_constants(1 - sympy.Float(-1 / C**2) * -(x**2), known)
    assert written == 1 - x**2 / c**2
    assert named_constants(sympy.Float(0.5 * 1.0545718176461565e-34 / 1.380649e-23) * x, known) == hbar * x / (2 * k)
    assert named_constants(sympy.Float(2.5) * x, known) == sympy.Float(2.5) * x  # no constant in it
    assert named_constants(sympy.Float(1.2345678e-17) * x, known) == sympy.Float(1.2345678e-17) * x


@pytest.mark.slow
@pytest.mark.parametrize("constants", [None, {"c": "speed_of_light"}])
def test_a_law_with_c_is_written_with_c_and_predicts_as_written(constants):
    rng = np.random.default_rng(1)
    X = np.c_[rng.uniform(1, 5, 100), rng.uniform(-2.5e8, 2.5e8, 100)]
    y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / C**2)
    reg = NeSymReSRegressor(beam_size=8, random_state=0)
    reg.fit(X, y, X_units=["kg", "m/s"], y_units="kg", constants=constants)
    c = sympy.Symbol("c", positive=True)
    assert c in reg.expression_.free_symbols
    assert reg.physical_constants_ == {"c": {"value": C, "source": "speed_of_light"}}
    assert reg.pi_groups_ == ["x1/c"]
    fresh = np.c_[rng.uniform(-10, 10, 50), rng.uniform(-2.9e8, 2.9e8, 50)]  # outside the training box
    truth = fresh[:, 0] / np.sqrt(1 - fresh[:, 1] ** 2 / C**2)
    np.testing.assert_allclose(reg.predict(fresh), truth, rtol=1e-9)
    np.testing.assert_allclose(reg.to_callable("numpy")(fresh), truth, rtol=1e-9)


@pytest.mark.slow
def test_a_constant_declared_by_its_units_is_fitted():
    rng = np.random.default_rng(1)
    X = np.c_[rng.uniform(1, 5, 100), rng.uniform(-2.5e8, 2.5e8, 100)]
    y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / C**2)
    reg = NeSymReSRegressor(beam_size=8, random_state=0)
    reg.fit(X, y, X_units=["kg", "m/s"], y_units="kg", constants={"k": "m/s"})
    assert reg.physical_constants_ == {"k": {"value": None, "source": "m/s"}}
    assert reg.pi_groups_ == ["x1/k"]
    assert reg.score(X, y) > 1 - 1e-9


def test_a_constant_joins_the_groups_where_what_they_leave_follows_it():
    # rho*v/sqrt(1 - v**2/c**2): rho*v closes the units alone, but y/(rho*v) follows v/c
    rng = np.random.default_rng(0)
    X = np.c_[10 ** rng.uniform(-1, 1, 512), 10 ** rng.uniform(6, 8, 512) * rng.choice([-1.0, 1.0], 512)]
    current = X[:, 0] * X[:, 1] / np.sqrt(1 - X[:, 1] ** 2 / C**2)
    units = Units.parse(["C/m^3", "m/s"], "C/m^2/s", 2, None, ["x0", "x1"], X, current)
    assert _symbols(units.constants) == ["c"]
    classical = Units.parse(["C/m^3", "m/s"], "C/m^2/s", 2, None, ["x0", "x1"], X, X[:, 0] * X[:, 1])
    assert classical.constants == ()


def test_no_constant_joins_where_its_groups_only_recombine_the_features_own():
    # x*cos(w*t)*(1 + a*cos(w*t)) (FastSRB's I.50.26): cos(w*t) over many periods is more than
    # neighbours in log|w*t| follow, and (x*w/c)*(c*t/x) is w*t again, so c must not join
    rng = np.random.default_rng(0)
    X = np.c_[
        10 ** rng.uniform(-1, 1, 512),
        10 ** rng.uniform(1, 3, 512) * rng.choice([-1.0, 1.0], 512),
        10 ** rng.uniform(-3, -1, 512),
        10 ** rng.uniform(-3, -1, 512) * rng.choice([-1.0, 1.0], 512),
    ]
    wave = np.cos(X[:, 1] * X[:, 2])
    y = X[:, 0] * wave * (1 + X[:, 3] * wave)
    units = Units.parse(["m", "1/s", "s", ""], "m", 4, None, ["x0", "x1", "x2", "x3"], X, y)
    assert units.constants == ()
    assert units.groups.n_groups == 2


def test_numbers_of_an_exact_law_that_are_known_constants_carry_their_units():
    # (u + v)/(1 + u*v/c**2): the features close y's units alone, the law still holds c
    units = Units.parse(["m/s", "m/s"], "m/s", 2)
    assert units.constants == ()
    u, v = sympy.symbols("u v", positive=True)
    relativistic = (u + v) / (1 + sympy.Float(1 / C**2) * u * v)
    assert units.carries_known_constants(relativistic, [u, v])
    written, known = as_known_constants(relativistic, units.bases)
    assert [symbol.name for symbol in known] == ["c"] and written.has(*known)
    # a number that is no known constant's power, or a sum that the constant does not fix
    assert not units.carries_known_constants((u + v) / (1 + sympy.Float(1.3e-17) * u * v), [u, v])
    assert not units.carries_known_constants(u + sympy.Float(1 / C**2) * v, [u, v])


def test_an_exact_law_with_a_known_constant_is_selected_with_units_where_the_features_close_them():
    rng = np.random.default_rng(0)
    X = rng.uniform(1e7, 3e8, (200, 2)) * rng.choice([-1.0, 1.0], (200, 2))
    y = (X[:, 0] + X[:, 1]) / (1 + X[:, 0] * X[:, 1] / C**2)
    reg = NeSymReSRegressor(random_state=0, refine=None).fit(X, y, X_units=["m/s", "m/s"], y_units="m/s")
    assert reg.equations_.loc[0, "origin"] == "identity"
    assert np.allclose(reg.predict(X * 0.5), ((X[:, 0] + X[:, 1]) / 2) / (1 + X[:, 0] * X[:, 1] / (4 * C**2)))


def test_the_settings_thresholds_of_dependence_decide_it():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, 500)
    assert depends(rng.normal(size=500), x, minimum=0.0, sigmas=0.0)  # any correlation counts
    assert not depends(np.exp(x), x, minimum=1.01, sigmas=0.0)  # no correlation is that strong
