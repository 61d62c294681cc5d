"""The paper's rule for attaching constant placeholders to a skeleton (appendix B).

Every unary operator is multiplied by a placeholder (``sin(a) -> c*sin(a)``) and every
variable gets a multiplicative and an additive placeholder (``x -> c*x + c``).
Placeholders already present are kept. Each placeholder has a *neutral* value (1 for
multiplicative and pre-existing ones, 0 for additive ones) that leaves the expression
unchanged; pretraining sets the constants it does not sample to these values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .operators import UNARY_OPERATORS
from .prefix import check_prefix
from .tokens import CONSTANT, token_arity, variable_index

MULTIPLICATIVE, ADDITIVE, EXISTING = "mul", "add", "existing"
NEUTRAL_VALUE = {MULTIPLICATIVE: 1.0, ADDITIVE: 0.0, EXISTING: 1.0}


def attach_constants(tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """Attach placeholders to a prefix skeleton.

    Returns
    -------
    tokens : list of str
        The prefix skeleton with placeholders attached.
    kinds : list of str
        For each ``c`` of the result, left to right: ``"mul"``, ``"add"`` or
        ``"existing"``.
    """
    check_prefix(tokens)
    out: list[str] = []
    kinds: list[str] = []
    for token in tokens:
        if token in UNARY_OPERATORS:
            out += ["mul", CONSTANT, token]
            kinds.append(MULTIPLICATIVE)
        elif variable_index(token) is not None:
            out += ["add", "mul", CONSTANT, token, CONSTANT]
            kinds += [MULTIPLICATIVE, ADDITIVE]
        else:
            out.append(token)
            if token == CONSTANT:
                kinds.append(EXISTING)
    return out, kinds


def neutral_constants(kinds: Sequence[str]) -> np.ndarray:
    """Values of the placeholders that leave the skeleton unchanged."""
    return np.array([NEUTRAL_VALUE[kind] for kind in kinds], dtype=np.float64)


def count_constants(tokens: Sequence[str]) -> int:
    return sum(token == CONSTANT for token in tokens)


def remove_placeholders(tokens: Sequence[str], kinds: Sequence[str], keep: Sequence[bool]) -> list[str]:
    """Drop attached placeholders that are not kept, at token level.

    A dropped multiplicative placeholder turns ``mul c A`` into ``A`` and a dropped
    additive one turns ``add A c`` into ``A``; this is exactly the expression with
    those placeholders at their neutral values. Pre-existing placeholders are never
    dropped. Pretraining uses it to build the target skeleton of an equation whose
    unsampled constants were set to their neutral values.

    Parameters
    ----------
    tokens : sequence of str
        A prefix skeleton as returned by :func:`attach_constants`.
    kinds : sequence of str
        The kind of each placeholder of ``tokens``, left to right.
    keep : sequence of bool
        For each placeholder, whether it stays in the result.

    Returns
    -------
    list of str
        The prefix skeleton; the kept placeholders keep their left-to-right order.
    """
    check_prefix(tokens)
    n_constants = count_constants(tokens)
    if len(kinds) != n_constants or len(keep) != n_constants:
        raise ValueError(f"Expected {n_constants} kinds and keep flags, got {len(kinds)} and {len(keep)}.")
    arity = token_arity
    children: list[list[int]] = [[] for _ in tokens]
    constant_of: dict[int, int] = {}
    open_nodes: list[int] = []
    for position, token in enumerate(tokens):
        if open_nodes:
            parent = open_nodes[-1]
            children[parent].append(position)
            if len(children[parent]) == arity(tokens[parent]):
                open_nodes.pop()
        if token == CONSTANT:
            constant_of[position] = len(constant_of)
        if arity(token):
            open_nodes.append(position)

    def dropped(position: int, kind: str) -> bool:
        index = constant_of.get(position)
        return index is not None and kinds[index] == kind and not keep[index]

    out: list[str] = []
    pending = [0]
    while pending:
        position = pending.pop()
        token, args = tokens[position], children[position]
        if token == "mul" and dropped(args[0], MULTIPLICATIVE):
            pending.append(args[1])
        elif token == "add" and dropped(args[1], ADDITIVE):
            pending.append(args[0])
        else:
            out.append(token)
            pending.extend(reversed(args))
    return out
