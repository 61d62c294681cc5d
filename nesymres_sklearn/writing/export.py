"""Export targets of a fitted equation: feature symbols, LaTeX and NumPy values.

The SymPy form is :meth:`.skeleton.Skeleton.expression`; predictions use the same
compiled :class:`~.program.PrefixProgram` that fitted the constants.

Feature names become symbol names as they are when they read back as that symbol
(``x0``, ``mass``). Any other name (``"x-1"``, ``"a b"``, ``"2"``, or one that SymPy
reads as a function or constant: ``"sin"``, ``"E"``, ``"lambda"``) is quoted in
backticks, so ``sin*sin(x)`` prints as ```sin`*sin(x)``; a backtick inside a name
is doubled.
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import sympy

from ..expression.skeleton import Skeleton

PREDICT_CHUNK_ROWS = 1 << 16


QUOTE = "`"
_LATEX_SPECIALS = {c: "\\" + c for c in "#$%&_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


@lru_cache(maxsize=4096)
def _reads_back_as_symbol(name: str) -> bool:
    """Whether SymPy reads ``name`` as the symbol of that name (cached: parsing takes
    ~2 ms, and the same feature names come back fit after fit)."""
    if not name.isidentifier() or keyword.iskeyword(name):
        return False
    try:
        return sympy.sympify(name) == sympy.Symbol(name)
    except (sympy.SympifyError, SyntaxError, TypeError, AttributeError):
        return False


def symbol_name(feature_name) -> str:
    """The printed name of a feature: as is, or quoted (see the module docstring)."""
    name = str(feature_name)
    if _reads_back_as_symbol(name):
        return name
    return QUOTE + name.replace(QUOTE, QUOTE * 2) + QUOTE


def feature_symbols(names: Sequence) -> list[sympy.Symbol]:
    """One real SymPy symbol per feature name, named by :func:`symbol_name`."""
    return [sympy.Symbol(symbol_name(name), real=True) for name in names]


def to_latex(expression: sympy.Expr) -> str:
    """LaTeX of ``expression``; quoted feature names are set upright as text, and a
    root of a number held whole (``1/sqrt(2*pi)``, :func:`.readable.whole_roots`)
    stays whole (SymPy's printer would write ``\\sqrt{2} \\sqrt{\\pi}``)."""
    names, roots = {}, {}
    for power in expression.atoms(sympy.Pow):
        if power.base.is_Mul and not power.free_symbols and abs(power.exp) == sympy.S.Half:
            root = sympy.Dummy()
            names[root] = r"\sqrt{" + sympy.latex(power.base) + "}"
            roots[power] = root ** sympy.sign(power.exp)
    expression = expression.xreplace(roots) if roots else expression
    for symbol in expression.free_symbols:
        if symbol.name.startswith(QUOTE) and symbol.name.endswith(QUOTE) and len(symbol.name) > 1:
            raw = symbol.name[1:-1].replace(QUOTE * 2, QUOTE)
            names[symbol] = r"\text{" + "".join(_LATEX_SPECIALS.get(c, c) for c in raw) + "}"
    return sympy.latex(expression, symbol_names=names)


def evaluate(skeleton: Skeleton, constants: Sequence[float], X: np.ndarray) -> np.ndarray:
    """Values of the fitted equation at the rows of ``X``, in chunks of rows so that
    intermediate arrays stay small for very large inputs."""
    out = np.empty(X.shape[0], dtype=np.float64)
    for start in range(0, X.shape[0], PREDICT_CHUNK_ROWS):
        chunk = X[start : start + PREDICT_CHUNK_ROWS]
        out[start : start + len(chunk)] = skeleton.program(chunk, constants)
    return out
