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

from .prefix import check_prefix
from .vocabulary import CONSTANT, UNARY_OPERATORS, variable_index

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
