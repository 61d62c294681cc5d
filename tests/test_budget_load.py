"""A budget that a slow machine spends early: the steps that cannot be cut start only
when the time left holds them (issue 65, item 4), on the injected clock of the fit
(``manual_clock``: decodings take 10 s of it, nothing else any time)."""

import numpy as np
import pytest

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.settings import SearchSettings


def _fit(tiny_model, xy, max_time, settings=None, beam_size=8):
    X, y = xy
    return NeSymReSRegressor(
        model=str(tiny_model), beam_size=beam_size, max_time=max_time, refine=None, random_state=0,
        search_settings=settings,
    ).fit(X, y)  # fmt: skip


def _steps(fitted) -> dict[str, str]:
    return dict(zip(fitted.plan_["unit"], fitted.plan_["status"]))


def test_a_network_end_too_close_for_the_route_and_a_decoding_skips_the_network(tiny_model, xy, manual_clock):
    # max_time 0.05: the network's end is 0.04 s after the start, under network_min_seconds
    fitted = _fit(tiny_model, xy, 0.05)
    steps = _steps(fitted)
    assert steps["network"] == "skipped: no time"
    assert not any(unit.startswith(("route", "decode")) for unit in steps)
    assert np.all(np.isfinite(fitted.predict(xy[0])))  # a sane model still: the plain rows


def test_the_network_runs_where_its_minimum_is_lowered(tiny_model, xy, manual_clock):
    settings = SearchSettings(network_min_seconds=0.0, first_decode_seconds=0.0)
    steps = _steps(_fit(tiny_model, xy, 0.05, settings))
    assert "network" not in steps and steps["decode 8"] == "done"


def test_a_first_decoding_that_the_time_left_cannot_hold_does_not_start_nor_a_wider_one(tiny_model, xy, manual_clock):
    # the narrow beam of 8, then the full one of 16: with no first decoding, no pace to judge the second by
    late = _steps(_fit(tiny_model, xy, 100.0, SearchSettings(first_decode_seconds=200.0), beam_size=16))
    assert late["decode 8"] == late["decode 16"] == "skipped: no time"
    in_time = _steps(_fit(tiny_model, xy, 100.0, beam_size=16))
    assert in_time["decode 8"] == "done" and in_time["decode 16"] == "done"


class _BusyMachine:
    """The budget's clocks (``time.perf_counter``, ``time.process_time``): the wall clock
    moves ``pace`` times as fast as this process's CPU seconds when it works."""

    def __init__(self, pace: float):
        self.now, self.cpu, self.rate = 100.0, 0.0, pace

    def perf_counter(self) -> float:
        return self.now

    def process_time(self) -> float:
        return self.cpu

    def work(self, seconds: float) -> None:
        self.now += seconds
        self.cpu += seconds / self.rate


@pytest.mark.parametrize("pace, skipped", [(1.0, False), (2.0, True)])
def test_the_network_s_minimum_is_judged_at_the_fit_s_pace(tiny_model, xy, monkeypatch, pace, skipped):
    from nesymres_sklearn import pipeline
    from nesymres_sklearn.search import budget

    machine = _BusyMachine(pace)
    monkeypatch.setattr(budget, "time", machine)
    identities = pipeline.identity_rows

    def slow_identities(*args, **kwargs):
        machine.work(0.7)  # 0.1 s left before the network's end (0.8 s): 0.06 s fits, twice that does not
        return identities(*args, **kwargs)

    monkeypatch.setattr(pipeline, "identity_rows", slow_identities)
    steps = _steps(_fit(tiny_model, xy, 1.0))
    assert (steps.get("network") == "skipped: no time") == skipped
    assert ("decode 8" in steps) != skipped


@pytest.mark.parametrize("route_seconds, looked", [(0.0, True), (5.0, False)])
def test_a_second_look_waits_for_the_time_of_a_decoding_and_of_the_route(
    tiny_model, manual_clock, monkeypatch, route_seconds, looked
):
    from nesymres_sklearn import pipeline

    route = pipeline.route

    def slow_route(*args, **kwargs):  # ranking 5 features for the network's 3 variables
        manual_clock.advance(route_seconds)
        return route(*args, **kwargs)

    monkeypatch.setattr(pipeline, "route", slow_route)
    X = np.random.default_rng(0).uniform(-3, 3, (64, 5))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] ** 2  # the network reads the 3 most relevant
    # the network's end 27 s after the start (0.3 s kept for the selection); the first decoding
    # takes 10 s: 17 s are then left after a quick route (a look's 10 s fit), 12 s after a
    # 5-second one (the look's decoding and route, 15 s, do not)
    fitted = NeSymReSRegressor(model=str(tiny_model), max_time=27.3, refine=None, random_state=0).fit(X, y)
    steps = _steps(fitted)
    assert (steps["residual"] != "skipped: no time") == looked
