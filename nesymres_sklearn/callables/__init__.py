"""The fitted equation as a function of the user's numerical stack, through SymPy's
``lambdify``: NumPy, JAX (``jax.numpy``) or a PyTorch ``nn.Module`` whose constants
are parameters (:mod:`.torch_module`). Each backend is imported when asked for."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import sympy

BACKENDS = ("numpy", "torch", "jax")


class ExportMixin:
    """``to_callable`` for an estimator with ``sympy(index)`` and the feature symbols
    ``_symbols``."""

    def to_callable(self, backend="numpy", index=None):
        """The fitted equation (or row ``index`` of ``equations_``) as ``f(X)`` in
        ``backend``: ``"numpy"`` or ``"jax"``, a function of an array of shape
        ``(n_samples, n_features_in_)``; ``"torch"``, an ``nn.Module`` whose
        floating-point constants are parameters. With several targets, a list of them."""
        expression = self.sympy(index)
        if isinstance(expression, list):
            return [column.to_callable(backend, index) for column in self.estimators_]
        return to_callable(self._writer.numeric(expression), self._writer.symbols, backend)


def to_callable(expression: sympy.Expr, symbols: Sequence[sympy.Symbol], backend: str = "numpy") -> Callable:
    """``expression`` over ``symbols`` as ``f(X)``: ``X`` of shape ``(n, len(symbols))``
    in, the ``n`` values out, in ``backend``'s arrays."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}.")
    imported(backend)
    if backend == "torch":
        from .torch_module import EquationModule

        return EquationModule(expression, symbols)
    import sympy  # with the fitted equation, not when the estimator is imported

    function = sympy.lambdify(list(symbols), expression, modules=backend, dummify=True)
    xp = np if backend == "numpy" else importlib.import_module("jax.numpy")
    n_features = len(symbols)

    def equation(X):
        X = xp.asarray(X)
        if X.ndim != 2 or X.shape[1] != n_features:
            raise ValueError(f"X must have shape (n_samples, {n_features}), got {X.shape}.")
        return xp.broadcast_to(function(*(X[:, j] for j in range(n_features))), X.shape[:1])

    equation.__doc__ = f"{expression} at the rows of X (shape (n_samples, {n_features})), with {backend}."
    return equation


def imported(backend: str):
    """The backend's module, or an ``ImportError`` that says how to install it."""
    try:
        return importlib.import_module(backend)
    except ModuleNotFoundError as error:
        if error.name != backend:
            raise
        raise ImportError(
            f'to_callable(backend="{backend}") needs {backend}, which is not installed: pip install {backend}'
        ) from None
