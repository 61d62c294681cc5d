"""Constants fitted by Operon's Levenberg-Marquardt, in C++.

Operon's optimiser (``pyoperon``'s ``LMOptimizer``) fits a skeleton's constants to
128 points in about 0.15 ms (median over the starts of the 52 AI-Feynman fits), where
the same run through SciPy's MINPACK and our compiled NumPy programs costs a few
milliseconds of Python overhead. It computes in
float32, so a fit is only as exact as float32 (a normalised MSE of about 1e-14);
:func:`.search.fitting.constants.fit_constants` polishes the near-exact ones in
float64.

Each skeleton is written node for node as an Operon tree (our operators all have an
Operon node of the same definition; ``coth`` is ``1 / tanh``) in which only the
nodes of our constant placeholders are optimised: variables keep weight 1 and
integers stay fixed. The tree is built node by node, not parsed from text (see
:mod:`.trees` on Operon's parser), once per skeleton.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyoperon as op

from ..expression.tokens import CONSTANT, token_arity, variable_index
from ..search.problem import Problem

_NODE_TYPES = {
    "add": op.NodeType.Add,
    "mul": op.NodeType.Mul,
    "div": op.NodeType.Div,
    "pow": op.NodeType.Pow,
    "abs": op.NodeType.Abs,
    "acos": op.NodeType.Acos,
    "asin": op.NodeType.Asin,
    "atan": op.NodeType.Atan,
    "cos": op.NodeType.Cos,
    "cosh": op.NodeType.Cosh,
    "exp": op.NodeType.Exp,
    "ln": op.NodeType.Log,
    "sin": op.NodeType.Sin,
    "sinh": op.NodeType.Sinh,
    "sqrt": op.NodeType.Sqrt,
    "tan": op.NodeType.Tan,
    "tanh": op.NodeType.Tanh,
}


def _fixed_constant(value: float) -> op.Node:
    node = op.Node.Constant(float(value))
    node.Optimize = False
    return node


class OperonConstantFitter:
    """Operon's Levenberg-Marquardt on one problem's unweighted data: built once per
    search, then :meth:`run` once per start. Each skeleton's tree is built on its first
    start and given each further start's values. Picklable and copyable (each thread of
    ``n_jobs`` fits with its own copy): Operon's objects are built again from the data."""

    def __init__(self, problem: Problem, max_iterations: int):
        self._X = np.asarray(problem.X, dtype=np.float64)
        self._y = np.asarray(problem.y, dtype=np.float64)
        self._max_iterations = max_iterations
        self._build()

    def _build(self):
        n, d = self._X.shape
        self._dataset = op.Dataset(np.column_stack([self._X, self._y]))
        variables = self._dataset.Variables
        self._hashes = [variable.Hash for variable in variables[:d]]
        self._problem = op.Problem(self._dataset)
        self._problem.TrainingRange = op.Range(0, n)
        self._problem.Target = variables[d]
        self._problem.InputHashes = self._hashes
        self._dispatch = op.DispatchTable()
        # Operon's objects hold references, not copies, of the ones they are built from:
        # each is kept for as long as this fitter lives.
        self._optimizer = op.LMOptimizer(self._dispatch, self._problem, max_iter=self._max_iterations, batch_size=n)
        self._optimize = op.CoefficientOptimizer(self._optimizer)
        self._random = op.RandomGenerator(0)  # unused by a full-batch run; the call requires one
        self._trees: dict[tuple[str, ...], tuple[op.Tree, list[int]]] = {}

    def __getstate__(self):
        return {"X": self._X, "y": self._y, "max_iterations": self._max_iterations}

    def __setstate__(self, state):
        self._X, self._y, self._max_iterations = state["X"], state["y"], state["max_iterations"]
        self._build()

    def _tree(self, tokens: tuple[str, ...]) -> tuple[op.Tree, list[int]]:
        """Postfix nodes of ``tokens`` (the first argument nearest to its node), with
        our placeholders as the only optimised nodes; and the placeholder index of each
        optimised node, in node order."""
        placeholders = iter(range(len(tokens)))

        def build(position: int) -> tuple[list[tuple[op.Node, int | None]], int]:
            token = tokens[position]
            if token == CONSTANT:
                return [(op.Node.Constant(1.0), next(placeholders))], position + 1
            if token_arity(token) == 0:
                index = variable_index(token)
                if index is None:
                    return [(_fixed_constant(float(token)), None)], position + 1
                node = op.Node.Variable(1.0)
                node.HashValue = self._hashes[index]
                node.Optimize = False
                return [(node, None)], position + 1
            arguments, position = [], position + 1
            for _ in range(token_arity(token)):
                argument, position = build(position)
                arguments.append(argument)
            nodes = [node for argument in reversed(arguments) for node in argument]
            if token == "coth":
                tail = [op.Node(op.NodeType.Tanh), _fixed_constant(1.0), op.Node(op.NodeType.Div)]
            else:
                tail = [op.Node(_NODE_TYPES[token])]
            return [*nodes, *((node, None) for node in tail)], position

        nodes, _ = build(0)
        order = [k for _, k in nodes if k is not None]
        return op.Tree([node for node, _ in nodes]).UpdateNodes(), order

    def run(self, tokens: Sequence[str], start: np.ndarray) -> np.ndarray | None:
        """The constants of ``tokens`` after one Levenberg-Marquardt run from
        ``start`` (float64, in placeholder order), or ``None`` when Operon's run did
        not end at finite constants."""
        key = tuple(tokens)
        if key not in self._trees:
            self._trees[key] = self._tree(key)
        tree, order = self._trees[key]
        tree.SetCoefficients(np.asarray(start, dtype=np.float32)[order])
        _, summary = self._optimize(self._random, tree)
        fitted = np.asarray(summary.FinalParameters, dtype=np.float64)
        if fitted.shape != (len(order),) or not np.all(np.isfinite(fitted)):
            return None
        constants = np.empty(len(order))
        constants[order] = fitted
        return constants
