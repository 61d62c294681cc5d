"""The time budget of a fit: one clock, four moments, split by the search settings."""

import time

import pytest

from nesymres_sklearn.operon.settings import OperonSettings
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.settings import SearchSettings


class FixedClock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_without_max_time_no_stage_has_a_deadline():
    budget = SearchSettings().budget(None, refinement_seconds=1.0, clock=FixedClock(5.0))
    assert budget.started == 5.0 and budget.reserve == 0.0 and budget.refinement_seconds > 0
    assert budget.network_end is None and budget.refinement_end is None and budget.end is None


@pytest.mark.parametrize(
    "max_time, refinement_seconds, network, refinement",
    [
        (10.0, 8.0, 0.5 * 9.7, 9.7),  # the reserve is 0.3 s at most; Operon needs more than half
        (10.0, 2.0, 9.7 - 2.0, 9.7),  # Operon's whole work needs less than half: the network has the rest
        (10.0, 0.0, 9.7, 9.7),  # the network alone has all of it
        (1.0, 5.0, 0.5 * 0.8, 0.8),  # 20% of a small budget
    ],
)
def test_the_stages_end_in_order_on_the_injected_clock(max_time, refinement_seconds, network, refinement):
    clock = FixedClock(100.0)
    budget = SearchSettings().budget(max_time, refinement_seconds, clock)
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
    budget = settings.budget(10.0, refinement_seconds=100.0, clock=FixedClock(0.0))
    assert budget.reserve == pytest.approx(1.0)
    assert budget.network_end.at == pytest.approx(0.25 * 9.0)
    assert settings.budget(10.0, clock=FixedClock(0.0)).network_end.at == pytest.approx(9.0)


def test_the_default_clock_is_the_monotonic_clock_of_the_timings():
    before = time.perf_counter()
    budget = SearchSettings().budget(1.0)
    assert before <= budget.started <= time.perf_counter()


def test_the_plan_records_each_step_and_whether_a_deadline_cut_it():
    clock = FixedClock(0.0)
    budget = SearchSettings().budget(1.0, clock=clock)
    budget.record("decode 8", 0.1, budget.status(budget.network_end))
    clock.now = 2.0
    budget.record("fit 8", 1.9, budget.status(budget.network_end))
    budget.record("operon", 0.0, "skipped: no time")
    assert [(step.unit, step.status) for step in budget.plan] == [
        ("decode 8", "done"),
        ("fit 8", "cut"),
        ("operon", "skipped: no time"),
    ]
    assert budget.status(None) == "done"  # fixed work: nothing cuts


def test_a_deadline_reads_its_own_clock():
    clock = FixedClock(1.0)
    deadline = Deadline(2.0, clock)
    assert not deadline.passed() and deadline.left() == 1.0
    clock.now = 2.5
    assert deadline.passed() and deadline.left() == -0.5


@pytest.mark.parametrize(
    "field, value",
    [
        ("first_beam", 0),
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


def test_the_plan_decodes_a_narrow_beam_first_then_the_full_one():
    from nesymres_sklearn.search.anytime import beam_widths

    assert beam_widths(32, 8) == (8, 32)
    assert beam_widths(8, 8) == (8,) and beam_widths(4, 8) == (4,)


def test_a_full_beam_the_budget_does_not_hold_is_not_decoded(tiny_model, monkeypatch):
    """Issue 53, item 9: beam_size=1000 at max_time=1 decoded for 1.37 s and returned a
    constant. The plan decodes the narrow beam, and the full one only while the time
    left holds it at the narrow one's pace (here 0.1 s per beam on the injected clock)."""
    import numpy as np

    from nesymres_sklearn import NeSymReSRegressor
    from nesymres_sklearn.search import anytime, budget

    clock = FixedClock(time.perf_counter())
    monkeypatch.setattr(
        budget, "time", type("Time", (), {"perf_counter": staticmethod(clock), "process_time": staticmethod(clock)})
    )
    sizes, decode = [], anytime.decode

    def slow_decode(model, points, size, *args, **kwargs):
        sizes.append(size)
        clock.now += 0.1 * size
        return decode(model, points, size, *args, **kwargs)

    monkeypatch.setattr(anytime, "decode", slow_decode)
    X = np.random.default_rng(0).uniform(1, 5, size=(32, 2))
    y = X[:, 0] * np.sin(X[:, 1]) + np.exp(X[:, 0] / 3)
    fits = {}
    for max_time in (1.0, None):
        sizes.clear()
        regressor = NeSymReSRegressor(model=str(tiny_model), beam_size=1000, max_time=max_time, refine=None)
        plan = regressor.fit(X, y).plan_
        fits[max_time] = (list(sizes), plan)
    assert fits[1.0][0] == [8]
    assert ("decode 1000", "skipped: no time") in set(zip(fits[1.0][1]["unit"], fits[1.0][1]["status"]))
    assert fits[None][0] == [8, 1000]  # fixed work: the beam asked for


@pytest.mark.parametrize(
    "wall, cpu, pace",
    [
        (2.0, 1.0, 2.0),  # another process had the core half the time
        (1.0, 1.0, 1.0),
        (1.0, 2.0, 1.0),  # threads worked in parallel: never below 1
        (1.0, 0.0, 1.0),  # no work yet
        (10.0, 1.0, 4.0),  # waiting for worker processes: at most MAX_PACE
    ],
)
def test_the_pace_is_the_wall_seconds_per_second_of_the_process_s_work(wall, cpu, pace):
    wall_clock, cpu_clock = FixedClock(10.0), FixedClock(3.0)
    budget = SearchSettings().budget(1.0, clock=wall_clock, cpu_clock=cpu_clock)
    assert budget.pace() == 1.0
    wall_clock.now += wall
    cpu_clock.now += cpu
    assert budget.pace() == pace
