"""Export targets of a fitted equation: SymPy, LaTeX and a NumPy callable."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from .prefix import prefix_to_sympy

PREDICT_CHUNK_ROWS = 1 << 16


def feature_symbols(names: Sequence[str]) -> list[sympy.Symbol]:
    """One real SymPy symbol per feature name."""
    return [sympy.Symbol(str(name), real=True) for name in names]


def to_sympy(tokens: Sequence[str], constants: Sequence[float], symbols: Sequence[sympy.Symbol]) -> sympy.Expr:
    """The equation with fitted constants, over the user's feature symbols.

    Built as written (``evaluate=False``) with operations on numbers folded: SymPy's
    automatic evaluation of arbitrary network proposals can run for minutes, so it is
    left to the user (``sympy.simplify(reg.sympy())``).
    """
    values = [sympy.Float(float(c)) for c in constants]
    return prefix_to_sympy(tokens, variables=symbols, constants=values, evaluate=False, fold_numbers=True)


def to_latex(expression: sympy.Expr) -> str:
    return sympy.latex(expression)


def numpy_function(expression: sympy.Expr, symbols: Sequence[sympy.Symbol]):
    """A function ``f(X) -> y`` evaluating ``expression`` on the rows of ``X``.

    Compiled once with :func:`sympy.lambdify`; evaluated in chunks of rows so that
    intermediate arrays stay small for very large inputs.
    """
    compiled = sympy.lambdify(list(symbols), expression, modules="numpy")

    def predict(X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape[0], dtype=np.float64)
        with np.errstate(all="ignore"):
            for start in range(0, X.shape[0], PREDICT_CHUNK_ROWS):
                chunk = X[start:start + PREDICT_CHUNK_ROWS]
                out[start:start + len(chunk)] = compiled(*chunk.T)
        return out

    return predict
