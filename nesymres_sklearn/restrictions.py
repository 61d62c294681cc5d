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

from .expression.operators import OPERATORS
from .expression.skeleton import Skeleton
from .search.selection.table import CandidateRows

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

    def kept(self, rows: CandidateRows) -> CandidateRows:
        """The ``rows`` this allows."""
        return (
            rows
            if self.operators is None and self.max_complexity is None
            else rows.where(lambda skeleton, _: self.allows(skeleton))
        )
