"""The search's knobs (:mod:`nesymres_sklearn.search.settings`): the bound of the beam."""

import warnings

import numpy as np
import pytest

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.settings import SearchSettings

BUNDLED_BYTES_PER_BEAM = 3 * 2 * 60 * 128 * 4  # the bundled model's decoder: layers, keys and values, length, width


def test_a_beam_within_both_bounds_is_kept_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SearchSettings().bounded_beam(32, BUNDLED_BYTES_PER_BEAM) == 32
        assert SearchSettings().bounded_beam(4096, BUNDLED_BYTES_PER_BEAM) == 4096


def test_a_runaway_beam_is_bounded_by_time_with_a_warning_that_says_how_to_raise_it():
    with pytest.warns(
        UserWarning, match=r"beam_size=100000 is more than the 4096 .*SearchSettings.max_beam.*decodes 4096"
    ):
        assert SearchSettings().bounded_beam(100_000, BUNDLED_BYTES_PER_BEAM) == 4096


def test_a_beam_of_a_large_model_is_bounded_by_memory():
    with pytest.warns(UserWarning, match=r"the 1000 whose decoding state fits in 1e\+09 bytes .*beam_memory"):
        assert SearchSettings().bounded_beam(100_000, 1e6) == 1000
    assert SearchSettings(beam_memory=1.0).bounded_beam(3, 1e6) == 1  # one beam at least


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"max_beam": 0}, "max_beam must be an integer of at least 1"),
        ({"beam_memory": 0}, "beam_memory must be positive"),
    ],
)
def test_bounds_that_hold_no_beam_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        SearchSettings(**settings)


def test_the_estimator_decodes_the_bounded_beam(tiny_model):
    """``beam_size=100000`` used to decode and fit every beam (past 240 s and 10 GB)."""
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 2))
    regressor = NeSymReSRegressor(
        model=str(tiny_model), beam_size=100_000, n_restarts=1, refine=None, random_state=0,
        search_settings=SearchSettings(max_beam=6, first_beam=4),
    )  # fmt: skip
    with pytest.warns(UserWarning, match="beam_size=100000 is more than the 6"):
        regressor.fit(X, X[:, 0] * np.sin(X[:, 1]))
    decoded = [unit for unit in regressor.plan_["unit"] if unit.startswith("decode")]
    assert decoded == ["decode 4", "decode 6"]
