"""The time budget of a fit: one clock, four moments, split by the search settings."""

import pytest

from nesymres_sklearn.operon.settings import OperonSettings
from nesymres_sklearn.search.budget import Budget, Deadline
from nesymres_sklearn.search.settings import SearchSettings


class FixedClock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_without_max_time_no_stage_has_a_deadline():
    budget = Budget.start(None, refined=True, clock=FixedClock(5.0))
    assert budget.started == 5.0 and budget.reserve == 0.0
    assert budget.network_end is None and budget.refinement_end is None and budget.end is None


@pytest.mark.parametrize(
    "max_time, refined, network, refinement",
    [
        (10.0, True, 0.5 * 9.7, 9.7),  # the reserve is 0.3 s at most
        (10.0, False, 9.7, 9.7),  # the network alone has all of it
        (1.0, True, 0.5 * 0.8, 0.8),  # 20% of a small budget
    ],
)
def test_the_stages_end_in_order_on_the_injected_clock(max_time, refined, network, refinement):
    clock = FixedClock(100.0)
    budget = Budget.start(max_time, refined, clock)
    assert budget.network_end.at - 100.0 == pytest.approx(network)
    assert budget.refinement_end.at - 100.0 == pytest.approx(refinement)
    assert budget.end.at == 100.0 + max_time
    assert budget.network_end.at <= budget.refinement_end.at < budget.end.at
    clock.now = 100.0 + network + 0.01
    assert budget.network_end.passed() and not budget.end.passed()
    assert budget.end.left() == pytest.approx(max_time - network - 0.01)
    assert budget.elapsed() == pytest.approx(network + 0.01)


def test_search_settings_split_the_budget():
    settings = SearchSettings(network_share=0.25, reserve_share=0.1, reserve_seconds=2.0)
    budget = settings.budget(10.0, refined=True, clock=FixedClock(0.0))
    assert budget.reserve == pytest.approx(1.0)
    assert budget.network_end.at == pytest.approx(0.25 * 9.0)
    assert settings.budget(10.0, refined=False, clock=FixedClock(0.0)).network_end.at == pytest.approx(9.0)


def test_a_deadline_reads_its_own_clock():
    clock = FixedClock(1.0)
    deadline = Deadline(2.0, clock)
    assert not deadline.passed() and deadline.left() == 1.0
    clock.now = 2.5
    assert deadline.passed() and deadline.left() == -0.5


@pytest.mark.parametrize(
    "field, value",
    [
        ("samples_per_round", 0),
        ("stale_rounds", -1),
        ("n_scaled", 1.5),
        ("network_share", 1.5),
        ("reserve_seconds", -1),
    ],
)
def test_search_settings_reject_values_out_of_range(field, value):
    with pytest.raises(ValueError, match=f"SearchSettings.{field}"):
        SearchSettings(**{field: value})


@pytest.mark.parametrize("field, value", [("population_size", 0), ("generations", 2.5), ("max_seed_share", 2.0)])
def test_operon_settings_reject_values_out_of_range(field, value):
    with pytest.raises(ValueError, match=f"OperonSettings.{field}"):
        OperonSettings(**{field: value})


def test_halfway_is_halfway_between_now_and_the_deadline_on_its_clock():
    clock = FixedClock(2.0)
    halfway = Deadline(10.0, clock).halfway()
    assert halfway.at == 6.0 and halfway.clock is clock


def test_the_budget_caps_the_beam():
    """Issue 53, item 9: beam_size=1000 at max_time=1 decoded for 1.37 s and returned a
    constant; the beam is now chosen from the budget, as below 1 s."""
    from nesymres_sklearn.search.anytime import MAX_BEAMS_PER_SECOND, MIN_BEAM, first_round_size

    assert first_round_size(1000, None) == 1000  # fixed work: the beam asked for
    assert first_round_size(32, 1.0) == 32 and first_round_size(32, 0.5) == 16  # as before
    assert first_round_size(1000, 1.0) == MAX_BEAMS_PER_SECOND
    assert first_round_size(10000, 3.0) == 3 * MAX_BEAMS_PER_SECOND
    assert first_round_size(1000, 0.1) == round(0.1 * MAX_BEAMS_PER_SECOND)  # not 100
    assert first_round_size(1000, 0.01) == MIN_BEAM


def test_a_fit_decodes_the_beam_its_budget_holds(tiny_model, monkeypatch):
    import numpy as np

    from nesymres_sklearn import NeSymReSRegressor
    from nesymres_sklearn.search import anytime

    sizes, decode = [], anytime.decode

    def recording_decode(model, points, size, *args, **kwargs):
        sizes.append(size)
        return decode(model, points, size, *args, **kwargs)

    monkeypatch.setattr(anytime, "decode", recording_decode)
    X = np.random.default_rng(0).uniform(1, 5, size=(32, 2))
    NeSymReSRegressor(model=str(tiny_model), beam_size=1000, max_time=1.0, refine=None, random_state=0).fit(
        X, X[:, 0] * np.sin(X[:, 1])
    )
    assert sizes[0] == anytime.MAX_BEAMS_PER_SECOND
