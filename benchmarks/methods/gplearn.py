"""Genetic programming with gplearn (population-size sweep), as in appendix "Baselines".

Hyper-parameters of the paper's table: tournament selection of size 20, crossover
probability 0.9, mutation probability 0.01 (each of gplearn's subtree, hoist and
point mutations), constants in (-4 pi, 4 pi); function set
{+, -, *, /, sqrt, ln, exp, neg, inv, sin, cos} (gplearn's protected versions; ``exp``
is added with its argument clipped at 100). Evolution runs at most ``generations``
generations (gplearn's default 20) and stops early when the time budget is spent or
the best program's fitness reaches ``stopping_criteria``.
"""

from __future__ import annotations

import math
import time

import numpy as np
import sympy

from .base import Adapter

FUNCTION_SET = ("add", "sub", "mul", "div", "sqrt", "log", "neg", "inv", "sin", "cos")


def protected_exp(x):
    return np.exp(np.minimum(x, 100.0))


# The program's mathematical reading (protection ignored) for the expression column.
_SYMPY_FUNCTIONS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "sqrt": lambda a: sympy.sqrt(sympy.Abs(a)),
    "log": lambda a: sympy.log(sympy.Abs(a)),
    "neg": lambda a: -a,
    "inv": lambda a: 1 / a,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "exp": sympy.exp,
}


def program_to_sympy(program: str, n_features: int) -> sympy.Expr:
    """SymPy expression of a gplearn program string such as ``add(X0, mul(X1, 0.5))``."""
    names = dict(_SYMPY_FUNCTIONS)
    names.update({f"X{i}": sympy.Symbol(f"x_{i + 1}", real=True) for i in range(n_features)})
    return sympy.sympify(program, locals=names)


class GplearnAdapter(Adapter):
    """Options: ``generations`` (20), ``stopping_criteria`` (1e-10) and any other
    :class:`gplearn.genetic.SymbolicRegressor` argument."""

    name = "gplearn"
    parameter = "population_size"
    preload_modules = ("gplearn.genetic",)
    requires = ("gplearn",)
    install_hint = "pip install gplearn"

    def _fit(self, X, y):
        from gplearn.functions import make_function
        from gplearn.genetic import SymbolicRegressor

        options = dict(self.options)
        generations = int(options.pop("generations", 20))
        stopping = float(options.pop("stopping_criteria", 1e-10))
        exp = make_function(function=protected_exp, name="exp", arity=1, wrap=False)
        params = {
            "population_size": int(self.value),
            "tournament_size": 20,
            "p_crossover": 0.9,
            "p_subtree_mutation": 0.01,
            "p_hoist_mutation": 0.01,
            "p_point_mutation": 0.01,
            "const_range": (-4 * math.pi, 4 * math.pi),
            "function_set": FUNCTION_SET + (exp,),
            "stopping_criteria": stopping,
            "random_state": self.random_state,
            "n_jobs": 1,
            "warm_start": True,
            **options,
        }
        self.model_ = SymbolicRegressor(generations=1, **params)
        start = time.perf_counter()
        self.model_.fit(X, y)
        # One generation at a time (gplearn's warm start), so the time budget holds.
        for generation in range(2, generations + 1):
            if self.model_.run_details_["best_fitness"][-1] <= stopping:
                break
            if self.time_budget is not None and time.perf_counter() - start > self.time_budget:
                break
            self.model_.set_params(generations=generation)
            self.model_.fit(X, y)
        self.n_features_ = X.shape[1]
        self.generations_ = len(self.model_.run_details_["generation"])

    def predict(self, X):
        return np.asarray(self.model_.predict(X), dtype=np.float64)

    def expression(self):
        return str(program_to_sympy(str(self.model_._program), self.n_features_))
