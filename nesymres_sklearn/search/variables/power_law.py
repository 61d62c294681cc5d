"""The power-law candidate: ``y = c * x_1**b_1 * ... * x_d**b_d``, fitted as a line in logs.

Many laws are products of powers of their variables (``q1*q2/r**2``, ``n*k*T/V``), and
with many variables the network sees only some of them. When ``y`` keeps one sign, a
weighted least-squares line of ``log|y|`` on the ``log|x_j|`` of the columns that keep
one sign gives the exponents. They are rounded to halves; columns whose exponent
rounds to 0 leave the law, and the coefficient ``c`` is fitted in closed form. On data
that follow a power law the exponents come out exact; on other data the row is one
more approximate candidate (and seed for Operon) for the selection to judge.
"""

from __future__ import annotations

import numpy as np

from ...expression.monomial import monomial_tokens
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..fitted import Fitted

# Exponents beyond this magnitude are not written (the vocabulary's integers end at 5).
MAX_EXPONENT = 5


def keeps_one_sign(values: np.ndarray) -> bool:
    """Whether every value is positive, or every value negative (none is 0)."""
    return bool(np.all(values > 0) or np.all(values < 0))


def power_law_skeleton(exponents: dict[int, float]) -> Skeleton:
    """``c`` times each column to its exponent (multiples of one half, none 0)."""
    tokens = monomial_tokens(exponents)
    if tokens[:2] == ["div", "1"]:
        return Skeleton(("div", CONSTANT, *tokens[2:]))
    return Skeleton(("mul", CONSTANT, *tokens))


def log_line(X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The slopes of the (``weights``-weighted) least-squares line of ``log|y|`` on the
    ``log|x_j|`` (values that are not 0), and the share of ``log|y|``'s variance that it
    leaves unexplained (inf where ``log|y|`` is constant)."""
    root = np.ones(len(y)) if weights is None else np.sqrt(weights)
    target = np.log(np.abs(y))
    design = np.column_stack([np.ones(len(y)), np.log(np.abs(X))])
    coefficients = np.linalg.lstsq(design * root[:, None], target * root, rcond=None)[0]
    spread = float(np.sum((root * (target - np.average(target, weights=weights))) ** 2))
    left = float(np.sum((root * (target - design @ coefficients)) ** 2))
    return coefficients[1:], left / spread if spread > 0 else np.inf


def power_law(X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> Fitted | None:
    """The power-law candidate for ``(X, y)`` (``weights``: sample weights, mean 1):
    skeleton, fitted constant and MSE; ``None`` when ``y`` changes sign or touches
    zero, or no column keeps one sign."""
    if not keeps_one_sign(y):
        return None
    usable = [j for j in range(X.shape[1]) if keeps_one_sign(X[:, j])]
    if not usable:
        return None
    slopes, _ = log_line(X[:, usable], y, weights)
    rounded = np.round(2 * slopes) / 2
    exponents = {j: float(b) for j, b in zip(usable, rounded) if b != 0 and abs(b) <= MAX_EXPONENT}
    if not exponents:
        return None
    skeleton = power_law_skeleton(exponents)
    with np.errstate(all="ignore"):
        shape = skeleton.program(X, np.ones(1))
        w = np.ones(len(y)) if weights is None else weights
        constant = float(np.sum(w * shape * y) / np.sum(w * shape**2))
        loss = float(np.average((constant * shape - y) ** 2, weights=weights))
    if not (np.isfinite(constant) and np.isfinite(loss)):
        return None
    return Fitted(skeleton, np.array([constant]), loss)
