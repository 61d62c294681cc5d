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

- *Symbolic solution* (SRBench, La Cava et al. 2021): after every float of both
  expressions is rounded to three decimals (and those below 1e-4 in magnitude set to
  0), the model's difference from the true model simplifies to a constant, or its
  ratio to it to a non-zero constant. So ``2.0001*x_1 + 5`` solves ``2*x_1`` and
  ``3*sin(x_1)`` solves ``sin(x_1)``, but ``sin(1.1*x_1)`` does not. Simplification
  stops after ``SIMPLIFY_SECONDS`` (in a worker process, :mod:`pretraining.time_limit`);
  an expression not shown to be a solution by then, or on which
  SymPy fails (``SYMPY_FAILURES``), is not one.
- *Model size*: nodes of the SymPy expression after the same rounding and
  simplification; the *relative size* divides it by the true model's size.
"""

from __future__ import annotations

import numpy as np
import sympy

from pretraining.time_limit import TimeLimitExceeded, call_with_time_limit

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


SIMPLIFY_SECONDS = 5.0
# SRBench rounds the floats of both models to this many decimals, and sets those below
# SOLUTION_ZERO in magnitude to 0, before comparing them.
SOLUTION_DECIMALS = 3
SOLUTION_ZERO = 1e-4


# What SymPy's simplification raises on extreme models (``1e+300`` constants, deep
# towers of exponentials): such a model is not shown to be a solution.
SYMPY_FAILURES = (OverflowError, RecursionError, ZeroDivisionError, TypeError, ValueError)


def round_floats(expression: sympy.Expr) -> sympy.Expr:
    """Floats rounded to ``SOLUTION_DECIMALS`` decimals, those below ``SOLUTION_ZERO``
    in magnitude set to 0 (SRBench's rounding); whole numbers become integers, so that
    a factor 1.0 leaves the expression."""
    replacements = {}
    for number in expression.atoms(sympy.Float):
        rounded = 0.0 if abs(number) < SOLUTION_ZERO else round(float(number), SOLUTION_DECIMALS)
        replacements[number] = sympy.Integer(int(rounded)) if rounded == int(rounded) else sympy.Float(rounded)
    return expression.xreplace(replacements) if replacements else expression


def _parsed(expression) -> sympy.Expr:
    if isinstance(expression, sympy.Basic):
        return expression
    from .datasets import parse_expression

    return parse_expression(str(expression))


def symbolic_solution(model, truth, seconds: float = SIMPLIFY_SECONDS) -> bool:
    """Whether ``model`` is a symbolic solution of ``truth`` (expressions or their text
    over ``x_1, x_2, ...``; see the module docstring)."""
    model, truth = round_floats(_parsed(model)), round_floats(_parsed(truth))
    try:
        return call_with_time_limit(seconds, _solves, model, truth)
    except (TimeLimitExceeded, *SYMPY_FAILURES):
        return False


def _solves(model: sympy.Expr, truth: sympy.Expr) -> bool:
    """:func:`symbolic_solution` of rounded expressions, without a time limit."""
    difference = round_floats(sympy.simplify(truth - model, ratio=1))
    if difference == 0 or difference.is_constant():
        return True
    ratio = round_floats(sympy.simplify(model / truth, ratio=1))
    return bool(ratio.is_constant() and ratio != 0)


def model_size(expression, seconds: float = SIMPLIFY_SECONDS) -> int:
    """Nodes of the expression after rounding its floats and simplifying it (as
    written, when simplification does not finish within ``seconds``)."""
    expression = round_floats(_parsed(expression))
    try:
        return call_with_time_limit(seconds, _simplified_size, expression)
    except (TimeLimitExceeded, *SYMPY_FAILURES):
        return _size(expression)


def _simplified_size(expression: sympy.Expr) -> int:
    return _size(round_floats(sympy.simplify(expression, ratio=1)))


def _size(expression: sympy.Expr) -> int:
    return sum(1 for _ in sympy.preorder_traversal(expression))


def symbolic_scores(model, truth, seconds: float = SIMPLIFY_SECONDS) -> dict:
    """``solution``, ``model_size`` and ``relative_size`` (model size over the true
    model's) of one fitted expression."""
    size = model_size(model, seconds)
    return {
        "solution": symbolic_solution(model, truth, seconds),
        "model_size": size,
        "relative_size": size / model_size(truth, seconds),
    }


#: srbf's threshold of a perfect fit: float32's machine epsilon.
FVU_THRESHOLD = float(np.finfo(np.float32).eps)


def fvu(y_true, y_pred) -> float:
    """Fraction of variance unexplained; ``inf`` for a missing, non-finite or misshapen
    prediction, and for a constant target not reproduced exactly."""
    if y_pred is None:
        return float("inf")
    y_true = np.asarray(y_true, dtype=np.float64).ravel()
    try:
        y_pred = np.asarray(y_pred, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return float("inf")
    if y_pred.size == 1 and y_true.size > 1:
        y_pred = np.full_like(y_true, y_pred.item())
    if y_pred.shape != y_true.shape or y_true.size == 0 or not np.isfinite(y_pred).all():
        return float("inf")
    scale = np.max(np.abs(y_true))
    if scale == 0:
        return 0.0 if np.all(y_pred == 0) else float("inf")
    with np.errstate(all="ignore"):
        residual = np.mean(((y_true - y_pred) / scale) ** 2)
        total = np.mean(((y_true - y_true.mean()) / scale) ** 2)
    if not np.isfinite(residual):
        return float("inf")
    if total == 0:
        return 0.0 if residual == 0 else float("inf")
    return float(residual / total)
