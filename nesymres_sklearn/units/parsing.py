"""Unit strings -> dimensions: exponents of base dimensions, parsed with pint.

A unit such as ``"kg/m^3"`` or ``"Pa*s"`` has the dimensions ``{"[mass]": 1,
"[length]": -3}`` or ``{"[mass]": 1, "[length]": -1, "[time]": -1}``; ``""`` is
dimensionless. Only the dimensions matter here, not the scale: ``"km"`` and ``"m"`` are
both a length. Exponents are kept as exact fractions (``"m^0.5"`` is a length to the
power 1/2). Units with an offset (``degC``, ``degF``) cannot be multiplied or raised to
a power, so they are refused with the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cache

#: Dimensions of one quantity: base dimension (pint's name, e.g. ``"[length]"``) ->
#: exponent; dimensionless is ``{}``.
Dimensions = dict[str, Fraction]

#: Largest denominator of an exponent read from a unit string (``m^0.5`` -> 1/2).
MAX_DENOMINATOR = 12


@cache
def unit_registry():
    """pint's application registry, imported and built once per process on first use
    (seconds: pint reads its unit definitions), so that the package stays light to
    import; a process that fits with units can call it up front."""
    import pint

    registry = pint.get_application_registry()
    registry.Quantity(1.0, "m")  # the registry reads its definitions on first use: now
    return registry


def parse_unit(text, where: str) -> Dimensions:
    """The dimensions of one unit string; ``where`` names it in errors (``"X_units[2]"``)."""
    if not isinstance(text, str):
        raise TypeError(
            f"{where} must be a unit string such as 'kg/m^3' or '' (dimensionless), got {type(text).__name__} {text!r}."
        )
    registry = unit_registry()
    try:
        one, two = registry.Quantity(1.0, text), registry.Quantity(2.0, text)
        base_one, base_two = one.to_base_units().magnitude, two.to_base_units().magnitude
    except Exception as error:  # pint's parser raises several kinds on malformed text
        raise ValueError(
            f"{where} = {text!r} is not a unit that pint reads ({_reason(error)}). Write it as pint does, e.g. "
            "'kg/m^3', 'Pa*s', '1/s', 'm**2', or '' for a dimensionless column."
        ) from None
    if abs(base_two - 2.0 * base_one) > 1e-9 * abs(base_two):
        raise ValueError(
            f"{where} = {text!r} has an offset (its zero is not the absence of the quantity), so products and "
            "powers of it mean nothing. Convert the column to an absolute unit ('K' for temperatures), or give "
            "it as a difference ('delta_degC')."
        )
    dimensionality = one.dimensionality.items()
    return {str(base): Fraction(exponent).limit_denominator(MAX_DENOMINATOR) for base, exponent in dimensionality}


def _reason(error: Exception) -> str:
    """What pint's ``error`` says, or, for its parser's bare assertion and tokenizer
    errors (``"m/"``, ``"(m"``), what is wrong with the text."""
    if type(error).__name__ in ("AssertionError", "TokenError") or not str(error):
        return (
            "it is not a complete expression: an operator such as '/', '*' or '**' lacks an operand, "
            "or a '(' is not closed"
        )
    return str(error)


def units_by_column(X_units, feature_names: Sequence[str]):
    """``X_units`` as a list in the order of the columns: a mapping is read by column
    name (``{"mass": "kg", "speed": "m/s"}`` for a DataFrame, or ``x0``, ``x1``, ... for
    an array); anything else is returned as given. Raises a ``ValueError`` that names
    the columns a mapping does not know or leaves out."""
    if not isinstance(X_units, Mapping):
        return X_units
    names = [str(name) for name in feature_names]
    unknown = [key for key in X_units if str(key) not in names]
    missing = [name for name in names if name not in {str(key) for key in X_units}]
    if unknown or missing:
        problems = [f"names no column {unknown}" if unknown else "", f"gives no unit for {missing}" if missing else ""]
        raise ValueError(
            f"X_units, a mapping from column name to unit, {' and '.join(p for p in problems if p)}; X's columns "
            f"are {names}. Give one unit per column name ('' for a dimensionless one), or a list in column order."
        )
    by_name = {str(key): unit for key, unit in X_units.items()}
    return [by_name[name] for name in names]


def parse_units(X_units, y_units, n_features: int) -> tuple[tuple[Dimensions, ...], Dimensions] | None:
    """The dimensions of every feature and of ``y``; ``None`` when neither is given.

    Raises a ``ValueError`` naming the problem for a missing half, a wrong number of
    units, an unknown unit or one with an offset.
    """
    if X_units is None and y_units is None:
        return None
    if X_units is None or y_units is None:
        given, missing = ("X_units", "y_units") if y_units is None else ("y_units", "X_units")
        raise ValueError(
            f"{given} is given but {missing} is not: dimensional analysis needs the units of every feature and of "
            f"y. Pass {missing} too ('' for dimensionless), or neither."
        )
    if isinstance(X_units, str) or not (hasattr(X_units, "__len__") and hasattr(X_units, "__iter__")):
        raise TypeError(
            f"X_units must be a list of unit strings, one per column of X, or a mapping from column name to unit, "
            f"got {type(X_units).__name__} {X_units!r}."
        )
    X_units = list(X_units)
    if len(X_units) != n_features:
        raise ValueError(
            f"X_units has {len(X_units)} units but X has {n_features} features: give one unit string per column, "
            "in the order of the columns ('' for a dimensionless one)."
        )
    features = tuple(parse_unit(unit, f"X_units[{j}]") for j, unit in enumerate(X_units))
    return features, parse_unit(y_units, "y_units")
