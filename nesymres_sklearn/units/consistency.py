"""Dimensional consistency of a candidate law written over the features.

A law is consistent when every sum adds terms of one dimension, every function other
than ``abs`` (``exp``, ``log``, ``sin``, ``cos``, ...) takes a dimensionless argument,
every power of a dimensional base has a number for its exponent, and the whole has
``y``'s dimensions. Numbers, fitted constants included, are dimensionless. The check
is syntactic: ``log(x1) - log(x2)`` of two lengths counts as inconsistent although it
equals ``log(x1/x2)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import sympy

#: Exponents of base dimensions closer than this count as equal (fitted exponents are floats).
TOLERANCE = 1e-6


class InconsistentError(ValueError):
    """A sum of different dimensions, or a dimensional argument to a function."""


def dimension(expression: sympy.Expr, dimensions: Mapping[sympy.Symbol, np.ndarray]) -> np.ndarray:
    """The dimensions of ``expression`` (exponents over the base dimensions that the
    vectors of ``dimensions`` hold, one per symbol); raises :class:`InconsistentError`."""
    if isinstance(expression, sympy.Symbol):
        if expression not in dimensions:
            raise InconsistentError(f"{expression} has no units")
        return dimensions[expression]
    zero = np.zeros(len(next(iter(dimensions.values()))) if dimensions else 0)
    if expression.is_number:
        return zero
    if isinstance(expression, sympy.Add):
        terms = [dimension(term, dimensions) for term in expression.args]
        if any(not _equal(term, terms[0]) for term in terms[1:]):
            raise InconsistentError(f"{expression} adds terms of different dimensions")
        return terms[0]
    if isinstance(expression, sympy.Mul):
        return sum((dimension(factor, dimensions) for factor in expression.args), zero)
    if isinstance(expression, sympy.Pow):
        base, exponent = expression.args
        base_dimension = dimension(base, dimensions)
        if exponent.is_number:
            return base_dimension * float(exponent)
        if _equal(base_dimension, zero) and _equal(dimension(exponent, dimensions), zero):
            return zero
        raise InconsistentError(f"{expression} raises a dimensional base to a dimensional or variable power")
    if isinstance(expression, sympy.Abs):
        return dimension(expression.args[0], dimensions)
    if isinstance(expression, sympy.Function):
        for argument in expression.args:
            if not _equal(dimension(argument, dimensions), zero):
                raise InconsistentError(f"{expression} takes a dimensional argument")
        return zero
    raise InconsistentError(f"{expression} is not an expression whose dimensions are known")


def is_consistent(expression: sympy.Expr, dimensions: Mapping[sympy.Symbol, np.ndarray], target: np.ndarray) -> bool:
    """Whether ``expression`` is consistent and has the dimensions ``target``."""
    try:
        return _equal(dimension(expression, dimensions), target)
    except InconsistentError:
        return False


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.abs(a - b) < TOLERANCE))
