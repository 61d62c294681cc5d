"""Checks of what a user passes to the estimator: errors that name the problem and the
fix before NumPy or scikit-learn raise their own, and warnings for data that fit but
mislead (too few points for the constants, repeated columns, predictions outside the
equation's domain); and the R² of ``score`` on them without overflow (:func:`r2_score_scaled`)."""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn.utils.validation import check_array, validate_data

# Columns this correlated are the same quantity up to units and offset.
COLLINEAR = 1 - 1e-10
#: Fewer points than this (of positive weight) cannot be fitted.
MIN_POINTS = 3
# Rows named in a warning, at most.
NAMED_ROWS = 5


def _is_number(value) -> bool:
    return isinstance(value, Real | np.number) and not isinstance(value, np.complexfloating)


def _non_number(values) -> object | None:
    """The first value of ``values`` that is not a number (``None`` and NaN count as
    numbers: missing values get scikit-learn's own error), or ``None``."""
    for value in np.asarray(values, dtype=object).ravel():
        if not (_is_number(value) or value is None):
            return value.item() if isinstance(value, np.generic) else value
    return None


def check_target(y) -> None:
    """A clear error for a ``y`` of text or booleans (a classification target)."""
    values = np.asarray(y)
    if values.dtype.kind == "b":
        raise ValueError(
            "y is boolean, a classification target, but NeSymReSRegressor is a regressor: it finds an equation "
            "for a numeric y. Use a classifier (e.g. sklearn.linear_model.LogisticRegression), or pass "
            "y.astype(float) to fit the 0/1 values as numbers."
        )
    if values.dtype.kind in "USVO" and values.size:
        example = _non_number(values)
        if example is not None:
            raise ValueError(
                f"y must hold numbers (this is a regressor), but it holds {values.dtype} values such as "
                f"{example!r}. Convert it to floats, e.g. pandas.to_numeric(y), or encode categories before fitting."
            )


def check_columns(X) -> None:
    """For a DataFrame ``X``: errors that name a column with a blank or repeated name,
    dates or times, or categories and text (scikit-learn would say only "could not
    convert string to float")."""
    columns = getattr(X, "columns", None)
    dtypes = getattr(X, "dtypes", None)
    if columns is None or dtypes is None:
        return
    blank = [position for position, name in enumerate(columns) if isinstance(name, str) and not name.strip()]
    if blank:
        raise ValueError(
            f"Column {blank[0]} of X has a blank name ({columns[blank[0]]!r}), which the equation could not show. "
            "Name every column (X.columns = [...]), or pass X.to_numpy() to get the names x0, x1, ..."
        )
    if hasattr(columns, "duplicated"):
        repeated = list(dict.fromkeys(columns[columns.duplicated()]))
        if repeated:
            raise ValueError(
                f"Feature names must be unique, but X has repeated column names: {', '.join(map(repr, repeated))}. "
                "Rename the columns, e.g. X.columns = [...]."
            )
    for name, dtype in zip(columns, dtypes):
        if dtype.kind in "mM":
            raise ValueError(
                f"Column {name!r} of X holds dates or times ({dtype}), not numbers. Convert it to a number of "
                f"seconds or days, e.g. (X[{name!r}] - X[{name!r}].min()).dt.total_seconds(), or drop it."
            )
        if dtype.kind in "OUSV" or str(dtype) in ("category", "string"):
            example = _non_number(X[name])
            if example is not None:
                raise ValueError(
                    f"Column {name!r} of X holds {dtype} values such as {example!r}, not numbers. Encode it "
                    "(e.g. pandas.get_dummies or sklearn.preprocessing.OneHotEncoder in a Pipeline), convert it "
                    f"with pandas.to_numeric, or drop it."
                )


def warn_repeated_columns(X: np.ndarray, names) -> None:
    """A warning naming each pair of columns of ``X`` that are equal up to a factor and
    an offset: the equation can use either, and which one is chance."""
    spread = np.ptp(X, axis=0) > 0
    if X.shape[1] < 2 or spread.sum() < 2:
        return
    varying = np.flatnonzero(spread)
    with np.errstate(all="ignore"):
        correlation = np.corrcoef(X[:, varying], rowvar=False)
    pairs = [
        f"{names[varying[i]]} and {names[varying[j]]}"
        for i in range(len(varying))
        for j in range(i + 1, len(varying))
        if abs(correlation[i, j]) >= COLLINEAR
    ]
    if pairs:
        warnings.warn(
            f"Columns of X are the same quantity up to a factor and an offset: {'; '.join(pairs)}. The equation may "
            "use either column of a pair, or both; drop one of each pair for an equation you can read.",
            UserWarning,
            stacklevel=4,
        )


def warn_constant_features(X: np.ndarray, y: np.ndarray) -> None:
    """A warning when every column of ``X`` is constant while ``y`` varies: no function
    of ``X`` tells its points apart, so the best equation is a constant, ``y``'s mean."""
    if np.all(np.ptp(X, axis=0) == 0) and np.ptp(y) > 0:
        warnings.warn(
            f"Every column of X is constant ({X.shape[1]} column{'s' * (X.shape[1] != 1)}) while y varies: no "
            "equation of X can tell the points apart, so the fit returns a constant. Check that X holds the "
            "varying quantities (a column repeated, or the rows of another file?).",
            UserWarning,
            stacklevel=4,
        )


def warn_few_points(n_points: int, n_constants: int) -> None:
    """A warning when the selected equation has at least as many constants as there
    are points: its constants pass through the points rather than fit a law."""
    if n_points <= n_constants:
        warnings.warn(
            f"The selected equation has {n_constants} constants, fitted to only {n_points} points: it passes "
            "through them rather than fitting a law, and may predict badly elsewhere. Pass more points.",
            UserWarning,
            stacklevel=5,
        )


#: The selected equation explains "almost nothing" below this R² on the training data...
LITTLE_R2 = 0.1
#: ... while each point's nearest neighbour predicts its y with more than this R².
STRUCTURE_R2 = 0.5


def neighbour_r2(X: np.ndarray, y: np.ndarray) -> float:
    """R² of each point's ``y`` predicted by its nearest neighbour's (features
    standardised): near 1 when ``y`` is a smooth function of ``X``, near -1 for noise."""
    spread = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    squares = (Z**2).sum(axis=1)
    distances = squares[:, None] + squares[None, :] - 2 * Z @ Z.T
    np.fill_diagonal(distances, np.inf)
    nearest = np.argmin(distances, axis=1)
    largest = np.max(np.abs(y))
    y = y / largest if 0 < largest < np.inf else y  # no overflow near 1e300
    total = np.var(y)
    return float(1 - np.mean((y - y[nearest]) ** 2) / total) if total > 0 else 0.0


def warn_explains_little(X: np.ndarray, y: np.ndarray, log_fvu: float, operators, max_time) -> None:
    """A warning when the selected equation (``log_fvu``: the log of the fraction of the
    variance of ``y`` it leaves unexplained) explains almost nothing of ``y`` (R² below
    ``LITTLE_R2``) while the data have structure (:func:`neighbour_r2` above
    ``STRUCTURE_R2``), with the likely reasons: the ``operators`` allowed, a short ``max_time``."""
    r2 = 1 - float(np.exp(log_fvu))
    if r2 >= LITTLE_R2 or len(y) < MIN_POINTS + 1:
        return
    structure = neighbour_r2(X, y)
    if not structure > STRUCTURE_R2:
        return
    reasons = []
    if operators is not None:
        reasons.append(f"the operators allowed ({', '.join(sorted(operators))}) may not write the law: allow more")
    if max_time is not None:
        reasons.append(f"max_time={max_time} s may be too short: raise it")
    reasons.append("a larger beam_size may find it")
    warnings.warn(
        f"The selected equation explains only R² = {r2:.2f} of y on the training data, while y depends on X "
        f"(each point's nearest neighbour predicts it with R² = {structure:.2f}): {'; '.join(reasons)}.",
        UserWarning,
        stacklevel=5,
    )


def warn_outside_domain(values: np.ndarray) -> np.ndarray:
    """``values`` (predictions), with a ``RuntimeWarning`` that says how many and which
    rows are NaN or infinite: points outside the equation's domain (``log`` of a
    negative number, a division by zero) or beyond float64's range."""
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        rows = ", ".join(map(str, bad[:NAMED_ROWS])) + (", ..." if len(bad) > NAMED_ROWS else "")
        warnings.warn(
            f"{len(bad)} of {len(values)} points lie outside the equation's domain or range (rows {rows}): their "
            "predictions are NaN or infinite. Check them against the range of the training data.",
            RuntimeWarning,
            stacklevel=3,
        )
    return values


def checked_weights(sample_weight, n_points: int) -> np.ndarray:
    """``sample_weight`` as ``n_points`` finite, non-negative float64 weights (a number: the same for all)."""
    if _is_number(sample_weight):
        sample_weight = np.full(n_points, float(sample_weight))
    weights = check_array(sample_weight, ensure_2d=False, dtype=np.float64, input_name="sample_weight")
    if weights.shape != (n_points,):
        raise ValueError(
            f"sample_weight must be one number per point: shape ({n_points},) for X's {n_points} rows, "
            f"got shape {weights.shape}."
        )
    if (weights < 0).any():
        raise ValueError(
            f"sample_weight must be non-negative, but {int((weights < 0).sum())} weights are negative (the first "
            f"is {weights[weights < 0][0]!r}); give the points you want to leave out a weight of 0."
        )
    if not weights.any():
        raise ValueError("Sample weights must contain at least one non-zero number: every sample_weight is zero.")
    return weights


def validated(estimator, X, y, sample_weight) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``X``, ``y`` as float64 (the ``estimator`` records ``n_features_in_`` and
    ``feature_names_in_``) and the sample weights normalised to mean 1, without the
    points of weight 0."""
    check_target(y)
    check_columns(X)
    X, y = validate_data(estimator, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=MIN_POINTS)
    warn_repeated_columns(X, getattr(estimator, "feature_names_in_", [f"x{i}" for i in range(X.shape[1])]))
    y = y.astype(np.float64)  # integers count as numbers
    warn_constant_features(X, y)
    if sample_weight is None:
        return X, y, None
    weights = checked_weights(sample_weight, len(X))
    kept = weights > 0
    if kept.sum() < MIN_POINTS:
        raise ValueError(
            f"Only {int(kept.sum())} points have a positive sample_weight; at least {MIN_POINTS} are needed."
        )
    return X[kept], y[kept], weights[kept] / weights[kept].mean()


def subsample(X, y, weights, max_points: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """At most ``max_points`` of the points, drawn with ``rng``."""
    if len(X) <= max_points:
        return X, y, weights
    keep = rng.choice(len(X), size=max_points, replace=False)
    return X[keep], y[keep], None if weights is None else weights[keep] / weights[keep].mean()


def _largest_finite(values: np.ndarray) -> np.ndarray:
    """Each column's largest finite magnitude (0 for none)."""
    return np.where(np.isfinite(values), np.abs(values), 0.0).max(axis=0, initial=0.0)


def r2_score_scaled(y, predicted, sample_weight=None) -> float:
    """scikit-learn's ``r2_score`` (averaged over the columns of a 2-D ``y``) of
    ``predicted`` against ``y``, both divided, column by column, by a power of two near
    the largest finite magnitude of ``y`` (larger when a prediction would overflow
    after the division): a ``y`` near 1e300 does not overflow the sums of squares
    (``r2_score`` gives NaN there), and a power of two divides exactly, so the value is
    otherwise ``r2_score``'s to the last bit. ``sample_weight`` as in ``r2_score``."""
    from sklearn.metrics import r2_score  # with score, not when the estimator is imported

    y, predicted = np.asarray(y, dtype=np.float64), np.asarray(predicted, dtype=np.float64)
    columns, predicted_columns = y.reshape(len(y), -1), predicted.reshape(len(predicted), -1)
    if columns.shape == predicted_columns.shape:  # else r2_score's own error
        # magnitude = m * 2**e with 0.5 <= m < 1 (e = 0 for 0); a prediction below
        # 2**e_p stays below 2**1023 after dividing by 2**(e_p - 1023)
        exponents = np.maximum(
            np.frexp(_largest_finite(columns))[1], np.frexp(_largest_finite(predicted_columns))[1] - 1023
        )
        y = np.ldexp(columns, -exponents).reshape(y.shape)
        predicted = np.ldexp(predicted_columns, -exponents).reshape(predicted.shape)
    with np.errstate(over="ignore"):  # a prediction far above y: R² is -inf, as r2_score's
        return float(r2_score(y, predicted, sample_weight=sample_weight))
