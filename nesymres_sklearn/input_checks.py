"""Checks of ``fit``'s input that come before scikit-learn's, each with an error that
names the problem and the fix."""

from __future__ import annotations

from numbers import Real

import numpy as np


def check_target(y) -> None:
    """A clear error for targets that are not numbers (before NumPy raises its own)."""
    values = np.asarray(y)
    if values.dtype.kind in "USV" or (values.dtype.kind == "O" and values.size and not _all_numbers(values)):
        example = next(v for v in values.ravel() if not _is_number(v))
        example = example.item() if isinstance(example, np.generic) else example
        raise ValueError(
            f"y must hold numbers (this is a regressor), but it holds {values.dtype} values such as {example!r}. "
            "Convert it to floats, e.g. pandas.to_numeric(y), or encode categories before fitting."
        )


def check_boolean_target(y) -> None:
    """A clear error for a boolean ``y``: a classification target, not a quantity to regress."""
    if np.asarray(y).dtype.kind == "b":
        raise ValueError(
            "y is boolean, a classification target, but NeSymReSRegressor is a regressor: it finds an equation "
            "for a numeric y. Use a classifier (e.g. sklearn.linear_model.LogisticRegression), or pass "
            "y.astype(float) to fit the 0/1 values as numbers."
        )


def check_unique_columns(X) -> None:
    """scikit-learn's kind of error for repeated column names (before narwhals raises its own)."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(columns, "duplicated"):
        return
    repeated = list(dict.fromkeys(columns[columns.duplicated()]))
    if repeated:
        raise ValueError(
            f"Feature names must be unique, but X has repeated column names: {', '.join(map(repr, repeated))}. "
            "Rename the columns, e.g. X.columns = [...]."
        )


def _is_number(value) -> bool:
    return isinstance(value, Real | np.number) and not isinstance(value, np.complexfloating)


def _all_numbers(values: np.ndarray) -> bool:
    return all(_is_number(v) or v is None for v in values.ravel())
