"""Vectorised NumPy evaluation of prefix expressions, with exact constant gradients.

A :class:`PrefixProgram` is compiled once per distinct token sequence into
straight-line NumPy code (one array operation per node, no interpretation), cached
by its tokens, and evaluated on a whole array of points per call.
``value_and_jacobian`` runs a second compiled function that carries the derivatives
by the constant placeholders alongside the values (forward-mode differentiation,
fused into the same code): only the derivatives that are not identically zero are
computed, and those of a bare constant (1) and of sums and products are written out
rather than called. Every operator's value and derivative come from the operator
table (:data:`.operators.OPERATORS`), so the compiled code and the table cannot
disagree. The generated source is built from token names the table and
:func:`.tokens.variable_index` accept, never from free text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property, lru_cache

import numpy as np

from .operators import OPERATORS
from .prefix import check_prefix
from .tokens import CONSTANT, token_arity, variable_index

# Compiled programs kept (a fit sees a few hundred distinct skeletons).
CACHE_SIZE = 4096


class PrefixProgram:
    """A prefix expression compiled for repeated vectorised evaluation.

    Parameters
    ----------
    tokens : sequence of str
        A complete prefix expression over ``x_1..x_n``, integers, operators and ``c``.
    """

    def __init__(self, tokens: Sequence[str]):
        check_prefix(tokens)
        self.tokens = list(tokens)
        self._key = tuple(self.tokens)
        self.n_constants = sum(token == CONSTANT for token in tokens)
        used = [index for token in tokens if (index := variable_index(token)) is not None]
        self.n_variables = max(used) + 1 if used else 0

    def __repr__(self) -> str:
        return f"PrefixProgram({' '.join(self.tokens)!r})"

    @property
    def compiled(self) -> CompiledProgram:
        """The compiled functions, unchecked: ``values(X, c)`` and
        ``values_and_jacobian(X, c)`` take float64 arrays and may return a scalar for an
        expression without variables (for tight loops such as the constant fitting,
        which checks its inputs once)."""
        return compiled(self._key)

    def __call__(self, X: np.ndarray, constants: Sequence[float] = ()) -> np.ndarray:
        """Values at the rows of ``X`` (shape ``(n, d)``); NaN where undefined."""
        X, constants = self._checked(X, constants)
        with np.errstate(all="ignore"):
            values = self.compiled.values(X, constants)
        return np.broadcast_to(np.asarray(values, dtype=np.float64), (X.shape[0],))

    def value_and_jacobian(self, X: np.ndarray, constants: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Values, shape ``(n,)``, and their derivatives by the constants, ``(n, k)``."""
        X, constants = self._checked(X, constants)
        with np.errstate(all="ignore"):
            values, jacobian = self.compiled.values_and_jacobian(X, constants)
        return np.broadcast_to(np.asarray(values, dtype=np.float64), (X.shape[0],)), jacobian

    def _checked(self, X, constants) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] < self.n_variables:
            raise ValueError(f"X must have shape (n_points, >= {self.n_variables}), got {X.shape}.")
        constants = np.asarray(constants, dtype=np.float64)
        if constants.shape != (self.n_constants,):
            raise ValueError(f"Expected {self.n_constants} constants, got shape {constants.shape}.")
        return X, constants


def evaluate(tokens: Sequence[str], X: np.ndarray, constants: Sequence[float] = ()) -> np.ndarray:
    """Values of a prefix expression at the rows of ``X``, computed node by node without
    compiling: for an expression evaluated once (a pruning trial), where compiling
    costs several times the evaluation. The same operator calls in the same order as
    the compiled program, so the same values."""
    X = np.asarray(X, dtype=np.float64)
    constants = np.asarray(constants, dtype=np.float64)
    stack: list = []
    k = len(constants)
    with np.errstate(all="ignore"):
        for token in reversed(tokens):
            if token == CONSTANT:
                k -= 1
                stack.append(constants[k])
            elif (index := variable_index(token)) is not None:
                stack.append(X[:, index])
            elif token_arity(token) == 0:
                stack.append(np.float64(token))
            else:
                operator = OPERATORS[token]
                arguments = [stack.pop() for _ in range(operator.arity)]
                stack.append(operator.numpy(*arguments))
    (values,) = stack
    return np.broadcast_to(np.asarray(values, dtype=np.float64), (X.shape[0],))


class CompiledProgram:
    """The two functions compiled from one token sequence: ``values`` at once,
    ``values_and_jacobian`` on its first use (a program evaluated once, such as a
    pruning trial, never pays for its Jacobian's code)."""

    def __init__(self, tokens: tuple[str, ...]):
        self.tokens = tokens
        self.values, self._values_source = _compiled_function(tokens, with_jacobian=False)

    @cached_property
    def _jacobian(self) -> tuple[Callable, str]:
        return _compiled_function(self.tokens, with_jacobian=True)

    @property
    def values_and_jacobian(self) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        return self._jacobian[0]

    @property
    def source(self) -> str:
        """The generated source of both functions."""
        return self._values_source + self._jacobian[1]


@lru_cache(maxsize=CACHE_SIZE)
def compiled(tokens: tuple[str, ...]) -> CompiledProgram:
    """The compiled functions of ``tokens`` (a checked prefix expression), cached."""
    return CompiledProgram(tokens)


def _compiled_function(tokens: tuple[str, ...], with_jacobian: bool) -> tuple[Callable, str]:
    """``values`` or ``values_and_jacobian`` of ``tokens``, compiled, and its source."""
    name = "values_and_jacobian" if with_jacobian else "values"
    writer = _Writer(tokens, with_jacobian=with_jacobian)
    source = writer.source(name)
    namespace = {"np": np, **_OPERATOR_FUNCTIONS, **writer.numbers}
    exec(compile(source, f"<program {' '.join(tokens)}>", "exec"), namespace)  # noqa: S102
    return namespace[name], source


# The operator table's functions, by the names the generated code calls them.
_OPERATOR_FUNCTIONS = {
    **{f"f_{token}": operator.numpy for token, operator in OPERATORS.items()},
    **{
        f"d_{token}_{position}": derivative
        for token, operator in OPERATORS.items()
        for position, derivative in enumerate(operator.derivatives)
    },
}
_ONE = "1"  # the derivative of a constant by itself


class _Writer:
    """Straight-line source of one prefix expression: a statement per node, its value
    in ``v<i>`` and its non-zero derivatives by the constants in ``d<i>_<k>``."""

    def __init__(self, tokens: tuple[str, ...], with_jacobian: bool):
        self.tokens, self.with_jacobian = tokens, with_jacobian
        self.lines: list[str] = []
        self.n_names = 0
        self.n_constants = 0
        # Numbers as NumPy scalars (named ``n<i>``): a division by 0 gives inf, not an error.
        self.numbers: dict[str, np.float64] = {}

    def source(self, name: str) -> str:
        _, (value, derivatives) = self._node(0)
        body = self.lines
        if self.with_jacobian:
            body = [*body, f"J = np.zeros((X.shape[0], {self.n_constants}))"]
            body += [f"J[:, {k}] = {derivative}" for k, derivative in sorted(derivatives.items())]
            body.append(f"return {value}, J")
        else:
            body = [*body, f"return {value}"]
        return f"def {name}(X, c):\n" + "".join(f"    {line}\n" for line in body)

    def _name(self, prefix: str, expression: str) -> str:
        name = f"{prefix}{self.n_names}"
        self.n_names += 1
        self.lines.append(f"{name} = {expression}")
        return name

    def _node(self, position: int) -> tuple[int, tuple[str, dict[int, str]]]:
        """The node starting at ``position``: the position after it, its value's
        name and its derivatives' names by constant index."""
        token = self.tokens[position]
        if token == CONSTANT:
            k = self.n_constants
            self.n_constants += 1
            return position + 1, (f"c[{k}]", {k: _ONE})
        if (index := variable_index(token)) is not None:
            return position + 1, (f"X[:, {index}]", {})
        if token_arity(token) == 0:
            name = f"n{len(self.numbers)}"
            self.numbers[name] = np.float64(token)
            return position + 1, (name, {})
        operator = OPERATORS[token]
        arguments = []
        position += 1
        for _ in range(operator.arity):
            position, argument = self._node(position)
            arguments.append(argument)
        values = [value for value, _ in arguments]
        value = self._name("v", f"f_{token}({', '.join(values)})")
        if not self.with_jacobian:
            return position, (value, {})
        derivatives: dict[int, list[str]] = {}
        for argument_position, (_, argument_derivatives) in enumerate(arguments):
            if not argument_derivatives:
                continue
            factor = self._factor(token, argument_position, values, value)
            for k, derivative in argument_derivatives.items():
                derivatives.setdefault(k, []).append(_product(factor, derivative))
        return position, (value, {k: self._sum(terms) for k, terms in derivatives.items()})

    def _sum(self, terms: list[str]) -> str:
        """A name (or ``"1"``) for the sum of derivative terms."""
        if len(terms) == 1 and (terms[0] == _ONE or terms[0].isidentifier()):
            return terms[0]
        return self._name("d", " + ".join(terms))

    def _factor(self, token: str, argument_position: int, values: list[str], value: str) -> str:
        """The derivative of the node's value by one argument, as a name or ``"1"``."""
        if token == "add":
            return _ONE
        if token == "mul":
            return values[1 - argument_position]
        return self._name("g", f"d_{token}_{argument_position}({', '.join(values)}, {value})")


def _product(factor: str, derivative: str) -> str:
    if factor == _ONE:
        return derivative
    if derivative == _ONE:
        return factor
    return f"{factor} * {derivative}"
