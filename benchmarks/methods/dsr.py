"""Deep symbolic regression through the ``dso`` package's ``DeepSymbolicRegressor``.

Settings of appendix "Baselines": risk factor epsilon 0.05, entropy coefficient 0.005,
function set {+, -, *, /, sin, cos, exp, ln, const} (constants optimised). The swept
knob is the number of epochs (2^2 .. 2^7 in the paper): ``n_samples = epochs *
batch_size``. ``dso`` needs TensorFlow 1.x, which does not install on current Python;
where it is missing the runner records "not installed".
"""

from __future__ import annotations

import numpy as np

from .base import Adapter, rename_features

FUNCTION_SET = ["add", "sub", "mul", "div", "sin", "cos", "exp", "log", "const"]


class DSRAdapter(Adapter):
    """Options: ``batch_size`` (1000) and a ``config`` dict merged into dso's config."""

    name = "dsr"
    parameter = "epochs"
    requires = ("dso", "tensorflow")
    install_hint = (
        "dso needs TensorFlow 1.x: pip install 'dso @ git+https://github.com/dso-org/deep-symbolic-optimization'"
    )

    def _fit(self, X, y):
        from dso import DeepSymbolicRegressor

        batch_size = int(self.options.get("batch_size", 1000))
        config = {
            "experiment": {"seed": int(self.random_state)},
            "task": {"task_type": "regression", "function_set": FUNCTION_SET},
            "training": {
                "n_samples": int(self.value) * batch_size,
                "batch_size": batch_size,
                "epsilon": 0.05,
                "n_cores_batch": 1,
            },
            "policy_optimizer": {"entropy_weight": 0.005},
        }
        for section, values in self.options.get("config", {}).items():
            config.setdefault(section, {}).update(values)
        self.model_ = DeepSymbolicRegressor(config)
        self.model_.fit(X, y)

    def predict(self, X):
        with np.errstate(all="ignore"):
            return np.asarray(self.model_.predict(X), dtype=np.float64)

    def expression(self):
        # dso names the inputs x1, x2, ...; some versions return one expression per output.
        expr = self.model_.program_.sympy_expr
        if isinstance(expr, (list, tuple)):
            expr = expr[0]
        return str(rename_features(expr, offset=1))
