"""Units: bring each feature and the target into the range the network was trained on.

Pretraining draws every variable from supports inside [-10, 10] and keeps targets up
to 1000 in magnitude. Data far outside (a target in millivolts or in 1e-8 units, a
feature in metres instead of kilometres) would reach the network as numbers it never
saw. Each column whose largest magnitude lies outside its band is divided by the
power of ten that brings that magnitude into (1, 10]; columns inside their band are
left alone. Powers of ten are exact in decimal, so ``y * 1e-3`` or ``X * 1e3`` give
the network the very numbers of the unscaled data.

A target that is a constant offset plus a small variation (``1e9 + x0*sin(x1)``)
would reach the network, and Operon's float32, as a constant: its variation lies below
their precision. When ``y``'s mean exceeds ``offset_ratio`` times its standard
deviation, the offset ``b`` (the mean rounded to the power of ten below the standard
deviation) is taken out first, and the power of ten is that of ``y - b``.

The whole search runs on the scaled data. The equation found there, ``y' = f(x')``,
is mapped back exactly: ``y = s_y * f(x_1 / s_1, ..., x_d / s_d) + b``. A
:class:`Scaling` is a view (:class:`.views.View`); the writer of the law takes its way
back symbolically (:meth:`Scaling.unscale_expression`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT, variable_token
from .fitted import Fitted, mse
from .problem import Problem

# Largest magnitudes left as they are: features as in pretraining's supports, targets
# as pretraining keeps them.
FEATURE_BAND = (0.1, 10.0)
TARGET_BAND = (0.1, 1000.0)
# Powers of ten up to 10**6 are written exactly in the equation over the raw features, larger ones as floats.
EXACT_POWERS = 6


def power_of_ten(values: np.ndarray, band: tuple[float, float]) -> float:
    """1 when the largest magnitude of ``values`` is inside ``band`` (or 0), else the
    power of ten that brings it into (1, 10]."""
    largest = float(np.max(np.abs(values), initial=0.0))
    if largest == 0.0 or not np.isfinite(largest) or band[0] <= largest <= band[1]:
        return 1.0
    return 10.0 ** (math.ceil(math.log10(largest)) - 1)


def offset(y: np.ndarray, ratio: float | None) -> float:
    """0 unless ``|mean(y)| > ratio * std(y) > 0``; then the mean rounded to the power of
    ten at or below the standard deviation (``1000000001`` for ``1e9 + 1.3 +- 2.5``), so
    that ``y`` minus it spreads around 0. ``ratio=None``: always 0."""
    largest = float(np.max(np.abs(y), initial=0.0))
    if ratio is None or not np.isfinite(largest) or largest == 0.0:
        return 0.0
    unit = y / largest  # no square overflows near float64's largest values
    spread, centre = largest * float(np.std(unit)), largest * float(np.mean(unit))
    if spread == 0.0:
        return 0.0
    if abs(centre) <= ratio * spread:
        return 0.0
    step = 10.0 ** math.floor(math.log10(spread))
    return float(round(centre / step) * step)


@dataclass(frozen=True)
class Scaling:
    """Per-feature divisors ``x_scales``, the target divisor ``y_scale`` and the
    target's offset ``y_offset``, taken out before the division."""

    x_scales: tuple[float, ...]
    y_scale: float
    y_offset: float = 0.0

    @classmethod
    def identity(cls, n_features: int) -> Scaling:
        return cls((1.0,) * n_features, 1.0)

    @classmethod
    def for_data(cls, X: np.ndarray, y: np.ndarray, offset_ratio: float | None = None) -> Scaling:
        """The powers of ten of ``X``'s columns and of ``y`` less its offset (:func:`offset`)."""
        b = offset(y, offset_ratio)
        return cls(
            tuple(power_of_ten(X[:, j], FEATURE_BAND) for j in range(X.shape[1])),
            power_of_ten(y - b if b else y, TARGET_BAND),
            b,
        )

    @property
    def is_identity(self) -> bool:
        return self.y_scale == 1.0 and self.y_offset == 0.0 and all(s == 1.0 for s in self.x_scales)

    def forward(self, whole: Problem) -> Problem:
        """``whole`` in the search's units."""
        return Problem(self.scale_X(whole.X), self.scale_y(whole.y), whole.weights)

    def back(self, fitted: Fitted, whole: Problem) -> Fitted:
        """A law ``fitted`` in the search's units as ``s_y * f(x / s) + b`` over ``whole``'s."""
        if self.is_identity:
            return fitted
        skeleton, constants = fitted.skeleton.substituted(fitted.constants, self._feature_tokens)
        prefix, outer = [], []
        if self.y_offset != 0.0:
            prefix, outer = ["add", CONSTANT], [self.y_offset]
        if self.y_scale != 1.0:
            prefix, outer = [*prefix, "mul", CONSTANT], [*outer, self.y_scale]
        skeleton, constants = Skeleton((*prefix, *skeleton.tokens)), np.concatenate([outer, constants])
        return Fitted(skeleton, constants, mse(skeleton.program, whole.X, whole.y, constants, whole.weights))

    def _feature_tokens(self, j: int) -> tuple[list[str], list[float]]:
        """Tokens of the scaled feature ``j`` over the raw one, and the constant they hold."""
        if self.x_scales[j] == 1.0:
            return [variable_token(j)], []
        return ["mul", CONSTANT, variable_token(j)], [1.0 / self.x_scales[j]]

    def back_values(self, values: np.ndarray, whole: Problem) -> np.ndarray:
        return self.unscale_y(values)

    def back_columns(self, columns: np.ndarray) -> np.ndarray:
        return columns

    def symbols(self, symbols: Sequence) -> list:
        """The same features (in other units)."""
        return list(symbols)

    def scale_X(self, X: np.ndarray) -> np.ndarray:
        return X / np.asarray(self.x_scales) if any(s != 1.0 for s in self.x_scales) else X

    def scale_y(self, y: np.ndarray) -> np.ndarray:
        return (y - self.y_offset) / self.y_scale

    def unscale_y(self, y: np.ndarray) -> np.ndarray:
        return y * self.y_scale + self.y_offset

    def unscale_spread(self, spread: np.ndarray) -> np.ndarray:
        """A standard deviation in the search's units -> in ``y``'s (the offset does not move it)."""
        return spread * self.y_scale

    def unscale_expression(
        self, expression: sympy.Expr, symbols: Sequence[sympy.Symbol], evaluate: bool = False
    ) -> sympy.Expr:
        """``expression`` over scaled features -> the same equation over the raw ones.

        ``evaluate=False`` keeps the tree as written (see ``Skeleton.expression``);
        ``evaluate=True`` writes the powers of ten exactly (floats beyond
        ``10**EXACT_POWERS``) and an integral offset as an integer, and lets SymPy fold
        them into the constants, so that ``log(10*x)`` over ``x/10`` reads ``log(x)``.
        """
        if self.is_identity:
            return expression
        with sympy.evaluate(evaluate):
            number = _power_of_ten if evaluate else sympy.Float
            substitutions = {s: s / number(scale) for s, scale in zip(symbols, self.x_scales) if scale != 1.0}
            raw = expression.xreplace(substitutions) if substitutions else expression
            raw = raw if self.y_scale == 1.0 else number(self.y_scale) * raw
            return raw if self.y_offset == 0.0 else _offset_number(self.y_offset, evaluate) + raw


def _offset_number(value: float, exact: bool) -> sympy.Number:
    """The offset as a SymPy number: an integer when ``exact`` and it is one (to 2**53), else a float."""
    if exact and value.is_integer() and abs(value) < 2.0**53:
        return sympy.Integer(int(value))
    return sympy.Float(value)


def _power_of_ten(scale: float) -> sympy.Number:
    """The power of ten ``scale`` stands for: an exact SymPy number up to
    ``EXACT_POWERS`` (``1000``, ``1/1000``), a float beyond (``1.0e+30``, not thirty
    zeros)."""
    exponent = round(math.log10(scale))
    return sympy.Integer(10) ** exponent if abs(exponent) <= EXACT_POWERS else sympy.Float(10.0**exponent)
