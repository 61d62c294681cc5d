import numpy as np
import pytest
import sympy

from nesymres_sklearn.units.groups import pi_groups
from nesymres_sklearn.units.parsing import parse_units


def _groups(X_units, y_units):
    groups = pi_groups(*parse_units(X_units, y_units, len(X_units)))
    symbols = sympy.symbols([f"x{j}" for j in range(len(X_units))])
    return groups, groups.describe(symbols), groups.describe_monomial(symbols)


def test_groups_are_the_ones_a_physicist_writes():
    _, written, monomial = _groups(["m/s", "s", "m"], "m")  # v, t, x
    assert written == ["x0*x1/x2"]  # v*t/x, not its square or inverse cube
    assert monomial == "x2"


def test_every_feature_takes_part_through_an_odd_power_where_a_basis_allows_it():
    # Y*A*x/d (Young's modulus, area, length, extension): A, d, x span only length and
    # area. Groups d**2/A and x**2/A (the same sum of exponents) would make the law
    # even in x and d: x/d could only be written sqrt(x**2/A)/sqrt(d**2/A) = Abs(x)/Abs(d).
    groups, written, monomial = _groups(["kg/(m*s^2)", "m^2", "m", "m"], "kg*m/s^2")
    assert written == ["x1/x2**2", "x3/x2"]
    assert monomial == "x0*x2**2"
    exponents = np.vstack([groups.exponents, [float(b) for b in groups.monomial]])
    assert all(np.any(np.mod(exponents[:, j], 2) == 1) for j in range(1, 4))


def test_same_dimensions_give_ratios_and_dimensionless_features_stay_themselves():
    groups, written, monomial = _groups(["", "m", "m"], "")
    assert sorted(written) == ["x0", "x2/x1"]
    assert monomial == "1"
    assert groups.n_groups == 2


def test_independent_dimensions_give_no_group_and_a_half_power_monomial():
    groups, written, monomial = _groups(["N/m", "kg"], "1/s")  # spring constant, mass -> frequency
    assert groups.n_groups == 0 and written == []
    assert monomial == "sqrt(x0)/sqrt(x1)"


@pytest.mark.parametrize(
    "X_units, y_units",
    [
        (["kg", "kg", "m^3/(kg*s^2)", "m", "m", "m", "m", "m", "m"], "N"),  # I.9.18
        (["kg", "m/s", "m/s"], "J"),
        (["C", "F/m", "m", "m/s", "m/s"], "V"),
        (["", "J/K", "K", "m^3", "m^3"], "J"),
    ],
)
def test_groups_are_dimensionless_integer_and_independent_and_the_monomial_has_y_units(X_units, y_units):
    features, target = parse_units(X_units, y_units, len(X_units))
    groups = pi_groups(features, target)
    bases = sorted({b for f in (*features, target) for b in f})
    D = np.array([[float(f.get(b, 0)) for f in features] for b in bases])
    d = np.array([float(target.get(b, 0)) for b in bases])
    assert groups.n_groups == len(X_units) - np.linalg.matrix_rank(D)
    assert groups.exponents.dtype.kind == "i"
    assert np.allclose(D @ groups.exponents.T, 0)
    if groups.n_groups:
        assert np.linalg.matrix_rank(groups.exponents) == groups.n_groups
    assert np.allclose(D @ np.array([float(b) for b in groups.monomial]), d)


def test_groups_and_monomial_evaluate_on_data():
    groups, _, _ = _groups(["m/s", "s", "m"], "m")
    X = np.array([[2.0, 3.0, 4.0], [1.0, -2.0, 5.0]])
    assert np.allclose(groups.groups(X)[:, 0], X[:, 0] * X[:, 1] / X[:, 2])
    assert np.allclose(groups.monomial_values(X), X[:, 2])


def test_no_monomial_with_y_units_is_an_error_that_says_what_to_add():
    with pytest.raises(ValueError, match=r"No product of powers of the features has the units of y.*as a column of X"):
        _groups(["kg", "kg", "m"], "N")  # Newton's law without G
    with pytest.raises(ValueError, match="No product of powers"):
        _groups(["", ""], "m")
