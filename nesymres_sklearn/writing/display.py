"""How a fitted equation reads: its floating-point constants to a few significant
digits, and the fitted estimator's text and HTML summaries (the selected equation and
the top rows of its candidate table). ``expression_`` itself keeps full precision."""

from __future__ import annotations

import html
from numbers import Integral
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    import sympy

PRECISION = 4
TOP_ROWS = 5
COLUMNS = ["expression", "loss", "complexity", "origin"]


class ReadableMixin:
    """``equation(precision)`` and the fitted estimator's summaries, for an estimator
    with ``sympy(index)``, ``equations_`` and ``best_index_``; unfitted, scikit-learn's."""

    def equation(self, precision=PRECISION, index=None) -> sympy.Expr:
        """The fitted equation (or row ``index`` of ``equations_``) with its floating-point
        constants to ``precision`` significant digits (``expression_`` keeps them all); a
        list with several targets."""
        expression = self.sympy(index)
        if isinstance(expression, list):
            return [rounded(e, precision) for e in expression]
        return rounded(expression, precision)

    def __repr__(self, N_CHAR_MAX=700):
        parameters = super().__repr__(N_CHAR_MAX)
        if not hasattr(self, "equations_"):
            return parameters
        if isinstance(self.equations_, list):  # several targets
            summaries = [summary_text(f"target {j}:", *fitted) for j, fitted in enumerate(self._targets())]
            return "\n".join([parameters, *summaries])
        return summary_text(parameters, self.equations_, self.best_index_)

    def _html_repr(self):
        diagram = super()._html_repr()
        if not hasattr(self, "equations_"):
            return diagram
        if isinstance(self.equations_, list):  # several targets
            return "".join([diagram, *(summary_html(f"<p>Target {j}:</p>", *t) for j, t in enumerate(self._targets()))])
        return summary_html(diagram, self.equations_, self.best_index_)

    def _targets(self) -> list[tuple[pd.DataFrame, int]]:
        return list(zip(self.equations_, self.best_index_))


def rounded(expression: sympy.Expr, precision: int = PRECISION) -> sympy.Expr:
    """``expression`` with every floating-point number to ``precision`` significant
    digits; exact numbers (integers, fractions, ``pi``) and the tree as written stay."""
    if not isinstance(precision, Integral) or isinstance(precision, bool) or precision < 1:
        raise ValueError(f"precision must be a positive number of significant digits, got {precision!r}.")
    import sympy  # with the fitted equation, not when the estimator is imported

    # rounded in decimal, then held at that precision (rounding in binary first would round twice)
    numbers = {
        number: sympy.Float(f"{float(number):.{precision}g}", int(precision))
        for number in expression.atoms(sympy.Float)
    }
    with sympy.evaluate(False):
        return expression.xreplace(numbers)


def top_rows(equations: pd.DataFrame, precision: int = PRECISION, rows: int = TOP_ROWS) -> pd.DataFrame:
    """The first ``rows`` of ``equations`` (best first), their expressions rounded, as text."""
    head = equations.head(rows)[COLUMNS].copy()
    head["expression"] = [str(rounded(expression, precision)) for expression in head["expression"]]
    head["loss"] = [f"{loss:.{precision}g}" for loss in head["loss"]]
    return head


def summary_text(parameters: str, equations: pd.DataFrame, best_index: int) -> str:
    """``parameters`` (scikit-learn's repr), the selected equation rounded and the top
    of ``equations``."""
    selected = rounded(equations.loc[best_index, "expression"])
    return (
        f"{parameters}\nequation (row {best_index} of equations_, {PRECISION} significant digits): {selected}\n"
        f"{top_rows(equations).to_string()}"
    )


def summary_html(diagram: str, equations: pd.DataFrame, best_index: int) -> str:
    """scikit-learn's HTML ``diagram`` followed by the selected equation rounded and the
    top of ``equations``."""
    selected = html.escape(str(rounded(equations.loc[best_index, "expression"])))
    return (
        f"{diagram}<div><p>Equation (row {best_index} of <code>equations_</code>, {PRECISION} significant digits): "
        f"<code>{selected}</code></p>{top_rows(equations).to_html()}</div>"
    )
