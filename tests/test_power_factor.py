import numpy as np
import pytest
from clocks import TickingClock
from threadpoolctl import threadpool_info, threadpool_limits

import nesymres_sklearn.search.variables.power_factor as power_factor_module
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.search.variables.power_factor import power_factor

original_sse = power_factor_module._sse

X = np.random.default_rng(0).uniform(1, 5, (128, 6))


@pytest.mark.parametrize(
    "law, exponents, rest",
    [
        (lambda X: X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.sin(X[:, 3]) + 2), {0: 1.0, 1: 1.0, 2: -2.0}, [3]),
        (lambda X: X[:, 0] * X[:, 5] / np.sqrt(1 + X[:, 1] ** 2 / X[:, 2] ** 2), {0: 1.0, 5: 1.0}, [1, 2]),
        (lambda X: np.sqrt(X[:, 4]) * np.exp(-X[:, 0] / X[:, 1]), {4: 0.5}, [0, 1]),
    ],
)
def test_the_power_law_factor_and_the_rest_are_found(law, exponents, rest):
    split = power_factor(X, law(X), 3)
    assert split.exponents == exponents
    assert set(rest) <= set(split.rest) and len(split.rest) <= 3
    assert not set(split.rest) & set(exponents)
    # what the network gets depends on the rest only: the factor is divided out exactly
    divided = split.target(X, law(X)) * split.scale
    np.testing.assert_allclose(divided * split.monomial(X), law(X))


@pytest.mark.parametrize(
    "law, exponents, rest",
    [
        (lambda X: X[:, 0] * np.sin(X[:, 1]), {0: 1.0}, [1]),
        (lambda X: X[:, 0] * (X[:, 1] - X[:, 2]) * X[:, 3] / X[:, 4], {0: 1.0, 3: 1.0, 4: -1.0}, [1, 2]),  # II.2.42
        (lambda X: X[:, 0] * X[:, 1] * (1 / X[:, 2] - 1 / X[:, 3]), {0: 1.0, 1: 1.0}, [2, 3]),  # I.13.12
    ],
)
def test_a_factor_splits_off_a_rest_that_changes_sign(law, exponents, rest):
    # the neighbours' split: pairs of points close in the rest's columns (512 points, as FastSRB draws)
    dense = np.random.default_rng(1).uniform(1, 5, (512, 6))
    split = power_factor(dense, law(dense), 3)
    assert split.exponents == exponents and list(split.rest) == rest
    np.testing.assert_allclose(split.target(dense, law(dense)) * split.scale * split.monomial(dense), law(dense))


@pytest.mark.parametrize(
    "law",
    [
        lambda X: X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3],  # a sum: no factor splits off
        lambda X: X[:, 0] * np.exp(-X[:, 1] * X[:, 2] / (X[:, 3] * X[:, 4])),  # too many columns in the rest
        lambda X: X[:, 0] * X[:, 1] * X[:, 2] / X[:, 4],  # a power law of every column: the power-law candidate's
        lambda X: X[:, 0] * np.sin(X[:, 1]) + X[:, 2],  # y changes sign, and no factor splits off
        lambda X: X[:, 0] ** 1.3 * np.cos(X[:, 1]) ** 2,  # an exponent that is not a multiple of one half
    ],
)
def test_no_split_where_the_data_show_none(law):
    assert power_factor(X, law(X), 3) is None


def test_at_most_the_networks_variables_means_no_split():
    assert power_factor(X[:, :3], X[:, 0] * (np.sin(X[:, 1]) + 2), 3) is None


def test_the_network_solves_the_rest_and_the_law_comes_back_whole():
    y = 2.5 * X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.cos(X[:, 3]) + 2)
    with pytest.warns(UserWarning, match="with y divided by a power law of x0, x1, x2"):
        fitted = NeSymReSRegressor(refine=None, random_state=0).fit(X, y)
    assert list(fitted.features_seen_by_network_) == [3]
    assert fitted.score(X, y) > 1 - 1e-10
    assert {str(s) for s in fitted.expression_.free_symbols} == {"x0", "x1", "x2", "x3"}


def test_the_split_holds_under_noise():
    y = X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.sin(X[:, 3]) + 2)
    noisy = y + np.random.default_rng(1).normal(0, 0.01 * np.std(y), len(y))
    split = power_factor(X, noisy, 3)
    true = {0: 1.0, 1: 1.0, 2: -2.0}
    # each column is in the factor with its true exponent, or left to the network
    assert split.exponents and split.exponents.items() <= true.items() and 3 in split.rest
    assert set(true) - set(split.exponents) <= set(split.rest)


def test_a_deadline_that_passes_ends_the_split_between_its_fits(monkeypatch):
    """Issue 65: 33 least-squares fits of a 20-feature problem ran past ``max_time``."""
    law = lambda X: X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.sin(X[:, 3]) + 2)  # noqa: E731
    assert power_factor(X, law(X), 3, deadline=Deadline(10.0, TickingClock())) is not None  # time enough
    fits = []
    monkeypatch.setattr(
        power_factor_module, "_sse", lambda *args: fits.append(1) or original_sse(*args)
    )  # count the fits
    assert power_factor(X, law(X), 3, deadline=Deadline(0.0, TickingClock())) is None
    assert len(fits) == 1  # the base fit; none of the columns' after the deadline


def test_a_fit_runs_its_least_squares_on_one_blas_thread(tiny_model, monkeypatch):
    """Several BLAS threads beside a busy core made the split 12 times slower (issue 65)."""
    threads = []

    def recording(*args):
        threads.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")
        return original_sse(*args)

    monkeypatch.setattr(power_factor_module, "_sse", recording)
    law = lambda X: X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.sin(X[:, 3]) + 2)  # noqa: E731
    regressor = NeSymReSRegressor(model=str(tiny_model), beam_size=2, n_restarts=1, refine=None, random_state=0)
    with threadpool_limits(limits=2, user_api="blas"), pytest.warns(UserWarning, match="X has 6 features"):
        regressor.fit(X, law(X))
        assert all(pool["num_threads"] == 2 for pool in threadpool_info() if pool["user_api"] == "blas")
    assert threads and set(threads) == {1}


def test_the_settings_tolerance_of_the_exponents_decides_the_split():
    """Fitted exponents are never exactly halves: with no tolerance no split stands."""
    law = X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.sin(X[:, 3]) + 2)
    assert power_factor(X, law, 3, settings=SearchSettings()).exponents == {0: 1.0, 1: 1.0, 2: -2.0}
    assert power_factor(X, law, 3, settings=SearchSettings(power_factor_exponent_tolerance=0.0)) is None
