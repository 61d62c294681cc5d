"""Prefix tokens of a product of powers of the variables (``x0**2*sqrt(x1)/x2``)."""

from __future__ import annotations

from .tokens import variable_token


def _factor(column: int, exponent: float) -> list[str]:
    """Tokens of ``x**|exponent|`` for a positive multiple of one half."""
    whole, half = divmod(round(2 * abs(exponent)), 2)
    x = variable_token(column)
    parts = ([[x]] if whole == 1 else [["pow", x, str(whole)]] if whole > 1 else []) + ([["sqrt", x]] if half else [])
    return _product(parts)


def _product(factors: list[list[str]]) -> list[str]:
    tokens: list[str] = []
    for factor in factors[:-1]:
        tokens += ["mul", *factor]
    return tokens + factors[-1]


def monomial_tokens(exponents: dict[int, float]) -> list[str]:
    """Tokens of the product of each column to its exponent (multiples of one half, none
    0; integers up to 6 for exact polynomials)."""
    numerator = [_factor(j, b) for j, b in sorted(exponents.items()) if b > 0]
    denominator = [_factor(j, b) for j, b in sorted(exponents.items()) if b < 0]
    if not denominator:
        return _product(numerator)
    return ["div", *(_product(numerator) if numerator else ["1"]), *_product(denominator)]
