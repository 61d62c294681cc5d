"""Dimensional consistency of a candidate law over the features.

A law is consistent when every sum adds terms of one dimension, every function other
than ``abs`` and ``sqrt`` (``exp``, ``sin``, ``cos``, ...) takes a dimensionless
argument, every power of a dimensional base has a number for its exponent, and the
whole has ``y``'s dimensions. Numbers, fitted constants included, are dimensionless,
unless the law carries dimensional constants (:mod:`.constants`): then a fitted constant
is *free*, of whatever dimensions make its place consistent (the free constants with
units of PhySO), and a node that holds one is free too.

Logarithms of dimensional quantities are allowed where they cancel, as a physicist
writes ``log(x1) - log(x2) = log(x1/x2)``: ``log(q)`` carries the *log dimension* of
``q`` (``log(q) = log(q/u) + log(u)`` for a unit ``u`` of its dimension). Log dimensions
add in sums and scale with a known numeric factor (``k*log(q)``, ``log(q)/k``); an
unknown factor, a product of two, a dimensional factor, a power or a function of one
is inconsistent, and so is any log dimension left over in a function's argument or in
the whole law. The check reads the law as written, in prefix tokens (a candidate's
skeleton and constants) or as SymPy holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from ..expression.operators import OPERATORS
from ..expression.tokens import CONSTANT, variable_index

#: Exponents of base dimensions closer than this count as equal (fitted exponents are floats).
TOLERANCE = 1e-6


class InconsistentError(ValueError):
    """A sum of different dimensions, or a dimensional argument to a function."""


@dataclass(frozen=True)
class _Quantity:
    """A node's dimension exponents (``None``: free, whatever its place needs), its log
    dimension (zero unless it holds logs of dimensional quantities that have not
    cancelled yet) and, for a node without variables whose constants are known, its value."""

    dimension: np.ndarray | None
    log: np.ndarray
    value: float | None = None

    @property
    def has_log(self) -> bool:
        return _nonzero(self.log)

    def plain(self, where: str) -> np.ndarray | None:
        """Its dimension (``None`` when free), where a log dimension left over is inconsistent."""
        if self.has_log:
            raise InconsistentError(f"{where} holds the log of a dimensional quantity that does not cancel")
        return self.dimension


def _sum(a: _Quantity, b: _Quantity) -> _Quantity:
    if a.dimension is None or b.dimension is None:
        return _Quantity(b.dimension if a.dimension is None else a.dimension, a.log + b.log)
    if not _equal(a.dimension, b.dimension):
        raise InconsistentError("a sum of terms of different dimensions")
    return _Quantity(a.dimension, a.log + b.log)


def _product(a: _Quantity, b: _Quantity, divide: bool = False) -> _Quantity:
    if a.dimension is None or b.dimension is None:  # a free factor absorbs the rest, logs included
        return _Quantity(None, 0 * a.log)
    if b.has_log and (divide or a.has_log):
        raise InconsistentError("a product or quotient of logs of dimensional quantities")
    if b.has_log:
        a, b = b, a
    if a.has_log:  # k*log(q) or log(q)/k: k must be a known number
        if b.value is None or _nonzero(b.dimension):
            raise InconsistentError("the log of a dimensional quantity times a factor that is not a known number")
        return _Quantity(a.dimension, a.log / b.value if divide else a.log * b.value)
    return _Quantity(a.dimension - b.dimension if divide else a.dimension + b.dimension, a.log)


def _power(base: _Quantity, exponent: _Quantity) -> np.ndarray | None:
    exponent_dimension = exponent.plain("an exponent")
    if exponent_dimension is not None and _nonzero(exponent_dimension):
        raise InconsistentError("a dimensional exponent")
    dimension = base.plain("a power")
    if dimension is None:
        return None
    if exponent.value is not None and np.isfinite(exponent.value):
        return dimension * exponent.value
    if _nonzero(dimension):
        raise InconsistentError("a dimensional base to a power that is not a known number")
    return dimension


def _function(name: str, argument: _Quantity) -> _Quantity:
    """``name`` (an operator other than the arithmetic ones) of ``argument``."""
    dimension = argument.plain(f"the argument of {name}")
    zero = 0 * argument.log
    if dimension is None:  # a free argument: dimensionless where it must be
        return _Quantity(None if name in ("abs", "sqrt") else zero, zero)
    if name == "abs":
        return _Quantity(dimension, zero)
    if name == "sqrt":
        return _Quantity(dimension / 2, zero)
    if name in ("ln", "log"):
        return _Quantity(zero, dimension)
    if _nonzero(dimension):
        raise InconsistentError(f"{name} takes a dimensional argument")
    return _Quantity(zero, zero)


def dimension(
    tokens: Sequence[str],
    dimensions: np.ndarray,
    constants: Sequence[float] | None = None,
    free_constants: bool = False,
) -> np.ndarray | None:
    """The dimensions of the prefix expression ``tokens`` over ``x_1, x_2, ...``, whose
    exponents over the base dimensions are the rows of ``dimensions``; ``constants``:
    the values of its placeholders ``c`` in order (unknown without: a power to one of
    them needs a dimensionless base); ``free_constants``: the placeholders are free
    (``None`` when the whole is). Raises :class:`InconsistentError`."""
    reader = _Reader(tokens, np.asarray(dimensions, dtype=np.float64), constants, free_constants)
    with np.errstate(all="ignore"):  # a value outside the domain is NaN: an unknown exponent
        return reader.read().plain("the law")


def is_consistent(
    tokens: Sequence[str],
    dimensions: np.ndarray,
    target: np.ndarray,
    constants: Sequence[float] | None = None,
    free_constants: bool = False,
) -> bool:
    """Whether the expression is consistent and has the dimensions ``target`` (see :func:`dimension`)."""
    try:
        found = dimension(tokens, dimensions, constants, free_constants)
        return found is None or _equal(found, np.asarray(target, dtype=np.float64))
    except InconsistentError:
        return False


def sympy_dimension(expression: sympy.Expr, symbols: Sequence[sympy.Symbol], dimensions: np.ndarray) -> np.ndarray:
    """The dimensions of a SymPy ``expression`` over ``symbols`` (rows of
    ``dimensions``), by the same rules, on its tree as SymPy holds it."""
    of = dict(zip(symbols, np.asarray(dimensions, dtype=np.float64)))
    zero = np.zeros(np.shape(dimensions)[1])

    def walk(node: sympy.Expr) -> _Quantity:
        if node.is_Symbol:
            return _Quantity(of[node], zero)
        if not node.free_symbols:
            with np.errstate(all="ignore"):
                value = complex(node)
            return _Quantity(zero, zero, value.real if value.imag == 0 else None)
        parts = [walk(argument) for argument in node.args]
        if node.is_Add:
            found = parts[0]
            for part in parts[1:]:
                found = _sum(found, part)
            return found
        if node.is_Mul:
            found = parts[0]
            for part in parts[1:]:
                found = _product(found, part)
            return found
        if node.is_Pow:
            return _Quantity(_power(*parts), zero)
        name = node.func.__name__.lower()  # SymPy's Abs is the token abs
        if len(parts) == 1:
            return _function(name, parts[0])
        if any(_nonzero(part.plain(f"an argument of {name}")) for part in parts):
            raise InconsistentError(f"{name} takes a dimensional argument")
        return _Quantity(zero, zero)

    return walk(expression).plain("the law")


class _Reader:
    """Reads one prefix expression, node by node, into :class:`_Quantity`."""

    def __init__(
        self, tokens: Sequence[str], dimensions: np.ndarray, constants: Sequence[float] | None, free_constants: bool
    ):
        self.tokens, self.dimensions, self.position = tokens, dimensions, 0
        self.free_constants = free_constants
        self.constants = None if constants is None else iter(constants)
        self.zero = np.zeros(dimensions.shape[1])

    def read(self) -> _Quantity:
        token = self.tokens[self.position]
        self.position += 1
        index = variable_index(token)
        if index is not None:
            return _Quantity(self.dimensions[index], self.zero)
        if token == CONSTANT:
            value = None if self.constants is None else float(next(self.constants))
            return _Quantity(None if self.free_constants else self.zero, self.zero, value)
        if token not in OPERATORS:
            return _Quantity(self.zero, self.zero, float(int(token)))
        operator = OPERATORS[token]
        arguments = [self.read() for _ in range(operator.arity)]
        values = [argument.value for argument in arguments]
        value = None if None in values else float(operator.numpy(*values))
        if token == "add":
            found = _sum(*arguments)
        elif token in ("mul", "div"):
            found = _product(*arguments, divide=token == "div")
        elif token == "pow":
            found = _Quantity(_power(*arguments), self.zero)
        else:
            found = _function(token, *arguments)
        return _Quantity(found.dimension, found.log, value)


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return not _nonzero(a - b)


def _nonzero(a: np.ndarray) -> bool:
    """Whether some exponent of ``a`` is not 0 (beyond ``TOLERANCE``)."""
    return bool((np.abs(a) >= TOLERANCE).any())
