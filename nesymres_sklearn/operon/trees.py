"""Our fitted skeletons as Operon trees, and Operon trees as our skeletons.

No text crosses the boundary: Operon's infix parser crashed the process on input as
plain as ``"X1*X2"`` and read ``"1.0*sin(X1)"`` as the constant 1. Trees are built
node by node instead. Operon stores a tree in postfix order with the *first* argument
of a node nearest to it, so ``a / b`` is ``[b, a, Div]``.

Only the node types of :data:`OPERON_SYMBOLS` are produced, the function set that
Operon's search is given: integer powers become products (and ``1 / ...`` for negative
ones), other powers ``exp(b * log(a))``, ``tan`` ``sin / cos``, the hyperbolic
functions sums and quotients of exponentials (``tanh(a) = 1 - 2/(exp(2a) + 1)``,
which does not overflow to inf/inf). Skeletons with ``abs``, ``asin``, ``acos`` or ``atan``
have no such form and are not converted (:class:`NotConvertible`).

Back from Operon, ``a - b`` becomes ``a + (-1) * b``, a variable node of weight ``w``
becomes ``w * x`` (just ``x`` when ``w == 1``), and every constant becomes a
placeholder ``c`` with its value, so the result is a :class:`Skeleton` and constants
like any candidate of the network.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyoperon as op

from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT, token_arity, variable_index, variable_token
from .settings import operon_functions

#: Operon's function set for the search (as its ``allowed_symbols``).
OPERON_SYMBOLS = "add,sub,mul,div,constant,variable,sin,cos,exp,log,sqrt"

_DIRECT = {
    "add": op.NodeType.Add,
    "mul": op.NodeType.Mul,
    "div": op.NodeType.Div,
    "sin": op.NodeType.Sin,
    "cos": op.NodeType.Cos,
    "exp": op.NodeType.Exp,
    "ln": op.NodeType.Log,
    "sqrt": op.NodeType.Sqrt,
}
_BACK = {node: token for token, node in _DIRECT.items()}


def operon_symbols(operators: frozenset[str] | None) -> str:
    """Operon's ``allowed_symbols`` for the allowed ``operators`` (our tokens; ``None``:
    all of :data:`OPERON_SYMBOLS`). Operon's ``sub`` is written back with ``add`` and
    ``mul``. Without a function (:func:`.plan.without_operon`), Operon cannot search."""
    if operators is None:
        return OPERON_SYMBOLS
    return ",".join(["constant", "variable", *operon_functions(operators)])


class NotConvertible(ValueError):
    """A skeleton with an operator outside Operon's function set."""


def _node(kind) -> op.Node:
    return op.Node(kind)


def _constant(value: float) -> list[op.Node]:
    return [op.Node.Constant(float(value))]


def _postfix_call(kind, *arguments: list[op.Node]) -> list[op.Node]:
    """Nodes of ``kind(arguments...)``: the arguments last-first, then the node."""
    nodes: list[op.Node] = []
    for argument in reversed(arguments):
        nodes += argument
    return [*nodes, _node(kind)]


def _product(factors: list[list[op.Node]]) -> list[op.Node]:
    result = factors[0]
    for factor in factors[1:]:
        result = _postfix_call(op.NodeType.Mul, result, factor)
    return result


def _exp(argument):
    return _postfix_call(op.NodeType.Exp, argument)


def _negated(argument):
    return _postfix_call(op.NodeType.Mul, _constant(-1.0), argument)


def _half_sum(first, second):
    return _postfix_call(op.NodeType.Mul, _constant(0.5), _postfix_call(op.NodeType.Add, first, second))


def _rewrite(token: str, arguments: list[list[op.Node]]) -> list[op.Node]:
    """Nodes of ``token(arguments)`` in Operon's function set."""
    if token in _DIRECT:
        return _postfix_call(_DIRECT[token], *arguments)
    (a, *rest) = arguments
    if token == "pow":
        return _power(a, rest[0])
    if token == "tan":
        return _postfix_call(op.NodeType.Div, _postfix_call(op.NodeType.Sin, a), _postfix_call(op.NodeType.Cos, a))
    if token in ("sinh", "cosh"):
        plus, minus = _exp(a), _exp(_negated(a))
        return _half_sum(plus, _negated(minus) if token == "sinh" else minus)
    if token in ("tanh", "coth"):  # 1 - 2 / (exp(2a) + 1): no inf / inf for large |a|
        grown = _postfix_call(op.NodeType.Add, _exp(_postfix_call(op.NodeType.Mul, _constant(2.0), a)), _constant(1.0))
        tanh = _postfix_call(op.NodeType.Sub, _constant(1.0), _postfix_call(op.NodeType.Div, _constant(2.0), grown))
        return tanh if token == "tanh" else _postfix_call(op.NodeType.Div, _constant(1.0), tanh)
    raise NotConvertible(f"{token!r} has no form in Operon's function set {OPERON_SYMBOLS}.")


def _power(base: list[op.Node], exponent: list[op.Node]) -> list[op.Node]:
    if len(exponent) == 1 and exponent[0].IsConstant and float(exponent[0].Value).is_integer():
        n = int(exponent[0].Value)
        if n == 0:
            return _constant(1.0)
        positive = _product([base] * abs(n))
        return positive if n > 0 else _postfix_call(op.NodeType.Div, _constant(1.0), positive)
    return _exp(_postfix_call(op.NodeType.Mul, exponent, _postfix_call(op.NodeType.Log, base)))


def to_operon(skeleton: Skeleton, constants: Sequence[float], hashes: Sequence[int]) -> op.Tree:
    """The Operon tree of ``skeleton`` with ``constants``; ``hashes[i]`` is the hash of
    Operon's variable for feature ``i``. Raises :class:`NotConvertible`."""
    values = iter(np.asarray(constants, dtype=np.float64))

    def build(position: int) -> tuple[list[op.Node], int]:
        token = skeleton.tokens[position]
        if token == CONSTANT:
            return _constant(next(values)), position + 1
        if token_arity(token) == 0:
            index = variable_index(token)
            if index is None:  # an integer
                return _constant(float(token)), position + 1
            node = op.Node.Variable(1.0)
            node.HashValue = hashes[index]
            return [node], position + 1
        arguments, position = [], position + 1
        for _ in range(token_arity(token)):
            argument, position = build(position)
            arguments.append(argument)
        return _rewrite(token, arguments), position

    nodes, _ = build(0)
    return op.Tree(nodes).UpdateNodes()


def from_operon(tree: op.Tree, feature_of_hash: dict[int, int]) -> tuple[Skeleton, np.ndarray]:
    """Our skeleton and constants for an Operon ``tree``; ``feature_of_hash`` maps
    Operon's variable hashes to feature indices."""
    stack: list[tuple[list[str], list[float]]] = []
    for node in tree.Nodes:
        if node.IsConstant:
            stack.append(([CONSTANT], [float(node.Value)]))
        elif node.IsVariable:
            variable = [variable_token(feature_of_hash[node.HashValue])]
            weight = float(node.Value)
            stack.append((variable, []) if weight == 1.0 else (["mul", CONSTANT, *variable], [weight]))
        else:
            arguments = [stack.pop() for _ in range(node.Arity)]  # first argument first
            stack.append(_combine(node.Type, arguments))
    (tokens, values) = stack.pop()
    return Skeleton(tuple(tokens)), np.array(values, dtype=np.float64)


def _combine(kind, arguments: list[tuple[list[str], list[float]]]) -> tuple[list[str], list[float]]:
    if kind == op.NodeType.Sub:
        (a, a_values), (b, b_values) = arguments
        return ["add", *a, "mul", "-1", *b], [*a_values, *b_values]
    if kind not in _BACK:
        raise NotConvertible(f"Operon node {kind} is outside the function set {OPERON_SYMBOLS}.")
    token = _BACK[kind]
    tokens, values = arguments[-1]
    for argument_tokens, argument_values in reversed(arguments[:-1]):  # n-ary: a chain of binary nodes
        tokens, values = [token, *argument_tokens, *tokens], [*argument_values, *values]
    if len(arguments) == 1:
        tokens = [token, *tokens]
    return tokens, values
