"""Token vocabulary of the network: ids of the expression tokens and special tokens.

The default vocabulary reproduces the token table of the paper (appendix A): padding 0,
start 1, end 2, then the variables, the constant placeholder ``c``, the operators in
alphabetical order and the integers -3..5. The number of variables is a parameter, so
a model trained with more variables simply carries a longer vocabulary in its config.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..expression.operators import PAPER_OPERATORS
from ..expression.tokens import CONSTANT, INTEGERS, token_arity, variable_index, variable_token

PAD, SOS, EOS = "<pad>", "<sos>", "<eos>"


def default_tokens(n_variables: int = 3) -> list[str]:
    """The paper's token table for ``n_variables`` input variables."""
    if n_variables < 1:
        raise ValueError(f"n_variables must be at least 1, got {n_variables}.")
    return (
        [PAD, SOS, EOS]
        + [variable_token(i) for i in range(n_variables)]
        + [CONSTANT]
        + list(PAPER_OPERATORS)
        + [str(i) for i in INTEGERS]
    )


@dataclass(frozen=True)
class Vocabulary:
    """An ordered list of tokens and what each one means.

    Parameters
    ----------
    tokens : tuple of str
        Token strings; the position of a token is its id. Must contain ``<pad>``,
        ``<sos>``, ``<eos>``, ``c`` and at least ``x_1``; every other token must be a
        known operator, a variable ``x_i`` or an integer.
    """

    tokens: tuple[str, ...]

    def __post_init__(self):
        tokens = tuple(self.tokens)
        object.__setattr__(self, "tokens", tokens)
        if len(set(tokens)) != len(tokens):
            raise ValueError("Vocabulary tokens must be unique.")
        for required in (PAD, SOS, EOS, CONSTANT, variable_token(0)):
            if required not in tokens:
                raise ValueError(f"Vocabulary lacks the required token {required!r}.")
        for token in tokens:
            if token_arity(token) is None and token not in (PAD, SOS, EOS):
                raise ValueError(f"Unknown vocabulary token {token!r}.")
        variables = [index for t in tokens if (index := variable_index(t)) is not None]
        if sorted(variables) != list(range(len(variables))):
            raise ValueError("Variables must be x_1 .. x_n without gaps.")

    @classmethod
    def default(cls, n_variables: int = 3) -> Vocabulary:
        return cls(tuple(default_tokens(n_variables)))

    def __len__(self) -> int:
        return len(self.tokens)

    @cached_property
    def ids(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.tokens)}

    @property
    def pad_id(self) -> int:
        return self.ids[PAD]

    @property
    def sos_id(self) -> int:
        return self.ids[SOS]

    @property
    def eos_id(self) -> int:
        return self.ids[EOS]

    @property
    def constant_id(self) -> int:
        return self.ids[CONSTANT]

    @cached_property
    def n_variables(self) -> int:
        return sum(1 for t in self.tokens if variable_index(t) is not None)

    @cached_property
    def arities(self) -> np.ndarray:
        """Arity per token id: 0 leaf, 1 unary, 2 binary, -1 for special tokens."""
        return np.array([-1 if (a := token_arity(t)) is None else a for t in self.tokens], dtype=np.int64)

    def encode(self, prefix: list[str]) -> list[int]:
        """Token ids of a prefix expression (without start/end tokens)."""
        try:
            return [self.ids[token] for token in prefix]
        except KeyError as error:
            raise ValueError(f"Token {error.args[0]!r} is not in the vocabulary.") from None

    def decode(self, ids) -> list[str]:
        """Prefix tokens of a sequence of ids; start, end and padding are dropped."""
        special = {self.pad_id, self.sos_id, self.eos_id}
        return [self.tokens[i] for i in ids if int(i) not in special]
