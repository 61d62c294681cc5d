"""A sampled expression: its evaluation, reward, constants and SymPy reading.

- :class:`Program` evaluates a pre-order traversal on ``X`` with numpy (compiled once
  into nested closures, since BFGS evaluates it many times);
- :func:`reward` is the paper's ``1 / (1 + NRMSE)``, NRMSE being the root mean squared
  error divided by the standard deviation of ``y``. The operators are unprotected and,
  as in the authors' release, an expression is invalid (reward 0) when evaluating it
  on the training data raises any floating-point error (division by zero, overflow,
  underflow, invalid operation), even one that cancels out later (``exp(log(0))``);
- :func:`evaluate` optimises the ``const`` placeholders with BFGS (scipy) from 1.0,
  minimising the negative reward as the authors' release does, and rewards the result;
- :meth:`Program.sympy` writes the expression over ``x_1, x_2, ...``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy
from scipy.optimize import minimize

from .library import Library


def _variable(column):
    return lambda X, c: X[:, column]


def _constant(index):
    return lambda X, c: c[index]


def _unary(function, argument):
    return lambda X, c: function(argument(X, c))


def _binary(function, left, right):
    return lambda X, c: function(left(X, c), right(X, c))


class Program:
    """A complete pre-order traversal over ``library``, callable on data.

    ``program(X, constants)`` returns one value per row of ``X`` (NaN or inf where an
    operator is undefined); ``constants`` fill the ``const`` tokens in traversal order.
    """

    def __init__(self, library: Library, traversal):
        self.library = library
        self.traversal = tuple(int(t) for t in traversal)
        self.n_constants = sum(1 for t in self.traversal if t == library.const_index)
        open_slots = 1 + np.cumsum(library.arity[list(self.traversal)] - 1)
        if len(self.traversal) == 0 or open_slots[-1] != 0 or (open_slots[:-1] == 0).any():
            raise ValueError(f"Not one complete traversal: {[library.names[t] for t in self.traversal]}.")
        stack, n_seen = [], self.n_constants
        for token in reversed(self.traversal):
            arity = library.arity[token]
            if arity == 0:
                column = library.variable(token)
                if column is None:
                    n_seen -= 1
                stack.append(_variable(column) if column is not None else _constant(n_seen))
            else:
                function = library.operators[token].function
                arguments = [stack.pop() for _ in range(arity)]
                stack.append(_unary(function, *arguments) if arity == 1 else _binary(function, *arguments))
        self._function = stack[0]

    def __call__(self, X: np.ndarray, constants=()) -> np.ndarray:
        with np.errstate(all="ignore"):
            value = self._function(X, np.asarray(constants, dtype=np.float64))
        return np.broadcast_to(value, (X.shape[0],)).astype(np.float64, copy=False)

    def sympy(self, constants=()) -> sympy.Expr:
        """SymPy expression over the real symbols ``x_1, x_2, ...`` (constants as floats)."""
        constants, stack = list(constants), []
        for token in reversed(self.traversal):
            arity = self.library.arity[token]
            if arity == 0:
                column = self.library.variable(token)
                if column is not None:
                    stack.append(sympy.Symbol(f"x_{column + 1}", real=True))
                else:
                    stack.append(sympy.Float(constants.pop()))
            else:
                arguments = [stack.pop() for _ in range(arity)]
                stack.append(self.library.operators[token].sympy(*arguments))
        return stack[0]

    def __str__(self) -> str:
        return " ".join(self.library.names[t] for t in self.traversal)


def reward(y: np.ndarray, y_hat: np.ndarray, scale: float | None = None) -> float:
    """The paper's reward ``1 / (1 + NRMSE)`` in (0, 1]; 0 if ``y_hat`` is not all finite.

    ``scale`` is the standard deviation of ``y`` (computed when not given; 1 for a
    constant ``y``).
    """
    if scale is None:
        scale = float(np.std(y))
    with np.errstate(all="ignore"):
        error = np.sqrt(np.mean((y - y_hat) ** 2)) / (scale if scale > 0 else 1.0)
    return float(1.0 / (1.0 + error)) if np.isfinite(error) else 0.0


@dataclass(frozen=True)
class Evaluation:
    """Reward of one program with its fitted constants (empty without ``const``)."""

    reward: float
    constants: tuple[float, ...] = ()


def checked_reward(program: Program, X: np.ndarray, y: np.ndarray, constants=(), scale: float | None = None) -> float:
    """The reward of ``program`` on the training data; 0 if evaluating it raises any
    floating-point error."""
    try:
        with np.errstate(all="raise"):
            y_hat = program._function(X, np.asarray(constants, dtype=np.float64))
    except FloatingPointError:
        return 0.0
    return reward(y, y_hat, scale)


def evaluate(program: Program, X: np.ndarray, y: np.ndarray, scale: float | None = None) -> Evaluation:
    """Reward of a program, after fitting its constants by BFGS if it has any."""
    scale = float(np.std(y)) if scale is None else scale
    if program.n_constants == 0:
        return Evaluation(checked_reward(program, X, y, (), scale))

    def objective(constants):
        return -checked_reward(program, X, y, constants, scale)

    # scipy's BFGS with its defaults (numerical gradient), from ones.
    start = np.ones(program.n_constants)
    with np.errstate(all="ignore"):
        constants = minimize(objective, start, method="BFGS").x
    if not np.all(np.isfinite(constants)):
        constants = start
    return Evaluation(-objective(constants), tuple(float(c) for c in constants))
