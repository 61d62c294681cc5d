"""Token vocabulary of equation skeletons in prefix notation.

The default vocabulary reproduces the token table of the paper (appendix A): padding 0,
start 1, end 2, then the variables, the constant placeholder ``c``, the operators in
alphabetical order and the integers -3..5. The number of variables is a parameter, so
a model trained with more variables simply carries a longer vocabulary in its config.
``abs`` is not in the paper's table but in the authors' released vocabulary, so it is
a known token (see :mod:`nesymres_sklearn.original`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

PAD, SOS, EOS, CONSTANT = "<pad>", "<sos>", "<eos>", "c"

PAPER_UNARY_OPERATORS = (
    "acos", "asin", "atan", "cos", "cosh", "coth", "exp", "ln",
    "sin", "sinh", "sqrt", "tan", "tanh",
)
UNARY_OPERATORS = ("abs", *PAPER_UNARY_OPERATORS)
BINARY_OPERATORS = ("add", "div", "mul", "pow")
INTEGERS = tuple(range(-3, 6))

_VARIABLE = re.compile(r"^x_([1-9][0-9]*)$")


def variable_token(index: int) -> str:
    """Token of the ``index``-th variable, counting from 0 (``0 -> "x_1"``)."""
    return f"x_{index + 1}"


def default_tokens(n_variables: int = 3) -> list[str]:
    """The paper's token table for ``n_variables`` input variables."""
    if n_variables < 1:
        raise ValueError(f"n_variables must be at least 1, got {n_variables}.")
    operators = sorted(PAPER_UNARY_OPERATORS + BINARY_OPERATORS)
    return (
        [PAD, SOS, EOS]
        + [variable_token(i) for i in range(n_variables)]
        + [CONSTANT]
        + operators
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
        variables = [int(m.group(1)) for t in tokens if (m := _VARIABLE.match(t))]
        if sorted(variables) != list(range(1, len(variables) + 1)):
            raise ValueError("Variables must be x_1 .. x_n without gaps.")

    @classmethod
    def default(cls, n_variables: int = 3) -> "Vocabulary":
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
        return sum(1 for t in self.tokens if _VARIABLE.match(t))

    @cached_property
    def arities(self) -> np.ndarray:
        """Arity per token id: 0 leaf, 1 unary, 2 binary, -1 for special tokens."""
        return np.array(
            [-1 if (a := token_arity(t)) is None else a for t in self.tokens], dtype=np.int64
        )

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


@lru_cache(maxsize=None)
def token_arity(token: str) -> int | None:
    """Arity of an expression token (0 for leaves), ``None`` for non-expression tokens."""
    if token in BINARY_OPERATORS:
        return 2
    if token in UNARY_OPERATORS:
        return 1
    if token == CONSTANT or _VARIABLE.match(token):
        return 0
    try:
        int(token)
    except ValueError:
        return None
    return 0


@lru_cache(maxsize=None)
def variable_index(token: str) -> int | None:
    """Column index of a variable token (``"x_1" -> 0``), ``None`` otherwise."""
    match = _VARIABLE.match(token)
    return int(match.group(1)) - 1 if match else None
