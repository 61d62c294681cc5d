"""The selected equation as a person writes it: units folded into the constants, one
canonical SymPy expression that survives pickling."""

import pickle
import warnings

import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.writing.readable import fold_float_factors

x0, x1 = sympy.symbols("x0 x1", real=True)
RNG = np.random.default_rng(0)
X_LOG = RNG.uniform(1, 100, (200, 1))
X_SQRT = RNG.uniform(0, 100, (200, 1))
X_POWERS = RNG.uniform(1, 20, (200, 2))
X_OFFSET = RNG.uniform(0, 10, (200, 2))
X_SMALL = RNG.uniform(1, 5, (200, 2))


@pytest.mark.slow
@pytest.mark.parametrize(
    "X, y, expected",
    [
        (X_LOG, np.log(X_LOG[:, 0]), sympy.log(x0)),
        (X_SQRT, np.sqrt(X_SQRT[:, 0]), sympy.sqrt(x0)),
        (X_POWERS, X_POWERS[:, 0] ** 5 / X_POWERS[:, 1] ** 3, x0**5 / x1**3),
        (X_OFFSET, X_OFFSET[:, 0] ** 2 * X_OFFSET[:, 1] + 1000, x0**2 * x1 + 1000),
        (X_SMALL, 0.001 * X_SMALL[:, 0] * np.sin(X_SMALL[:, 1]), x0 * sympy.sin(x1) / 1000),
    ],
    ids=["log", "sqrt", "powers", "offset", "small"],
)
def test_the_units_are_folded_and_the_equation_survives_pickling(X, y, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        regressor = NeSymReSRegressor(random_state=0).fit(X, y)
    assert regressor.expression_ == expected
    assert not regressor.expression_.atoms(sympy.Float)  # no 10.0 or 3.16227766016838 left over
    unpickled = pickle.loads(pickle.dumps(regressor))
    assert unpickled.expression_ == regressor.expression_ and str(unpickled.expression_) == str(regressor.expression_)
    assert unpickled.equations_.loc[unpickled.best_index_, "expression"] == regressor.expression_


def test_unscaling_with_evaluation_writes_powers_of_ten_exactly():
    scaling = Scaling((10.0, 0.001), 100.0)
    written = scaling.unscale_expression(sympy.log(10 * x0) + x1, [x0, x1], evaluate=True)
    assert written == 100 * (sympy.log(x0) + 1000 * x1)
    as_written = scaling.unscale_expression(sympy.log(10 * x0), [x0, x1])
    assert sympy.Float(10.0) in as_written.atoms(sympy.Float)  # the raw form keeps the rescaling visible


def test_float_factors_mixed_with_irrationals_become_one_float():
    folded = fold_float_factors(sympy.Float(0.5) * sympy.sqrt(2) * sympy.sin(x0) + x1)
    assert folded == sympy.Float(0.5 * 2**0.5) * sympy.sin(x0) + x1
    exact = sympy.sqrt(2) * sympy.exp(-(x0**2) / 2) / (2 * sympy.sqrt(sympy.pi))
    assert fold_float_factors(exact) == exact  # exact constants stay exact


def test_a_term_a_millionth_of_the_variance_is_found_in_the_remainder():
    """docs/usage.md: in sin(x0) + x1 with x1 in [1000, 2000], sin is a wiggle the
    network cannot see beside x1; fitted on its own, the remainder is sin(x0)."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(1, 5, 200), rng.uniform(1000, 2000, 200)])
    y = np.sin(X[:, 0]) + X[:, 1]
    assert np.var(np.sin(X[:, 0])) / np.var(y) < 1e-5
    remainder = NeSymReSRegressor(refine=None, random_state=0).fit(X, y - X[:, 1])
    assert remainder.expression_ == sympy.sin(x0)
