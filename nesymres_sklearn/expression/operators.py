"""The operator table: everything the package knows about each operator, in one place.

Every other table (vocabulary tokens, SymPy reading and writing, vectorised NumPy
evaluation with derivatives, the pretraining generator's weights) is derived from
:data:`OPERATORS`. Adding an operator is adding one :class:`Operator` row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy


@dataclass(frozen=True)
class Operator:
    """One operator token.

    Parameters
    ----------
    token : str
        Its name in prefix notation.
    arity : int
        1 (unary) or 2 (binary).
    numpy : callable
        Vectorised value ``numpy(*args)``.
    derivatives : tuple of callable
        One per argument: ``d(*args, value)`` is the derivative of the value by that
        argument, given the arguments and the value (forward-mode differentiation).
    sympy : callable
        Builds the SymPy expression ``sympy(*args)``.
    sympy_class : type or None
        SymPy class written back as this token by :func:`~.prefix.sympy_to_prefix`;
        ``None`` when SymPy represents it structurally (sums, products, powers) or when
        the token is read but never written.
    in_paper : bool
        Whether the paper's token table (appendix A) holds it; only those are in the
        default vocabulary. ``abs`` is not: it is in the authors' released vocabulary.
    generator_weight : float
        Unnormalised probability that the pretraining generator picks it as a parent
        node (the paper's appendix table); 0 if never generated.
    """

    token: str
    arity: int
    numpy: Callable
    derivatives: tuple[Callable, ...]
    sympy: Callable
    sympy_class: type | None = None
    in_paper: bool = True
    generator_weight: float = 0.0


def _coth(a):
    return 1.0 / np.tanh(a)


def _unary(token, function, derivative, sympy_function, weight=0.0, written=True, in_paper=True):
    return Operator(
        token,
        1,
        function,
        (derivative,),
        sympy_function,
        sympy_class=sympy_function if written else None,
        in_paper=in_paper,
        generator_weight=weight,
    )


OPERATORS: dict[str, Operator] = {
    operator.token: operator
    for operator in (
        Operator("add", 2, np.add, (lambda a, b, v: 1.0, lambda a, b, v: 1.0), lambda a, b: a + b, generator_weight=10),
        Operator(
            "mul", 2, np.multiply, (lambda a, b, v: b, lambda a, b, v: a), lambda a, b: a * b, generator_weight=10
        ),
        Operator(
            "div",
            2,
            np.divide,
            (lambda a, b, v: 1.0 / b, lambda a, b, v: -v / b),
            lambda a, b: a / b,
            generator_weight=5,
        ),
        # The generator's pow raises its argument to a vocabulary integer.
        Operator(
            "pow",
            2,
            np.power,
            (lambda a, b, v: b * np.power(a, b - 1.0), lambda a, b, v: v * np.log(a)),
            lambda a, b: a**b,
            generator_weight=4,
        ),
        _unary("abs", np.abs, lambda a, v: np.sign(a), sympy.Abs, written=False, in_paper=False),
        _unary("acos", np.arccos, lambda a, v: -1.0 / np.sqrt(1.0 - a * a), sympy.acos),
        _unary("asin", np.arcsin, lambda a, v: 1.0 / np.sqrt(1.0 - a * a), sympy.asin, weight=1),
        _unary("atan", np.arctan, lambda a, v: 1.0 / (1.0 + a * a), sympy.atan),
        _unary("cos", np.cos, lambda a, v: -np.sin(a), sympy.cos, weight=4),
        _unary("cosh", np.cosh, lambda a, v: np.sinh(a), sympy.cosh),
        _unary("coth", _coth, lambda a, v: 1.0 - v * v, sympy.coth),
        _unary("exp", np.exp, lambda a, v: v, sympy.exp, weight=4),
        _unary("ln", np.log, lambda a, v: 1.0 / a, sympy.log, weight=4),
        _unary("sin", np.sin, lambda a, v: np.cos(a), sympy.sin, weight=4),
        _unary("sinh", np.sinh, lambda a, v: np.cosh(a), sympy.sinh),
        # SymPy writes sqrt(a) as a**(1/2): recognised structurally when writing.
        _unary("sqrt", np.sqrt, lambda a, v: 0.5 / v, sympy.sqrt, weight=4, written=False),
        _unary("tan", np.tan, lambda a, v: 1.0 + v * v, sympy.tan, weight=4),
        _unary("tanh", np.tanh, lambda a, v: 1.0 - v * v, sympy.tanh),
    )
}

UNARY_OPERATORS = tuple(sorted(token for token, op in OPERATORS.items() if op.arity == 1))
BINARY_OPERATORS = tuple(sorted(token for token, op in OPERATORS.items() if op.arity == 2))
PAPER_OPERATORS = tuple(sorted(token for token, op in OPERATORS.items() if op.in_paper))
#: SymPy class -> token, for writing SymPy expressions in prefix notation.
TOKEN_OF_SYMPY_CLASS = {op.sympy_class: token for token, op in OPERATORS.items() if op.sympy_class is not None}


def function_tokens(expression: sympy.Expr) -> set[str]:
    """The tokens of the functions that a SymPy ``expression`` applies (``{"sin", "ln"}``;
    ``Abs`` is ``abs``); sums, products and powers are structure, not functions."""
    return {TOKEN_OF_SYMPY_CLASS.get(type(f), type(f).__name__.lower()) for f in expression.atoms(sympy.Function)}
