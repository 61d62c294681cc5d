"""The fitted equation as a PyTorch module: each distinct floating-point constant is
an ``nn.Parameter`` (float64), so it can be trained further inside a larger model;
exact numbers (integers, fractions, ``pi``) stay fixed."""

from __future__ import annotations

from collections.abc import Sequence

import sympy
import torch
from torch import nn


class EquationModule(nn.Module):
    """``forward(X)``: the values at the rows of ``X`` (shape ``(n, n_features)``).

    Parameters
    ----------
    expression : sympy.Expr
        The equation, over ``symbols``.
    symbols : sequence of sympy.Symbol
        The features, in the order of ``X``'s columns.
    """

    def __init__(self, expression: sympy.Expr, symbols: Sequence[sympy.Symbol]):
        super().__init__()
        numbers = list(dict.fromkeys(a for a in sympy.preorder_traversal(expression) if isinstance(a, sympy.Float)))
        placeholders = [sympy.Dummy(f"c{k}") for k in range(len(numbers))]
        with sympy.evaluate(False):
            body = expression.xreplace(dict(zip(numbers, placeholders)))
            body = body.replace(sympy.coth, lambda argument: 1 / sympy.tanh(argument))  # no torch.coth
        self.expression = expression
        self.n_features = len(symbols)
        self.constants = nn.Parameter(torch.tensor([float(n) for n in numbers], dtype=torch.float64))
        self._function = sympy.lambdify([*symbols, *placeholders], body, modules="torch", dummify=True)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n_samples, {self.n_features}), got {tuple(X.shape)}.")
        values = self._function(*X.unbind(1), *self.constants.unbind(0))
        return torch.broadcast_to(torch.as_tensor(values, dtype=X.dtype), X.shape[:1])

    def extra_repr(self) -> str:
        return str(self.expression)
