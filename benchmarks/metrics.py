"""Accuracy metrics of the paper (section 5, "Metrics", and appendix "Evaluation details").

- :math:`A_1`: a point is correct when ``numpy.isclose(y, y_hat, atol=1e-3, rtol=0.05)``;
  an equation is recovered when more than 95% of the points are correct. All points
  are kept, including NaN and infinite values, which count as correct exactly where
  the prediction has the same non-finite value (``equal_nan=True``; ``isclose``
  already matches infinities of the same sign). Note that ``isclose`` is asymmetric:
  the tolerance is relative to the prediction ``y_hat``, as in the paper's call.
- :math:`A_2`: the coefficient of determination :math:`R^2` between ``y`` and
  ``y_hat`` over the points where both are finite; an equation is recovered when
  :math:`R^2 > 0.95`. With fewer than two such points :math:`R^2` is NaN (not
  recovered). A constant ``y`` gives :math:`R^2 = 1` for an exact prediction and 0
  otherwise (scikit-learn's convention).

Both are computed on 10,000 points in the training support (iid) and in the support
extended by ``hi - lo`` on both sides (ood), see :mod:`benchmarks.datasets`.
"""

from __future__ import annotations

import numpy as np

A1_ATOL = 1e-3
A1_RTOL = 0.05
A1_THRESHOLD = 0.95
A2_THRESHOLD = 0.95


def _as_arrays(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true, dtype=np.float64).ravel()
    y_pred = np.asarray(y_pred, dtype=np.float64).ravel()
    if y_pred.size == 1 and y_true.size != 1:
        y_pred = np.full_like(y_true, y_pred.item())
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has {y_true.size} values, y_pred {y_pred.size}.")
    return y_true, y_pred


def close_fraction(y_true, y_pred, atol: float = A1_ATOL, rtol: float = A1_RTOL) -> float:
    """Fraction of points where ``numpy.isclose(y_true, y_pred)`` holds (NaNs kept)."""
    y_true, y_pred = _as_arrays(y_true, y_pred)
    if y_true.size == 0:
        return float("nan")
    with np.errstate(all="ignore"):
        close = np.isclose(y_true, y_pred, atol=atol, rtol=rtol, equal_nan=True)
    return float(close.mean())


def accuracy_a1(y_true, y_pred) -> bool:
    """:math:`A_1`: more than 95% of the points pass ``isclose`` (atol 1e-3, rtol 0.05)."""
    fraction = close_fraction(y_true, y_pred)
    return bool(fraction > A1_THRESHOLD)


def r2_finite(y_true, y_pred) -> float:
    """:math:`R^2` over the points where both ``y_true`` and ``y_pred`` are finite."""
    y_true, y_pred = _as_arrays(y_true, y_pred)
    finite = np.isfinite(y_true) & np.isfinite(y_pred)
    if finite.sum() < 2:
        return float("nan")
    y_true, y_pred = y_true[finite], y_pred[finite]
    with np.errstate(all="ignore"):
        residual = np.sum((y_true - y_pred) ** 2)
        total = np.sum((y_true - y_true.mean()) ** 2)
    if not np.isfinite(residual) or not np.isfinite(total):
        return float("nan")
    if total == 0.0:
        return 1.0 if residual == 0.0 else 0.0
    return float(1.0 - residual / total)


def accuracy_a2(y_true, y_pred) -> bool:
    """:math:`A_2`: :math:`R^2 > 0.95` on the finite points."""
    r2 = r2_finite(y_true, y_pred)
    return bool(np.isfinite(r2) and r2 > A2_THRESHOLD)


def score(y_true, y_pred, suffix: str = "") -> dict:
    """All metric values of one test sample, with keys ending in ``suffix``.

    Keys: ``a1``, ``a2`` (booleans), ``close`` (fraction of isclose points) and ``r2``.
    """
    return {
        f"a1{suffix}": accuracy_a1(y_true, y_pred),
        f"a2{suffix}": accuracy_a2(y_true, y_pred),
        f"close{suffix}": close_fraction(y_true, y_pred),
        f"r2{suffix}": r2_finite(y_true, y_pred),
    }
