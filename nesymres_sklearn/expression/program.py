"""Vectorised NumPy evaluation of prefix expressions, with exact constant gradients.

A :class:`PrefixProgram` is compiled once from the tokens (no SymPy, no ``exec``) and
evaluated on a whole array of points per call. ``value_and_jacobian`` propagates
derivatives with respect to the constant placeholders alongside the values
(forward-mode differentiation), which gives the constant fitting exact Jacobians at the cost of a
few extra array operations per node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .operators import OPERATORS
from .prefix import check_prefix
from .tokens import CONSTANT, token_arity, variable_index


class PrefixProgram:
    """A prefix expression compiled for repeated vectorised evaluation.

    Parameters
    ----------
    tokens : sequence of str
        A complete prefix expression over ``x_1..x_n``, integers, operators and ``c``.
    """

    def __init__(self, tokens: Sequence[str]):
        check_prefix(tokens)
        self.tokens = list(tokens)
        self.n_constants = sum(token == CONSTANT for token in tokens)
        # Instructions in reverse prefix order run on a stack.
        instructions = []
        constant_index = self.n_constants
        for token in reversed(self.tokens):
            if token == CONSTANT:
                constant_index -= 1
                instructions.append(("constant", constant_index))
            elif (index := variable_index(token)) is not None:
                instructions.append(("variable", index))
            elif token_arity(token) == 0:
                instructions.append(("number", np.float64(token)))
            else:
                instructions.append(("operator", token))
        self._instructions = instructions
        used = [i for kind, i in instructions if kind == "variable"]
        self.n_variables = max(used) + 1 if used else 0

    def __repr__(self) -> str:
        return f"PrefixProgram({' '.join(self.tokens)!r})"

    def __call__(self, X: np.ndarray, constants: Sequence[float] = ()) -> np.ndarray:
        """Values at the rows of ``X`` (shape ``(n, d)``); NaN where undefined."""
        return self._run(X, constants, with_jacobian=False)[0]

    def value_and_jacobian(self, X: np.ndarray, constants: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Values, shape ``(n,)``, and their derivatives by the constants, ``(n, k)``."""
        values, jacobian = self._run(X, constants, with_jacobian=True)
        if jacobian is None:
            jacobian = np.zeros((self.n_constants, 1))
        return values, np.broadcast_to(jacobian, (self.n_constants, len(values))).T

    def _run(self, X, constants, with_jacobian):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] < self.n_variables:
            raise ValueError(f"X must have shape (n_points, >= {self.n_variables}), got {X.shape}.")
        constants = np.asarray(constants, dtype=np.float64)
        if constants.shape != (self.n_constants,):
            raise ValueError(f"Expected {self.n_constants} constants, got shape {constants.shape}.")
        stack = []
        with np.errstate(all="ignore"):
            for kind, arg in self._instructions:
                if kind == "variable":
                    stack.append((X[:, arg], None))
                elif kind == "number":
                    stack.append((arg, None))
                elif kind == "constant":
                    jacobian = None
                    if with_jacobian:  # derivatives by the constants, shape (k, n) or (k, 1)
                        jacobian = np.zeros((self.n_constants, 1))
                        jacobian[arg, 0] = 1.0
                    stack.append((constants[arg], jacobian))
                else:
                    operator = OPERATORS[arg]
                    args = [stack.pop() for _ in range(operator.arity)]
                    inputs = [a for a, _ in args]
                    v = operator.numpy(*inputs)
                    jv = None
                    for (_, ja), derivative in zip(args, operator.derivatives):
                        if ja is not None:
                            term = derivative(*inputs, v) * ja
                            jv = term if jv is None else jv + term
                    stack.append((v, jv))
        values, jacobian = stack.pop()
        return np.broadcast_to(np.asarray(values, dtype=np.float64), (X.shape[0],)), jacobian
