"""Operon through ``pyoperon`` (evaluation-budget sweep).

Operon is the strongest genetic-programming symbolic regressor that installs here
(SRBench). The swept knob is ``max_evaluations``; ``max_time`` is set from the time
budget. Function set: {+, -, *, /, sin, cos, exp, ln, sqrt} with constants.
"""

from __future__ import annotations

import math

import numpy as np
import sympy

from .base import Adapter

ALLOWED_SYMBOLS = "add,sub,mul,div,constant,variable,sin,cos,exp,log,sqrt"


class OperonAdapter(Adapter):
    """Options: any :class:`pyoperon.sklearn.SymbolicRegressor` argument."""

    name = "operon"
    parameter = "max_evaluations"
    preload_modules = ("pyoperon.sklearn",)
    requires = ("pyoperon",)
    install_hint = "pip install pyoperon"

    def _fit(self, X, y):
        from pyoperon.sklearn import SymbolicRegressor

        params = {
            "allowed_symbols": ALLOWED_SYMBOLS,
            "max_evaluations": int(self.value),
            "n_threads": 1,
            "random_state": self.random_state,
            **self.options,
        }
        if self.time_budget is not None:
            params.setdefault("max_time", max(1, math.floor(self.time_budget)))
        self.model_ = SymbolicRegressor(**params).fit(X, y)
        self.n_features_ = X.shape[1]

    def predict(self, X):
        with np.errstate(all="ignore"):
            return np.asarray(self.model_.predict(X), dtype=np.float64)

    def expression(self):
        names = [f"x_{i + 1}" for i in range(self.n_features_)]
        text = self.model_.get_model_string(self.model_.model_, 6, names)
        symbols = {name: sympy.Symbol(name, real=True) for name in names}
        return str(sympy.sympify(text, locals=symbols))


class OperonTimedAdapter(Adapter):
    """Operon alone with the hybrid's settings (:class:`OperonSettings`), for a wall-clock
    budget ``max_time`` (the swept knob): the hybrid's refinement without seeds, run on
    the data as given for as many generations as the budget holds, keeping the
    candidate with the lowest training error."""

    name = "operon-timed"
    parameter = "max_time"
    preload_modules = ("nesymres_sklearn.operon.refine",)
    requires = ("pyoperon", "nesymres_sklearn")
    install_hint = 'pip install "nesymres-sklearn[operon]"'

    def _fit(self, X, y):
        from nesymres_sklearn.operon.refine import refine
        from nesymres_sklearn.operon.settings import OperonSettings
        from nesymres_sklearn.search.fitted import mse
        from nesymres_sklearn.search.settings import SearchSettings

        budget = SearchSettings(reserve_seconds=0.0).budget(float(self.value))
        until_the_end = OperonSettings(generations=2**31 - 1)
        found = refine(X, y, [], until_the_end, self.random_state, deadline=budget.end)
        losses = [mse(s.program, X, y, c) for s, c in zip(found.skeletons, found.constants)]
        best = int(np.argmin(losses))
        self.skeleton_, self.constants_, self.n_features_ = found.skeletons[best], found.constants[best], X.shape[1]

    def predict(self, X):
        with np.errstate(all="ignore"):
            return np.asarray(self.skeleton_.program(np.asarray(X, dtype=np.float64), self.constants_))

    def expression(self):
        symbols = [sympy.Symbol(f"x_{i + 1}", real=True) for i in range(self.n_features_)]
        return str(self.skeleton_.expression(self.constants_, symbols, evaluate=True))
