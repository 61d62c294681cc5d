"""``to_callable``: the fitted equation in NumPy, PyTorch and JAX agrees with
``predict``; torch's constants are trainable parameters; a missing backend says how to
install it."""

import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest
import sympy
import torch

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.callables import to_callable
from nesymres_sklearn.search.settings import SearchSettings


@pytest.fixture(scope="module")
def fitted(tiny_model):
    """A fit over features whose names need quoting, and points to evaluate its rows on."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(1, 5, size=(64, 2)), columns=["mass kg", "angle"])
    y = 2.5 * X["mass kg"] * np.sin(X["angle"]) + 0.3
    # the network's rows, with fitted numbers (an identity would write this law exactly)
    settings = SearchSettings(identities=False)
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=8, refine=None, random_state=0, search_settings=settings)
    reg.fit(X, y)
    points = pd.DataFrame(rng.uniform(1, 5, size=(50, 2)), columns=X.columns)
    rows = [i for i in range(min(8, len(reg.equations_))) if np.all(np.isfinite(reg.predict(points, index=i)))]
    return reg, points, rows


def test_numpy_agrees_with_predict_on_random_points(fitted):
    reg, points, rows = fitted
    assert len(rows) >= 3
    for row in rows:
        values = reg.to_callable("numpy", index=row)(points.to_numpy())
        np.testing.assert_allclose(values, reg.predict(points, index=row), rtol=1e-9, atol=1e-12)


def test_torch_agrees_with_predict_and_its_constants_are_trainable(fitted):
    reg, points, rows = fitted
    X = torch.tensor(points.to_numpy())
    for row in rows:
        module = reg.to_callable("torch", index=row)
        assert isinstance(module, torch.nn.Module)
        np.testing.assert_allclose(module(X).detach().numpy(), reg.predict(points, index=row), rtol=1e-9, atol=1e-12)
    module = reg.to_callable("torch")
    numbers = {float(n) for n in reg.expression_.atoms(sympy.Float)}
    assert set(module.constants.detach().tolist()) == numbers and len(numbers) > 0
    before = module(X).detach().clone()
    optimizer = torch.optim.SGD(module.parameters(), lr=1e-3)
    ((module(X) - 1.0) ** 2).mean().backward()
    optimizer.step()
    assert module.constants.grad is not None and not torch.equal(module(X).detach(), before)


def test_jax_agrees_with_predict(fitted):
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (pip install jax)")
    reg, points, rows = fitted
    for row in rows:
        values = np.asarray(reg.to_callable("jax", index=row)(points.to_numpy()))
        np.testing.assert_allclose(values, reg.predict(points, index=row), rtol=1e-6)


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_missing_backend_says_how_to_install_it(backend, monkeypatch):
    monkeypatch.setitem(sys.modules, backend, None)  # as if not installed
    with pytest.raises(ImportError, match=rf'backend="{backend}"\) needs {backend}, .*pip install {backend}'):
        to_callable(sympy.Symbol("x"), [sympy.Symbol("x")], backend)


def test_an_unknown_backend_or_wrong_shape_is_an_error():
    x = sympy.Symbol("x")
    with pytest.raises(ValueError, match="backend must be one of 'numpy', 'torch', 'jax', got 'tf'"):
        to_callable(x, [x], "tf")
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, 1\), got \(3, 2\)"):
        to_callable(2 * x, [x])(np.ones((3, 2)))


def test_an_equation_without_variables_gives_one_value_per_row():
    x = sympy.Symbol("x")
    assert np.array_equal(to_callable(sympy.Float(1.5), [x])(np.ones((4, 1))), np.full(4, 1.5))
    assert torch.equal(to_callable(sympy.Float(1.5), [x], "torch")(torch.ones(4, 1)).detach(), torch.full((4,), 1.5))
