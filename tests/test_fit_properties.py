"""Properties of ``fit`` over drawn data (hypothesis): laws, offsets of ``y``, scales of
``X`` and ``y``, allowed operators. On finite data the fit never raises, predicts finite
values on its training points where its law is defined, and prints a law whose
functions are among the allowed ones (issue 65: an offset of 1e9 crashed inside Operon,
and a ``cos`` the user had excluded came back from SymPy's evaluation)."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.operators import function_tokens
from nesymres_sklearn.operon.settings import OperonSettings

LAWS = {
    "x0*sin(x1)": lambda X: X[:, 0] * np.sin(X[:, 1]),
    "2.5*x0*cos(x1) + 1": lambda X: 2.5 * X[:, 0] * np.cos(X[:, 1]) + 1,
    "exp(-x0)*x1**2": lambda X: np.exp(-X[:, 0]) * X[:, 1] ** 2,
    "x0/x1": lambda X: X[:, 0] / X[:, 1],
    "log(x0) + x1**3": lambda X: np.log(X[:, 0]) + X[:, 1] ** 3,
}
OPERATOR_SETS = [None, ["add", "sub", "mul", "div", "sin"], ["add", "mul", "exp"], ["pow"], ["add", "mul", "ln"]]


@pytest.mark.slow
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    law=st.sampled_from(sorted(LAWS)),
    offset=st.sampled_from([0.0, 1e3, -1e6, 1e9, 1e12]),
    y_power=st.integers(-6, 6),
    x_power=st.integers(-3, 3),
    operators=st.sampled_from(OPERATOR_SETS),
    refine=st.sampled_from([None, "operon"]),
    seed=st.integers(0, 3),
)
@example(law="x0*sin(x1)", offset=1e9, y_power=0, x_power=0, operators=None, refine="operon", seed=1)  # issue 65
@example(law="x0*sin(x1)", offset=1e12, y_power=0, x_power=0, operators=None, refine="operon", seed=2)
def test_a_fit_on_finite_data_never_raises_and_prints_allowed_functions(
    tiny_model, law, offset, y_power, x_power, operators, refine, seed
):
    X = np.random.default_rng(seed).uniform(1, 5, size=(60, 2))
    y = offset + 10.0**y_power * LAWS[law](X)
    X = X * 10.0**x_power
    regressor = NeSymReSRegressor(
        model=str(tiny_model), beam_size=2, n_restarts=1, refine=refine, random_state=seed, operators=operators,
        operon_settings=OperonSettings(population_size=20, generations=2),
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny model's misses and Operon's absence are warnings
        regressor.fit(X, y)
        predicted = regressor.predict(X)
    assert predicted.shape == y.shape
    if operators is not None:
        allowed = {token for name in operators for token in {"sub": ("add", "mul")}.get(name, (name,))}
        assert function_tokens(regressor.expression_) <= allowed, regressor.expression_
