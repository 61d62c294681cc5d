from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from nesymres_sklearn.units.parsing import parse_unit, parse_units, units_by_column


@pytest.mark.parametrize(
    "text, dimensions",
    [
        ("kg/m^3", {"[mass]": 1, "[length]": -3}),
        ("Pa*s", {"[mass]": 1, "[length]": -1, "[time]": -1}),
        ("1/s", {"[time]": -1}),
        ("km", {"[length]": 1}),
        ("m**0.5", {"[length]": Fraction(1, 2)}),
        ("", {}),
        ("delta_degC", {"[temperature]": 1}),
    ],
)
def test_unit_strings_give_their_dimensions(text, dimensions):
    assert parse_unit(text, "X_units[0]") == {base: Fraction(b) for base, b in dimensions.items()}


def test_units_of_every_column_and_of_y_in_order():
    features, target = parse_units(np.array(["m", "s"]), "m/s", 2)
    assert features == ({"[length]": 1}, {"[time]": 1})
    assert target == {"[length]": 1, "[time]": -1}
    assert parse_units(pd.Series(["m"]), "", 1)[0] == ({"[length]": 1},)


def test_no_units_is_none():
    assert parse_units(None, None, 3) is None


@pytest.mark.parametrize(
    "X_units, y_units, error, message",
    [
        (["foo"], "", ValueError, r"X_units\[0\] = 'foo' is not a unit that pint reads"),
        (["m/"], "", ValueError, r"X_units\[0\] = 'm/' is not a unit .*an operator such as '/'.*lacks an operand"),
        (["(m"], "", ValueError, r"X_units\[0\] = '\(m' is not a unit .*a '\(' is not closed"),
        (["m"], "furlongs_per_qux", ValueError, r"y_units = .furlongs_per_qux. is not a unit"),
        (["degC"], "K", ValueError, r"X_units\[0\] = 'degC' has an offset.*'K'"),
        (["m", "s"], "", ValueError, "X_units has 2 units but X has 1 features"),
        (["m"], None, ValueError, "X_units is given but y_units is not"),
        (None, "m", ValueError, "y_units is given but X_units is not"),
        ("m", "m", TypeError, "X_units must be a list of unit strings"),
        ([3], "m", TypeError, r"X_units\[0\] must be a unit string"),
    ],
)
def test_bad_units_get_an_error_that_names_the_problem(X_units, y_units, error, message):
    with pytest.raises(error, match=message):
        parse_units(X_units, y_units, 1)


def test_units_given_as_a_mapping_are_matched_by_column_name():
    assert units_by_column({"b": "", "a": "m"}, ["a", "b"]) == ["m", ""]
    assert units_by_column({"x1": "s", "x0": "m"}, ["x0", "x1"]) == ["m", "s"]
    assert units_by_column(["m", "s"], ["a", "b"]) == ["m", "s"]  # a list keeps its order


@pytest.mark.parametrize(
    "X_units, message",
    [
        ({"a": "m", "c": ""}, r"names no column \['c'\] and gives no unit for \['b'\]; X's columns are \['a', 'b'\]"),
        ({"a": "m"}, r"gives no unit for \['b'\]"),
    ],
)
def test_a_mapping_that_misses_or_invents_a_column_is_refused_by_name(X_units, message):
    with pytest.raises(ValueError, match=message):
        units_by_column(X_units, ["a", "b"])
