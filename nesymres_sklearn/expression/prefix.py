"""Prefix notation <-> SymPy, and skeletonisation (numbers -> constant placeholder).

Prefix conventions follow the paper's training targets: n-ary sums and products are
right-nested binary chains, ``x - y`` is ``add x mul -1 y``, a square root is ``sqrt``,
other powers are ``pow base exponent`` and a rational ``p/q`` is ``div p q``.
Constant placeholders ``c`` become the SymPy symbols ``c_0, c_1, ...`` in prefix order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from .operators import OPERATORS, TOKEN_OF_SYMPY_CLASS
from .tokens import CONSTANT, INTEGERS, token_arity, variable_index


class InvalidPrefixError(ValueError):
    """A token sequence that is not one complete prefix expression."""


def check_prefix(tokens: Sequence[str]) -> None:
    """Raise :class:`InvalidPrefixError` unless ``tokens`` is one complete expression."""
    open_slots = 1
    for position, token in enumerate(tokens):
        arity = token_arity(token)
        if arity is None:
            raise InvalidPrefixError(f"Token {token!r} cannot appear in an expression.")
        if open_slots == 0:
            raise InvalidPrefixError(f"Leftover tokens from position {position}: {list(tokens)}.")
        open_slots += arity - 1
    if open_slots != 0:
        raise InvalidPrefixError(f"Incomplete expression: {list(tokens)}.")


def is_valid_prefix(tokens: Sequence[str]) -> bool:
    try:
        check_prefix(tokens)
    except InvalidPrefixError:
        return False
    return True


def constant_symbols(n: int) -> list[sympy.Symbol]:
    """The placeholder symbols ``c_0 .. c_{n-1}``."""
    return [sympy.Symbol(f"c_{i}", real=True) for i in range(n)]


def variable_symbols(n: int) -> list[sympy.Symbol]:
    """The variable symbols ``x_1 .. x_n`` used inside skeletons."""
    return [sympy.Symbol(f"x_{i + 1}", real=True) for i in range(n)]


# A float coefficient that the collection of like terms leaves at this fraction of the
# magnitudes it summed is their rounding (a few float64 ulps).
CANCELLED = 16 * float(np.finfo(np.float64).eps)


def prefix_to_sympy(
    tokens: Sequence[str],
    variables: Sequence[sympy.Symbol] | None = None,
    constants: Sequence[sympy.Expr] | None = None,
    evaluate: bool = True,
    fold_numbers: bool = False,
    rounding_dropped: bool = False,
) -> sympy.Expr:
    """SymPy expression of a prefix sequence.

    Parameters
    ----------
    tokens : sequence of str
    variables : sequence of sympy.Symbol, optional
        ``variables[i]`` stands for ``x_{i+1}`` (default: symbols named ``x_1, ...``).
    constants : sequence of sympy.Expr, optional
        Values of the placeholders, left to right (default: symbols ``c_0, c_1, ...``).
    evaluate : bool, default=True
        SymPy's automatic evaluation; with ``False`` the tree is built as written.
    fold_numbers : bool, default=False
        Replace every operation on numbers, except the exact arithmetic of rationals,
        by its floating-point value (NaN where undefined). SymPy's exact evaluation of nested functions of numbers
        (``ln(ln(-3))``) can take minutes; inference folds them.
    rounding_dropped : bool, default=False
        With ``evaluate``: a product's exponentials as one (``exp(a)*exp(b) = exp(a + b)``),
        and a coefficient that SymPy's collection of like terms leaves at float64's
        rounding of the coefficients it summed (``0.01124*x - 0.01124*x = 1.4e-17*x``)
        dropped: 0 in their precision.
    """
    check_prefix(tokens)
    if constants is None:
        constants = constant_symbols(sum(token == CONSTANT for token in tokens))
    constant_values = iter(constants)
    leaves = []
    for token in tokens:  # constants are numbered left to right
        if token == CONSTANT:
            leaves.append(next(constant_values))
        elif (index := variable_index(token)) is not None:
            if variables is None:
                leaves.append(sympy.Symbol(token, real=True))
            elif index < len(variables):
                leaves.append(variables[index])
            else:
                raise InvalidPrefixError(f"Variable {token} has no symbol (only {len(variables)} given).")
        elif token_arity(token) == 0:
            leaves.append(sympy.Integer(int(token)))
        else:
            leaves.append(None)
    stack: list[sympy.Expr] = []
    with sympy.evaluate(evaluate):
        for token, leaf in zip(reversed(tokens), reversed(leaves)):
            if leaf is not None:
                stack.append(leaf)
            else:
                args = [stack.pop() for _ in range(OPERATORS[token].arity)]
                value = _apply(token, args, fold_numbers)
                if evaluate and rounding_dropped:
                    value = _rounding_dropped(value, args) if token == "add" else _exponentials_merged(value)
                stack.append(value)
    return stack[0]


def _rounding_dropped(total: sympy.Expr, terms: Sequence[sympy.Expr]) -> sympy.Expr:
    """``total``, the sum of ``terms`` (up to sign), without the float coefficients that
    are below ``CANCELLED`` times the sum of the magnitudes of the coefficients of the
    same monomial in ``terms``."""
    if len(terms) < 2:
        return total
    summed: dict[sympy.Expr, float] = {}
    for term in terms:
        for monomial, coefficient in term.as_coefficients_dict().items():
            summed[monomial] = summed.get(monomial, 0.0) + abs(complex(coefficient))
    collected = total.as_coefficients_dict()
    kept = [
        coefficient * monomial
        for monomial, coefficient in collected.items()
        if not (coefficient.is_Float and abs(float(coefficient)) <= CANCELLED * summed.get(monomial, 0.0))
    ]
    return total if len(kept) == len(collected) else sympy.Add(*kept)


def _exponentials_merged(product: sympy.Expr) -> sympy.Expr:
    """``product`` with its ``exp`` factors as one (their exponents summed by :func:`_rounding_dropped`)."""
    if not product.is_Mul:
        return product
    exponentials = [factor for factor in product.args if isinstance(factor, sympy.exp)]
    if len(exponentials) < 2:
        return product
    exponents = [factor.args[0] for factor in exponentials]
    merged = sympy.exp(_rounding_dropped(sympy.Add(*exponents), exponents))
    return sympy.Mul(*(factor for factor in product.args if not isinstance(factor, sympy.exp)), merged)


def _apply(token: str, args: list[sympy.Expr], fold_numbers: bool) -> sympy.Expr:
    numbers = all(arg.is_number for arg in args)
    exact = token in ("add", "mul", "div") and all(arg.is_Rational for arg in args)
    if fold_numbers and numbers and not exact:
        with np.errstate(all="ignore"):
            numbers = [_real_value(arg) for arg in args]
            value = OPERATORS[token].numpy(*numbers)
        return sympy.Float(float(value)) if np.isfinite(value) else sympy.nan
    return OPERATORS[token].sympy(*args)


def _real_value(number: sympy.Expr) -> np.float64:
    """A SymPy number as a float; NaN when it is not real (or SymPy cannot tell)."""
    try:
        return np.float64(float(number))
    except (TypeError, ValueError, ArithmeticError):
        return np.float64(np.nan)


def canonical_prefix(tokens: Sequence[str]) -> tuple[str, ...]:
    """The prefix with the operands of every ``add`` and ``mul`` in sorted order,
    so that skeletons equal up to commutativity compare equal."""
    check_prefix(tokens)
    return canonical_prefix_unchecked(tokens)


def canonical_prefix_unchecked(tokens: Sequence[str]) -> tuple[str, ...]:
    """:func:`canonical_prefix` of tokens already known to be one complete expression."""
    stack: list[tuple[str, ...]] = []
    for token in reversed(tokens):
        arity = token_arity(token)
        args = [stack.pop() for _ in range(arity)]
        if token in ("add", "mul"):
            args.sort()
        stack.append((token, *(t for arg in args for t in arg)))
    return stack[0]


def sympy_to_prefix(expr: sympy.Expr, skeleton: bool = False) -> list[str]:
    """Prefix tokens of a SymPy expression over the symbols ``x_1, x_2, ...``.

    With ``skeleton=True`` every number that is not a vocabulary integer (or a ratio
    of two of them) and every symbol whose name starts with ``c`` become the
    placeholder ``c``; otherwise such numbers raise ``ValueError``.
    """
    tokens: list[str] = []
    _write_prefix(sympy.sympify(expr), tokens, [] if skeleton else None)
    return tokens


def skeletonize(expr: sympy.Expr) -> list[str]:
    """Prefix skeleton of an expression: its numeric constants become ``c``."""
    return sympy_to_prefix(expr, skeleton=True)


def skeletonize_with_numbers(expr: sympy.Expr) -> tuple[list[str], list[float]]:
    """:func:`skeletonize`, and the value each placeholder stood for, in token order
    (1 for a symbol ``c...``)."""
    tokens: list[str] = []
    numbers: list[float] = []
    _write_prefix(sympy.sympify(expr), tokens, numbers)
    return tokens, numbers


def _write_number(number: sympy.Expr, tokens: list[str], numbers: list | None) -> None:
    if number.is_Integer and int(number) in INTEGERS:
        tokens.append(str(int(number)))
    elif number.is_Rational and int(number.p) in INTEGERS and int(number.q) in INTEGERS:
        tokens.extend(["div", str(int(number.p)), str(int(number.q))])
    elif numbers is not None and number.is_finite and number.is_real:
        tokens.append(CONSTANT)
        numbers.append(float(number))
    else:
        raise ValueError(f"The number {number} has no token; skeletonize the expression first.")


def _write_chain(operator: str, args: Sequence[sympy.Expr], tokens: list[str], numbers: list | None) -> None:
    for arg in args[:-1]:
        tokens.append(operator)
        _write_prefix(arg, tokens, numbers)
    _write_prefix(args[-1], tokens, numbers)


def _write_prefix(expr: sympy.Expr, tokens: list[str], numbers: list | None) -> None:
    if expr.is_Symbol:
        name = expr.name
        if variable_index(name) is not None:
            tokens.append(name)
        elif numbers is not None and name.startswith(CONSTANT):
            tokens.append(CONSTANT)
            numbers.append(1.0)
        else:
            raise ValueError(f"Symbol {name!r} is neither a variable x_i nor a constant.")
    elif expr.is_Number or expr.is_NumberSymbol:
        _write_number(expr, tokens, numbers)
    elif expr.is_Add:
        _write_chain("add", expr.args, tokens, numbers)
    elif expr.is_Mul:
        _write_chain("mul", expr.args, tokens, numbers)
    elif expr.is_Pow:
        base, exponent = expr.args
        if exponent == sympy.Rational(1, 2):
            tokens.append("sqrt")
            _write_prefix(base, tokens, numbers)
        else:
            tokens.append("pow")
            _write_prefix(base, tokens, numbers)
            _write_prefix(exponent, tokens, numbers)
    elif expr.func in TOKEN_OF_SYMPY_CLASS:
        tokens.append(TOKEN_OF_SYMPY_CLASS[expr.func])
        _write_prefix(expr.args[0], tokens, numbers)
    else:
        raise ValueError(f"Cannot write {expr} ({expr.func.__name__}) with the vocabulary.")
