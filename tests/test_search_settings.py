"""The search's knobs (:mod:`nesymres_sklearn.search.settings`): the bound of the beam, every
field documented, a knob out of its range refused by name."""

import re
import warnings
from dataclasses import fields

import numpy as np
import pytest

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.operon.settings import OperonSettings
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


@pytest.mark.parametrize("settings_class", [SearchSettings, OperonSettings])
def test_every_field_is_documented_in_the_class_docstring(settings_class):
    """Each knob says what it does and what chose its value (issue 66): an entry of the
    docstring's Attributes names it (``name : type`` or ``a, b : type``)."""
    entries = re.findall(r"^    (\w+(?:, \w+)*) : ", settings_class.__doc__, flags=re.MULTILINE)
    documented = {name for entry in entries for name in entry.split(", ")}
    assert {field.name for field in fields(settings_class)} - documented == set()
    assert documented - {field.name for field in fields(settings_class)} == set()


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("scaled_min_gain", 1.0, r"in \[0, 1\)"),
        ("scaled_min_gain", -0.1, r"in \[0, 1\)"),
        ("selection_margin", -0.01, "non-negative"),
        ("pruning_score_rise", -1.0, "non-negative"),
        ("support_gain_ratio", float("nan"), "non-negative"),
        ("support_max_gain", -0.1, "non-negative"),
        ("reduction_min_seconds", -0.4, "non-negative"),
        ("reduction_min_r2", 1.5, r"in \[0, 1\)"),
        ("reduction_max_error_ratio", -0.5, "non-negative"),
        ("reduction_left_out_slack", -1.0, "non-negative"),
        ("reduction_left_out_floor", -0.01, "non-negative"),
        ("reduction_max_left_out", -0.1, "non-negative"),
        ("power_factor_min_r2", 1.0, r"in \[0, 1\)"),
        ("power_factor_exponent_tolerance", 0.25, r"in \[0, 0.25\)"),
        ("power_factor_min_departure", -0.05, "non-negative"),
        ("power_factor_neighbour_unexplained", -0.1, "non-negative"),
        ("decompose_min_r2", -0.1, r"in \[0, 1\)"),
        ("decompose_tolerance", -0.05, "non-negative"),
        ("parts_complexity_penalty", -0.01, "non-negative"),
        ("units_joined_score_rise", -1.5, "non-negative"),
        ("units_min_dependence", 1.0, r"in \[0, 1\)"),
        ("units_dependence_sigmas", -3.0, "non-negative"),
        ("units_typical_share", 0.0, r"in \(0, 1\]"),
        ("units_typical_share", 1.5, r"in \(0, 1\]"),
        ("start_range", -5.0, "non-negative"),
        ("power_factor_small_share", 1.0, r"in \[0, 1\)"),
        ("power_factor_neighbour_kept", 0.0, r"in \(0, 1\]"),
        ("units_neighbours", 0, "an integer of at least 1"),
        ("units_neighbours", 5.0, "an integer of at least 1"),
        ("identity_overdetermined", 0, "an integer of at least 1"),
        ("identity_overdetermined", 2.0, "an integer of at least 1"),
        ("identity_power_law_r2", 1.0, r"in \[0, 1\)"),
        ("identity_power_law_r2", -0.1, r"in \[0, 1\)"),
        ("identity_angle_span", -1.0, "non-negative"),
        ("identity_wide_turns", 0.5, "at least 1"),
        ("identity_wide_turns", float("nan"), "at least 1"),
        ("readable_max_change", -1e-3, "non-negative"),
        ("readable_max_change", float("nan"), "non-negative"),
        ("readable_max_plain", 0, "an integer of at least 1"),
        ("snap_chance", -0.05, "non-negative"),
        ("snap_chance", float("nan"), "non-negative"),
    ],
)
def test_a_knob_out_of_its_range_is_refused_by_name(name, value, expected):
    with pytest.raises(ValueError, match=rf"SearchSettings\.{name} must .*{expected}"):
        SearchSettings(**{name: value})


@pytest.mark.parametrize("value", [0, 2.0])
def test_operon_growth_must_be_a_positive_integer(value):
    with pytest.raises(ValueError, match="OperonSettings.max_growth must be a positive integer"):
        OperonSettings(max_growth=value)


def test_the_knobs_at_their_edges_are_accepted():
    edges = SearchSettings(
        scaled_min_gain=0.0, selection_margin=0.0, reduction_min_r2=0.0, power_factor_exponent_tolerance=0.0,
        units_typical_share=1.0, units_min_dependence=0.0, units_dependence_sigmas=0.0,
        identity_overdetermined=1, identity_power_law_r2=0.0, identity_angle_span=0.0, identity_wide_turns=1,
        readable_max_change=0.0, readable_max_plain=1,
    )  # fmt: skip
    assert (edges.units_typical_share, edges.power_factor_exponent_tolerance) == (1.0, 0.0)
    assert (edges.identity_wide_turns, edges.readable_max_plain) == (1, 1)
    assert OperonSettings(max_growth=1).max_growth == 1


def test_subset_features_beyond_what_is_ranked_at_once_are_refused():
    from nesymres_sklearn.search.settings import MAX_SUBSET_FEATURES

    assert SearchSettings(subset_features=MAX_SUBSET_FEATURES).subset_features == MAX_SUBSET_FEATURES
    beyond = MAX_SUBSET_FEATURES + 1
    with pytest.raises(ValueError, match=rf"subset_features must be at most {MAX_SUBSET_FEATURES}, got {beyond}"):
        SearchSettings(subset_features=beyond)
    with pytest.raises(ValueError, match="subset_features must be an integer of at least 0"):
        SearchSettings(subset_features=-1)
