"""Tokens of prefix expressions: operators, variables ``x_i``, integers and ``c``."""

from __future__ import annotations

import re
from functools import cache

from .operators import OPERATORS

CONSTANT = "c"
INTEGERS = tuple(range(-3, 6))

_VARIABLE = re.compile(r"^x_([1-9][0-9]*)$")


def variable_token(index: int) -> str:
    """Token of the ``index``-th variable, counting from 0 (``0 -> "x_1"``)."""
    return f"x_{index + 1}"


@cache
def variable_index(token: str) -> int | None:
    """Column index of a variable token (``"x_1" -> 0``), ``None`` otherwise."""
    match = _VARIABLE.match(token)
    return int(match.group(1)) - 1 if match else None


@cache
def token_arity(token: str) -> int | None:
    """Arity of an expression token (0 for leaves), ``None`` for non-expression tokens."""
    if token in OPERATORS:
        return OPERATORS[token].arity
    if token == CONSTANT or _VARIABLE.match(token):
        return 0
    try:
        int(token)
    except ValueError:
        return None
    return 0
