"""Absolute values that the data do not need, written as the signed law a person means.

A fitted program can hold ``abs(f)`` or ``sqrt(f**2)`` (Operon's ``abs``, the network's
``sqrt(x**2)``, a power ``(f**2)**c`` whose ``c`` became ``1/2``) where ``f`` keeps one
sign on every training point: there the law is ``f`` (or ``-f``), and ``|f|`` is only a
different law where ``f`` changes sign, outside the data. :func:`signed` rewrites the
selected row's skeleton so, and the estimator predicts with the rewritten skeleton: the
printed law and ``predict`` stay one law. Fixed work, no clock.
"""

from __future__ import annotations

import numpy as np
import sympy

from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT, token_arity
from .export import evaluate


def _ends(tokens: tuple[str, ...]) -> list[int]:
    """``ends[i]``: the position after the subtree that starts at ``i``."""
    ends = [0] * len(tokens)
    stack: list[int] = []  # ends of the subtrees already read, right to left
    for i in range(len(tokens) - 1, -1, -1):
        end = i + 1
        for _ in range(token_arity(tokens[i])):
            end = stack.pop()
        ends[i] = end
        stack.append(end)
    return ends


def _absolute(tokens: tuple[str, ...], ends: list[int], i: int, exact: list) -> tuple[int, int, int] | None:
    """``(start, end, cut)`` when the subtree at ``i`` is ``|f|``: ``f`` spans
    ``tokens[start:end]``, and the subtree ends at ``cut``; else ``None``."""
    token = tokens[i]
    if token == "abs":
        return i + 1, ends[i + 1], ends[i]
    square = i + 1 if token == "sqrt" else None
    if token == "pow" and tokens[ends[i + 1]] == CONSTANT:  # (f**2)**c with c written 1/2
        position = tokens[: ends[i + 1]].count(CONSTANT)
        written = exact[position] if position < len(exact) else None
        if isinstance(written, sympy.Basic) and written == sympy.Rational(1, 2):
            square = i + 1
    if square is None or tokens[square] != "pow":
        return None
    base_end = ends[square + 1]
    if tokens[base_end] != "2":
        return None
    return square + 1, base_end, ends[i]


def signed(skeleton: Skeleton, values: np.ndarray, exact: list, X: np.ndarray) -> tuple[Skeleton, np.ndarray, list]:
    """``skeleton`` with each ``|f|`` (``abs(f)``, ``sqrt(f**2)``, ``(f**2)**(1/2)``)
    whose ``f`` is finite and of one sign on every row of ``X`` written ``f`` or ``-f``,
    and its constants (``values``, ``exact``) as they stand in the new tokens."""
    tokens, values, exact = skeleton.tokens, np.asarray(values, dtype=np.float64), list(exact)
    i = 0
    while i < len(tokens):
        ends = _ends(tokens)
        found = _absolute(tokens, ends, i, exact)
        if found is None:
            i += 1
            continue
        start, end, cut = found
        before, inside = tokens[:start].count(CONSTANT), tokens[start:end].count(CONSTANT)
        with np.errstate(all="ignore"):
            f = evaluate(Skeleton(tokens[start:end]), values[before : before + inside], X)
        if not np.all(np.isfinite(f)) or not (np.all(f >= 0) or np.all(f <= 0)):
            i += 1
            continue
        sign = () if np.all(f >= 0) else ("mul", "-1")
        first, last = tokens[:i].count(CONSTANT), tokens[:cut].count(CONSTANT)
        dropped = [k for k in range(first, last) if not before <= k < before + inside]  # (f**2)**c's 1/2
        keep = [k for k in range(len(values)) if k not in dropped]
        tokens = (*tokens[:i], *sign, *tokens[start:end], *tokens[cut:])
        values, exact = values[keep], [exact[k] for k in keep]
    if tokens == skeleton.tokens:
        return skeleton, values, exact
    return Skeleton(tokens), values, exact
