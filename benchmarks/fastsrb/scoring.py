"""Numeric and symbolic recovery of a FastSRB law.

- *Numeric recovery* (the headline, as srbf's ``is_perfect_fit``): the fraction of
  variance unexplained on the clean validation targets,
  ``FVU = mean((y - yhat)**2) / var(y)``, is at most float32's epsilon
  (1.1920929e-07). Both sums are taken on values divided by ``max |y|`` first, so that
  laws whose values are 1e-30 or 1e36 do not underflow or overflow. A prediction with a
  non-finite value, of the wrong length, or a failed fit (``None``) is a miss.
- *Symbolic recovery*: the predicted expression, over ``v1 .. vn``, equals the law or one
  of its ``accept`` forms up to the rounding of its constants. Every float of both is
  replaced by the exact rational of its value to ``SIGNIFICANT_DIGITS`` significant digits;
  the law is recovered when ``simplify(predicted - law)`` is 0, or
  ``simplify(predicted / law)`` is a number within ``10**(1 - SIGNIFICANT_DIGITS)`` of 1
  (the same constants folded differently: ``c*v1/v2`` against ``v1/(d*v2)``). SymPy runs
  under a time limit (``SYMBOLIC_SECONDS`` for all the forms of one fit); an expression
  not shown equal by then is not recovered. Only predictions with
  ``FVU <= SYMBOLIC_FVU_GATE`` are checked, which also keeps the few ``accept`` forms that
  are not the law (II.21.32's has a sign flipped) from counting. Constants fitted to
  noisy targets rarely agree to six digits, so under noise symbolic recovery mostly
  counts the laws found without fitted constants.
"""

from __future__ import annotations

from tokenize import TokenError

import sympy

from pretraining.time_limit import TimeLimitExceeded, call_with_time_limit

from ..metrics import FVU_THRESHOLD, fvu
from .laws import Law

SIGNIFICANT_DIGITS = 6
SYMBOLIC_SECONDS = 10.0
SYMBOLIC_FVU_GATE = 1e-3
# What SymPy raises on extreme expressions; such an expression is not shown equal.
_SYMPY_FAILURES = (OverflowError, RecursionError, ZeroDivisionError, TypeError, ValueError, AttributeError)


def numeric_recovery(y_true, y_pred) -> bool:
    """Whether ``FVU <= FVU_THRESHOLD`` (a failed fit, ``None``, is a miss)."""
    return bool(fvu(y_true, y_pred) <= FVU_THRESHOLD)


def rationalized(expression: sympy.Expr, digits: int = SIGNIFICANT_DIGITS) -> sympy.Expr:
    """``expression`` with every float replaced by the exact rational of its value to
    ``digits`` significant digits (``3.14159265`` -> ``314159/100000``)."""
    numbers = expression.atoms(sympy.Float)
    replacements = {number: sympy.Rational(f"{float(number):.{digits - 1}e}") for number in numbers}
    return expression.xreplace(replacements) if replacements else expression


def equal_up_to_rounding(predicted: sympy.Expr, targets, digits: int = SIGNIFICANT_DIGITS) -> bool:
    """Whether ``predicted`` equals one of ``targets`` after :func:`rationalized` (see the
    module docstring); no time limit."""
    predicted = rationalized(predicted, digits)
    tolerance = 10.0 ** (1 - digits)
    for target in targets:
        target = rationalized(target, digits)
        if sympy.simplify(predicted - target) == 0:
            return True
        ratio = sympy.simplify(predicted / target)
        if ratio.is_number and ratio.is_finite and abs(complex(ratio) - 1) <= tolerance:
            return True
    return False


def symbolic_recovery(
    expression: str | None, law: Law, fvu_value: float | None = None, seconds: float = SYMBOLIC_SECONDS
) -> bool:
    """Whether the predicted ``expression`` (text over ``v1 .. vn``) is the law or one of
    its ``accept`` forms (see the module docstring); ``fvu_value`` above
    ``SYMBOLIC_FVU_GATE`` answers ``False`` without SymPy."""
    if expression is None or (fvu_value is not None and not fvu_value <= SYMBOLIC_FVU_GATE):
        return False
    try:
        predicted = law.parse(expression)
    except (SyntaxError, TokenError, *_SYMPY_FAILURES):
        return False
    if not isinstance(predicted, sympy.Expr):
        return False
    targets = (law.expression, *law.accepted_expressions)
    try:
        return bool(call_with_time_limit(seconds, equal_up_to_rounding, predicted, targets))
    except (TimeLimitExceeded, *_SYMPY_FAILURES):
        return False
