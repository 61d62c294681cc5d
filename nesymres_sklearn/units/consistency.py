"""Dimensional consistency of a candidate law over the features.

A law is consistent when every sum adds terms of one dimension, every function other
than ``abs`` and ``sqrt`` (``exp``, ``log``, ``sin``, ``cos``, ...) takes a
dimensionless argument, every power of a dimensional base has a number for its
exponent, and the whole has ``y``'s dimensions. Numbers, fitted constants included,
are dimensionless. The check reads the law as written, in prefix tokens (a candidate's
skeleton and constants, or a SymPy expression written so): ``log(x1) - log(x2)`` of two
lengths counts as inconsistent although it equals ``log(x1/x2)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from ..expression.operators import OPERATORS
from ..expression.tokens import CONSTANT, variable_index

#: Exponents of base dimensions closer than this count as equal (fitted exponents are floats).
TOLERANCE = 1e-6


class InconsistentError(ValueError):
    """A sum of different dimensions, or a dimensional argument to a function."""


def dimension(tokens: Sequence[str], dimensions: np.ndarray, constants: Sequence[float] | None = None) -> np.ndarray:
    """The dimensions of the prefix expression ``tokens`` over ``x_1, x_2, ...``, whose
    exponents over the base dimensions are the rows of ``dimensions``; ``constants``:
    the values of its placeholders ``c`` in order (unknown without: a power to one of
    them needs a dimensionless base). Raises :class:`InconsistentError`."""
    reader = _Reader(tokens, np.asarray(dimensions, dtype=np.float64), constants)
    found, _ = reader.read()
    return found


def is_consistent(
    tokens: Sequence[str], dimensions: np.ndarray, target: np.ndarray, constants: Sequence[float] | None = None
) -> bool:
    """Whether the expression is consistent and has the dimensions ``target``."""
    try:
        return _equal(dimension(tokens, dimensions, constants), np.asarray(target, dtype=np.float64))
    except InconsistentError:
        return False


def sympy_dimension(expression: sympy.Expr, symbols: Sequence[sympy.Symbol], dimensions: np.ndarray) -> np.ndarray:
    """The dimensions of a SymPy ``expression`` over ``symbols`` (rows of
    ``dimensions``), by the same rules, on its tree as SymPy holds it."""
    of = dict(zip(symbols, np.asarray(dimensions, dtype=np.float64)))
    zero = np.zeros(np.shape(dimensions)[1])

    def walk(node: sympy.Expr) -> np.ndarray:
        if node.is_Symbol:
            return of[node]
        if not node.free_symbols:
            return zero
        parts = [walk(argument) for argument in node.args]
        if node.is_Add:
            if any(not _equal(part, parts[0]) for part in parts[1:]):
                raise InconsistentError("a sum of terms of different dimensions")
            return parts[0]
        if node.is_Mul:
            return sum(parts, zero)
        if node.is_Pow:
            if not _equal(parts[1], zero):
                raise InconsistentError("a dimensional exponent")
            if node.exp.free_symbols and not _equal(parts[0], zero):
                raise InconsistentError("a dimensional base to a power that is not a number")
            return parts[0] * float(node.exp) if not node.exp.free_symbols else zero
        if isinstance(node, sympy.Abs):
            return parts[0]
        if any(not _equal(part, zero) for part in parts):
            raise InconsistentError(f"{node.func.__name__} takes a dimensional argument")
        return zero

    return walk(expression)


class _Reader:
    """Reads one prefix expression, node by node: its dimensions and, for a subtree
    without variables whose constants are known, its value (``None`` otherwise; a
    subtree with variables has no value)."""

    def __init__(self, tokens: Sequence[str], dimensions: np.ndarray, constants: Sequence[float] | None):
        self.tokens, self.dimensions, self.position = tokens, dimensions, 0
        self.constants = None if constants is None else iter(constants)
        self.zero = np.zeros(dimensions.shape[1])

    def read(self) -> tuple[np.ndarray, float | None]:
        token = self.tokens[self.position]
        self.position += 1
        index = variable_index(token)
        if index is not None:
            return self.dimensions[index], None
        if token == CONSTANT:
            return self.zero, None if self.constants is None else float(next(self.constants))
        if token not in OPERATORS:
            return self.zero, float(int(token))
        operator = OPERATORS[token]
        if operator.arity == 2:
            (a, u), (b, v) = self.read(), self.read()
            with np.errstate(all="ignore"):  # a value outside the domain is NaN: an unknown exponent
                value = None if u is None or v is None else float(operator.numpy(u, v))
            return self._binary(token, a, b, v), value
        a, u = self.read()
        with np.errstate(all="ignore"):
            value = None if u is None else float(operator.numpy(u))
        if token == "abs":
            return a, value
        if token == "sqrt":
            return a / 2, value
        if not _equal(a, self.zero):
            raise InconsistentError(f"{token} takes a dimensional argument")
        return self.zero, value

    def _binary(self, token: str, a: np.ndarray, b: np.ndarray, exponent: float | None) -> np.ndarray:
        if token == "add":
            if not _equal(a, b):
                raise InconsistentError("a sum of terms of different dimensions")
            return a
        if token == "mul":
            return a + b
        if token == "div":
            return a - b
        if not _equal(b, self.zero):
            raise InconsistentError("a dimensional exponent")
        if exponent is not None and np.isfinite(exponent):
            return a * exponent
        if not _equal(a, self.zero):
            raise InconsistentError("a dimensional base to a power that is not a known number")
        return self.zero


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.abs(a - b) < TOLERANCE))
