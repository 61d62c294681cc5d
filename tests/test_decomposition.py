import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import Fitted
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.variables.assembly import assemble
from nesymres_sklearn.search.variables.decomposition import (
    decompose,
    decomposed_candidates,
    interactions,
    separable_groups,
)
from nesymres_sklearn.search.variables.surrogate import Surrogate


def _data(function, noise=0.0, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(1, 5, size=(500, n_features))
    y = function(X)
    return X, y + noise * np.std(y) * rng.normal(size=len(y))


def _additive(X):
    return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]


def _product(X):
    return X[:, 0] * X[:, 1] * X[:, 2] * X[:, 3]


def _nested(X):
    return X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] * X[:, 0]


NOISE = [0.0, 0.01]


@pytest.mark.slow
@pytest.mark.parametrize("noise", NOISE)
def test_surrogate_interpolates_a_smooth_function_on_held_out_points(noise):
    X, y = _data(_additive, noise)
    surrogate = Surrogate(X[:256], y[:256], seed=0)
    error = np.sqrt(np.mean((surrogate(X[400:]) - y[400:]) ** 2)) / np.std(y)
    assert error < 0.05
    assert np.sqrt(surrogate.error) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("noise", NOISE)
def test_additive_separation_finds_the_groups(noise):
    X, y = _data(_additive, noise)
    found = decompose(X, y, max_group=3, seed=0)
    assert found.kind == "add"
    assert found.groups == ((0, 1), (2,), (3,), (4, 5))


@pytest.mark.slow
@pytest.mark.parametrize("noise", NOISE)
def test_multiplicative_separation_of_a_product(noise):
    X, y = _data(_product, noise)
    found = decompose(X, y, max_group=3, seed=0)
    assert found.kind == "mul"
    assert found.groups == ((0,), (1,), (2,), (3,))  # x4 and x5 are flat, left out


@pytest.mark.slow
@pytest.mark.parametrize("noise", NOISE)
def test_a_shared_factor_is_not_additive_but_multiplicative(noise):
    X, y = _data(_nested, noise)  # x0 * (x1 + x2*x3)
    surrogate = Surrogate(X[:256], y[:256], seed=0)
    mixed = interactions(surrogate, X, np.random.default_rng(1)) / np.std(y)
    assert mixed[0, 2] > 0.2 and mixed[0, 1] > 0.05 and mixed[2, 3] > 0.2
    assert mixed[0, 4] < 0.02 and mixed[1, 2] < 0.02
    found = decompose(X, y, max_group=3, seed=0)
    assert found.kind == "mul"
    assert found.groups == ((0,), (1, 2, 3))


@pytest.mark.slow
def test_no_decomposition_when_groups_are_too_large_or_y_is_not_separable():
    X, y = _data(_product, 0.0)
    assert decompose(X, y - 50.0, max_group=3, seed=0) is None  # changes sign: no log
    X, y = _data(lambda X: np.sin(X.sum(axis=1)), 0.0, n_features=4)
    assert decompose(X, y, max_group=3, seed=0) is None


def test_separable_groups_are_connected_components():
    interaction = np.zeros((5, 5))
    interaction[0, 3] = interaction[3, 0] = 1.0
    interaction[3, 4] = interaction[4, 3] = 1.0
    interaction[1, 2] = interaction[2, 1] = 0.01
    assert separable_groups(interaction, 0.1) == [(0, 3, 4), (1,), (2,)]
    assert separable_groups(interaction, 0.001) == [(0, 3, 4), (1, 2)]


def test_assemble_adds_or_multiplies_parts_with_an_outer_constant():
    parts = [Skeleton(("mul", "c", "x_1")), Skeleton(("sin", "x_3"))]
    added = assemble("add", parts)
    assert added.tokens == ("add", "mul", "c", "x_1", "add", "sin", "x_3", "c")
    X = np.array([[2.0, 0.0, 0.5]])
    assert added.program(X, np.array([3.0, 1.0]))[0] == pytest.approx(6 + np.sin(0.5) + 1)
    assert assemble("mul", parts).program(X, np.array([3.0, 2.0]))[0] == pytest.approx(6 * np.sin(0.5) * 2)


def _exact_parts(part: Problem):
    """A stand-in for the network: the right skeleton for each part of the additive example."""
    columns = part.X.shape[1]
    skeleton = {
        1: Skeleton(("add", "mul", "c", "sin", "x_1", "add", "mul", "c", "x_1", "c")),
        2: Skeleton(("add", "mul", "c", "mul", "x_1", "x_2", "c")),
    }[columns]
    return [Fitted(skeleton, np.ones(skeleton.n_constants), 1.0)]


def test_decomposed_candidates_assemble_the_parts_and_refit_on_the_whole_data():
    X, y = _data(_additive, 0.0)
    [(skeleton, constants, loss)] = decomposed_candidates(Problem(X, y), 3, 0, _exact_parts, None)
    assert loss / np.var(y) < 1e-10
    assert skeleton.program(X, constants) == pytest.approx(y)
    assert {"x_1", "x_2", "x_3", "x_4", "x_5", "x_6"} <= set(skeleton.tokens)


def test_decomposed_candidates_stop_at_the_deadline():
    X, y = _data(_additive, 0.0)
    passed = Deadline(0.0, clock=lambda: 1.0)
    assert decomposed_candidates(Problem(X, y), 3, 0, _exact_parts, passed) == []
