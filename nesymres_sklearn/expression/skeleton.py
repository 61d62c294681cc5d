"""A skeleton: a prefix expression with constant placeholders, checked once.

:class:`Skeleton` is the value that flows from decoding to selection. Its tokens are
validated when it is made; its canonical key (for de-duplication), its compiled
:class:`~.program.PrefixProgram` and its SymPy form are each built once, on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy

from .placeholders import attach_constants
from .prefix import canonical_prefix_unchecked, check_prefix, prefix_to_sympy
from .program import PrefixProgram
from .tokens import CONSTANT, variable_index


@dataclass(frozen=True)
class Skeleton:
    """A complete prefix expression over ``x_1..x_n``, integers, operators and ``c``.

    Parameters
    ----------
    tokens : sequence of str
        Raises :class:`~.prefix.InvalidPrefixError` unless one complete expression.
    """

    tokens: tuple[str, ...]

    def __post_init__(self):
        object.__setattr__(self, "tokens", tuple(self.tokens))
        check_prefix(self.tokens)

    def __getstate__(self) -> dict:
        # Derived forms are rebuilt on first use: SymPy would re-evaluate a pickled tree.
        return {"tokens": self.tokens}

    def __setstate__(self, state: dict) -> None:
        object.__setattr__(self, "tokens", state["tokens"])

    def __len__(self) -> int:
        return len(self.tokens)

    def __str__(self) -> str:
        return " ".join(self.tokens)

    @cached_property
    def n_constants(self) -> int:
        return sum(token == CONSTANT for token in self.tokens)

    @cached_property
    def key(self) -> tuple[str, ...]:
        """Canonical form: equal for skeletons equal up to the order of the operands of
        sums and products."""
        return canonical_prefix_unchecked(self.tokens)

    @cached_property
    def program(self) -> PrefixProgram:
        return PrefixProgram(self.tokens)

    @cached_property
    def sympy(self) -> sympy.Expr:
        """The skeleton over ``x_1..`` and ``c_0..``, as written, numbers folded."""
        return prefix_to_sympy(self.tokens, evaluate=False, fold_numbers=True)

    def substituted(
        self, constants: Sequence[float], replace: Callable[[int], tuple[list[str], list[float]]]
    ) -> tuple[Skeleton, np.ndarray]:
        """Each variable ``x_{j+1}`` replaced by the tokens ``replace(j)`` returns, with
        the constants those hold, and ``constants`` kept for the placeholders: the new
        skeleton and all its constants in token order."""
        tokens: list[str] = []
        values: list[float] = []
        given = iter(np.asarray(constants, dtype=np.float64))
        for token in self.tokens:
            index = variable_index(token)
            if index is None:
                tokens.append(token)
                if token == CONSTANT:
                    values.append(next(given))
            else:
                inner, inner_values = replace(index)
                tokens += inner
                values += inner_values
        return Skeleton(tuple(tokens)), np.array(values, dtype=np.float64)

    def with_constants_attached(self) -> Skeleton:
        """Placeholders attached by the paper's rule (``sin(x) -> c*sin(c*x + c)``)."""
        return Skeleton(attach_constants(self.tokens)[0])

    def expression(self, constants: Sequence, symbols: Sequence[sympy.Symbol], evaluate: bool = False) -> sympy.Expr:
        """The equation with ``constants`` (floats, or exact SymPy numbers) in place of
        the placeholders, over ``symbols``.

        Operations on numbers are folded. By default the tree is built as written
        (``evaluate=False``): SymPy's automatic evaluation of arbitrary network
        proposals can be slow, so it is kept for the selected equation, where the
        coefficients that like terms cancel to rounding are dropped and exponentials
        merged (:func:`.prefix.prefix_to_sympy`'s ``rounding_dropped``).
        """
        values = [c if isinstance(c, sympy.Basic) else sympy.Float(float(c)) for c in constants]
        return prefix_to_sympy(
            self.tokens, variables=symbols, constants=values, evaluate=evaluate, fold_numbers=True,
            rounding_dropped=evaluate,
        )  # fmt: skip
