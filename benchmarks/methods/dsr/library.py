"""The tokens DSR builds expressions from: one operator table, every other table derived.

A :class:`Library` is the ordered list of tokens of one search: the operators of the
function set, one token per input variable (``x1 .. xn``) and, optionally, ``const``
(a placeholder whose value is fitted by BFGS). The arrays the sampler and the
constraints need (arities, which tokens are terminals, trigonometric, each operator's
inverse, the parent vocabulary) are derived from the table here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy


@dataclass(frozen=True)
class Operator:
    """One operator: its numpy function, its SymPy reading and what the constraints need."""

    name: str
    arity: int
    function: Callable
    sympy: Callable
    inverse: str | None = None
    trig: bool = False


#: The operators of the paper's function sets, unprotected as in its experiments
#: (a non-finite output makes the expression invalid, reward 0).
OPERATORS = {
    op.name: op
    for op in (
        Operator("add", 2, np.add, lambda a, b: a + b),
        Operator("sub", 2, np.subtract, lambda a, b: a - b),
        Operator("mul", 2, np.multiply, lambda a, b: a * b),
        Operator("div", 2, np.divide, lambda a, b: a / b),
        Operator("sin", 1, np.sin, sympy.sin, trig=True),
        Operator("cos", 1, np.cos, sympy.cos, trig=True),
        Operator("exp", 1, np.exp, sympy.exp, inverse="log"),
        Operator("log", 1, np.log, sympy.log, inverse="exp"),
    )
}
#: Function set of the paper's Nguyen experiments ("Koza": no constant token).
NGUYEN_FUNCTION_SET = ("add", "sub", "mul", "div", "sin", "cos", "exp", "log")
CONST = "const"


class Library:
    """The tokens of one search: ``operators``, then ``x1 .. x{n_variables}``, then ``const``.

    Parameters
    ----------
    function_set : sequence of str
        Operator names, keys of :data:`OPERATORS`.
    n_variables : int
        Input variables, one terminal token each.
    const : bool
        Whether the ``const`` placeholder token is available.

    Attributes
    ----------
    names : list of str
        Token names in index order.
    arity : ndarray of int, shape (n_tokens,)
    terminal, trig : ndarray of bool, shape (n_tokens,)
    inverse : ndarray of int, shape (n_tokens,)
        Index of the token that must not be a child of this one, or -1.
    const_index : int
        Index of ``const``, or -1.
    parent_index : ndarray of int, shape (n_tokens,)
        Position of each non-terminal in the parent vocabulary (-1 for terminals);
        the policy observes parents over ``n_parents`` non-terminals plus "empty".
    """

    def __init__(self, function_set=NGUYEN_FUNCTION_SET, n_variables: int = 1, const: bool = False):
        unknown = [name for name in function_set if name not in OPERATORS]
        if unknown:
            raise ValueError(f"Unknown operators {unknown}; expected names from {sorted(OPERATORS)}.")
        if n_variables < 1:
            raise ValueError(f"n_variables must be at least 1, got {n_variables}.")
        if not any(OPERATORS[name].arity == 2 for name in function_set):
            raise ValueError("The function set needs at least one binary operator.")
        self.operators = [OPERATORS[name] for name in dict.fromkeys(function_set)]
        self.n_variables = n_variables
        self.names = [op.name for op in self.operators] + [f"x{i + 1}" for i in range(n_variables)]
        if const:
            self.names.append(CONST)
        n_operators = len(self.operators)
        self.arity = np.array([op.arity for op in self.operators] + [0] * (len(self.names) - n_operators))
        self.terminal = self.arity == 0
        self.trig = np.array([op.trig for op in self.operators] + [False] * (len(self.names) - n_operators))
        index = {name: i for i, name in enumerate(self.names)}
        self.inverse = np.array(
            [index.get(op.inverse, -1) for op in self.operators] + [-1] * (len(self.names) - n_operators)
        )
        self.const_index = index.get(CONST, -1)
        self.parent_index = np.where(self.terminal, -1, np.cumsum(~self.terminal) - 1)
        self.n_parents = int((~self.terminal).sum())

    @property
    def n_tokens(self) -> int:
        return len(self.names)

    def variable(self, token: int) -> int | None:
        """Column of ``X`` read by a variable token, else ``None``."""
        column = token - len(self.operators)
        return column if 0 <= column < self.n_variables else None

    def tokens(self, names) -> list[int]:
        """Indices of token names, e.g. ``["add", "x1", "x1"]``."""
        return [self.names.index(name) for name in names]

    def __repr__(self) -> str:
        return f"Library({self.names})"
