"""The forms a user allows: ``operators=`` (names from the operator table) and
``max_complexity=`` (prefix tokens, the ``complexity`` of ``equations_``).

Candidates outside them are set aside before Operon and the selection; Operon searches
with the allowed operators only (:func:`.operon.trees.operon_symbols`). The names are
the tokens of the operator table, as ``equations_``'s skeletons are written: a power
``x0**2`` and the network's ``x0/x1`` (``x0*x1**-1``) use ``pow``, Operon's quotients
``div``, ``x0 - x1`` only ``add`` and ``mul``, ``log`` is ``ln``.

The names users of PySR and Operon type are accepted as aliases (:data:`ALIASES`):
``+``, ``*``, ``log``, and ``-``/``sub`` (``add`` and ``mul``: ``x0 - x1`` is
``x0 + (-1)*x1``), ``/`` (``div`` and ``pow``: the network writes ``x0/x1`` as
``x0*x1**-1``), ``^``/``square`` (``pow``: any power, not only squares).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .expression.operators import OPERATORS
from .expression.skeleton import Skeleton
from .expression.tokens import INTEGERS, variable_token
from .search.fitted import CandidateRows, Fitted, mse
from .search.problem import Problem

#: The plain rows (:meth:`Restrictions.plain_rows`) are made for up to this many features.
PLAIN_FEATURES = 10

#: The names users of PySR and Operon type, as the operator table's names.
ALIASES: dict[str, tuple[str, ...]] = {
    "+": ("add",),
    "-": ("add", "mul"),
    "sub": ("add", "mul"),
    "*": ("mul",),
    "/": ("div", "pow"),
    "^": ("pow",),
    "square": ("pow",),
    "log": ("ln",),
}


@dataclass(frozen=True)
class Restrictions:
    """The allowed ``operators`` (``None``: all of the table) and the largest
    complexity (``None``: no bound)."""

    operators: frozenset[str] | None = None
    max_complexity: int | None = None

    @classmethod
    def parse(cls, operators, max_complexity: int | None) -> Restrictions:
        """``operators`` checked against the operator table and its :data:`ALIASES`
        (written as the table's names); an unknown name is an error that lists the known ones."""
        if operators is None:
            return cls(None, max_complexity)
        if len(operators) == 0:
            raise ValueError(
                "operators is empty: a law needs at least one operator. Name the ones to allow "
                "(operators=['add', 'mul', 'sin']), or pass operators=None for all that the network knows."
            )
        unknown = [name for name in operators if name not in OPERATORS and name not in ALIASES]
        if unknown:
            raise ValueError(
                f"operators holds {', '.join(map(repr, unknown))}, which the operator table does not know; the "
                f"known operators are {', '.join(sorted(OPERATORS))} (a power is 'pow', a logarithm 'ln'), "
                f"and the aliases {' '.join(ALIASES)}."
            )
        return cls(frozenset(token for name in operators for token in ALIASES.get(name, (name,))), max_complexity)

    def allows(self, skeleton: Skeleton) -> bool:
        """Whether ``skeleton`` uses allowed operators only, within the complexity."""
        if self.max_complexity is not None and len(skeleton) > self.max_complexity:
            return False
        return self.operators is None or all(t not in OPERATORS or t in self.operators for t in skeleton.tokens)

    @property
    def rescales(self) -> bool:
        """Whether the search may divide the data by powers of ten (:mod:`.search.scaling`):
        writing its law back over the raw features multiplies by them, so only where
        ``mul`` is allowed (``operators=["ln"]`` finds ``log(x0)``, not ``log(x0/10)``)."""
        return self.operators is None or "mul" in self.operators

    def plain_rows(self, problem: Problem) -> CandidateRows:
        """With ``operators`` given, each allowed operator applied to the features as they
        are (``ln(x_1)``, ``x_1 + x_2``), and ``pow`` to each feature and each integer
        of the vocabulary but 0 and 1 (``x_1**3``, ``x_1**-1``), as ``baseline`` rows: the
        network attaches constants (``c*ln(c*x_1 + c)``, ``c*x_1**3``) that need ``add``
        and ``mul``, which a narrow set (``["ln"]``, ``["pow"]``) excludes. Up to
        ``PLAIN_FEATURES`` features."""
        rows = CandidateRows()
        if self.operators is None or problem.X.shape[1] > PLAIN_FEATURES:
            return rows
        variables = [variable_token(j) for j in range(problem.X.shape[1])]
        allowed = sorted(self.operators)
        forms = [(op, v) for op in allowed if OPERATORS[op].arity == 1 for v in variables]
        forms += [(op, a, b) for op in allowed if OPERATORS[op].arity == 2 for a in variables for b in variables]
        if "pow" in self.operators:
            forms += [("pow", v, str(k)) for v in variables for k in INTEGERS if k not in (0, 1)]
        for tokens in forms:
            skeleton = Skeleton(tokens)
            if self.allows(skeleton):
                loss = mse(skeleton.program, problem.X, problem.y, np.empty(0), problem.weights)
                rows.add(Fitted(skeleton, np.empty(0), loss), origin="baseline")
        return rows

    def kept(self, rows: CandidateRows) -> CandidateRows:
        """The ``rows`` this allows."""
        return (
            rows
            if self.operators is None and self.max_complexity is None
            else rows.where(lambda skeleton, *_: self.allows(skeleton))
        )
