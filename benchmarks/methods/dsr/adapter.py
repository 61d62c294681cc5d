"""The benchmark adapter of DSR, swept over the expression budget."""

from __future__ import annotations

import numpy as np

from ..base import Adapter
from .constraints import Constraints
from .program import Program
from .training import DSRConfig, train

_CONSTRAINT_OPTIONS = ("min_length", "max_length", "max_constants")


class DSRAdapter(Adapter):
    """Deep symbolic regression (Petersen et al., ICLR 2021), re-implemented in PyTorch.

    This is our re-implementation (:mod:`benchmarks.methods.dsr`), not the authors'
    ``dso`` package: ``dso`` needs TensorFlow 1.x and numpy <= 1.19, hence Python <= 3.7,
    which no longer installs here or on a current user's machine, so a ``dso`` adapter
    could only ever report "not installed". The algorithm and its defaults are the
    paper's: a one-layer LSTM of 32 units sampling pre-order traversals from parent and
    sibling inputs under the in-situ constraints (length 4 to 30, no constant-only
    children, no inverse unary child, no nested trigonometric operators, at most 3
    constants), the risk-seeking policy gradient (epsilon 0.05, baseline the 0.95
    quantile, entropy weight 0.005, Adam at 0.0005), batches of 1000, reward
    ``1 / (1 + NRMSE)``, constants fitted by BFGS, function set
    {+, -, *, /, sin, cos, exp, log} with the input variables.

    The swept knob is the number of sampled expressions (``n_expressions``; the paper
    uses 2,000,000 on Nguyen); the time budget is a soft stop, checked between
    expressions.

    Options: ``const`` (True: the ``const`` token, needed by every dataset with
    constants, as in the NeSymReS paper's DSR baseline; the DSR paper's Nguyen runs use
    False), ``function_set``, ``batch_size``, ``epsilon``, ``entropy_weight``,
    ``learning_rate``, ``hidden_size``, ``threshold``, ``min_length``, ``max_length``
    and ``max_constants`` (see :class:`~benchmarks.methods.dsr.training.DSRConfig`).
    """

    name = "dsr"
    parameter = "n_expressions"
    preload_modules = ("benchmarks.methods.dsr.training",)
    requires = ("torch", "scipy")
    install_hint = "pip install torch scipy"

    @classmethod
    def expected_cost(cls, value, n_points: int) -> float:
        # Sampling and the policy step cost the same for any data; evaluation grows with it.
        return float(value) * (64 + n_points)

    def _fit(self, X, y):
        options = dict(self.options)
        constraints = Constraints(**{k: int(options.pop(k)) for k in _CONSTRAINT_OPTIONS if k in options})
        if "function_set" in options:
            options["function_set"] = tuple(options["function_set"])
        config = DSRConfig(
            n_expressions=int(self.value), constraints=constraints, time_budget=self.time_budget, **options
        )
        self.result_ = train(X, y, config, random_state=self.random_state)
        self.program_ = Program(self.result_.library, self.result_.traversal)

    def predict(self, X):
        return self.program_(np.asarray(X, dtype=np.float64), self.result_.constants)

    def expression(self):
        return str(self.program_.sympy(self.result_.constants))
