"""Export targets of a fitted equation: LaTeX and a NumPy callable.

The SymPy form is :meth:`.skeleton.Skeleton.expression`; predictions use the same
compiled :class:`~.program.PrefixProgram` that fitted the constants.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from .skeleton import Skeleton

PREDICT_CHUNK_ROWS = 1 << 16


def feature_symbols(names: Sequence[str]) -> list[sympy.Symbol]:
    """One real SymPy symbol per feature name."""
    return [sympy.Symbol(str(name), real=True) for name in names]


def to_latex(expression: sympy.Expr) -> str:
    return sympy.latex(expression)


def evaluate(skeleton: Skeleton, constants: Sequence[float], X: np.ndarray) -> np.ndarray:
    """Values of the fitted equation at the rows of ``X``, in chunks of rows so that
    intermediate arrays stay small for very large inputs."""
    out = np.empty(X.shape[0], dtype=np.float64)
    for start in range(0, X.shape[0], PREDICT_CHUNK_ROWS):
        chunk = X[start : start + PREDICT_CHUNK_ROWS]
        out[start : start + len(chunk)] = skeleton.program(chunk, constants)
    return out
