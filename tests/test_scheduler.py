"""The continuation's scheduler (:mod:`nesymres_sklearn.search.scheduler`) with sources
that cost time on an injected clock: turns by what each source adds, stopping, the
steps in the plan, fixed work, trimming and the progress lines."""

import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.budget import Budget
from nesymres_sklearn.search.fitted import CandidateRows, Fitted
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.scheduler import (
    Scheduler,
    Shares,
    StopCondition,
    best_score,
    data_fingerprint,
    trimmed,
)
from nesymres_sklearn.search.selection.final import writing_seconds


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


PROBLEM = Problem(np.linspace(1, 2, 20)[:, None], np.linspace(1, 2, 20) ** 2)


def rows_of(*losses, length=3):
    rows = CandidateRows()
    for loss in losses:
        rows.add(Fitted(Skeleton(("mul", "c", "x_1")[:length]), np.array([1.0]), loss), origin="test")
    return rows


class FakeSource:
    """A source whose turns cost ``seconds`` of the clock and return rows of these ``losses`` in turn."""

    def __init__(self, name, clock, seconds, losses):
        self.name, self.clock, self.seconds, self.losses = name, clock, seconds, list(losses)
        self.turns, self.deadlines, self.seen_rows, self.asked = [], [], [], []

    def holds(self, deadline, turn):
        self.asked.append(turn)
        return deadline is None or deadline.holds(self.seconds)

    def propose(self, rows, turn, deadline):
        self.turns.append(turn)
        self.deadlines.append(deadline)
        self.seen_rows.append(len(rows))
        self.clock.now += self.seconds
        loss = self.losses[min(turn, len(self.losses) - 1)]
        return rows_of(loss)


def budget(clock, max_time):
    """``max_time`` for the turns, and half a second more for the selection's writing of their rows."""
    return Budget(
        clock(), None if max_time is None else max_time + 0.5, 0.0, 0.5, 0.0, 0.0, clock=clock, cpu_clock=clock
    )  # 0.5 s: writing; the process works all the time (the pace is 1)


def test_turns_go_to_the_source_that_adds_until_the_budget_ends():
    clock = Clock()
    adds = FakeSource("adds", clock, 1.0, [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9])
    idle = FakeSource("idle", clock, 1.0, [10.0])
    plan = budget(clock, 10.0)
    found = Scheduler([idle, adds], PROBLEM, 0.01, plan).run(rows_of(1.0))
    assert len(idle.turns) + len(adds.turns) == 10  # every second of the budget
    assert len(adds.turns) > 2 * len(idle.turns) >= 2
    assert adds.turns == list(range(len(adds.turns)))
    for source in (adds, idle):  # each is asked whether it holds the turn it would take next
        assert set(source.turns) <= set(source.asked) and max(source.asked) == len(source.turns)
    assert min(found.losses) == adds.losses[min(len(adds.turns), len(adds.losses)) - 1]
    units = [step.unit for step in plan.plan]
    assert units[0] == "continue: idle 0" and "continue: adds 0" in units
    assert plan.plan[-1].status == "stopped: the time left holds no turn"


def test_each_turn_sees_the_rows_so_far_and_ends_at_the_refinement_end():
    clock = Clock()
    source = FakeSource("only", clock, 2.0, [0.5])
    plan = Budget(clock(), 10.0, 0.0, 0.5, reserve_share=0.2, reserve_seconds=1.0, clock=clock, cpu_clock=clock)
    Scheduler([source], PROBLEM, 0.01, plan).run(rows_of(1.0, 2.0))
    assert source.seen_rows == [2, 3, 4, 5]  # 9 s to the refinement's end hold four turns of 2 s
    # each turn ends at the refinement's end, less the writing of the rows found so far
    expected = [plan.refinement_end.at - writing_seconds(rows_of(*[0.5] * turn)) for turn in range(4)]
    assert [deadline.at for deadline in source.deadlines] == pytest.approx(expected)


def test_on_a_busy_machine_the_turns_keep_the_reserve_at_the_fits_pace():
    # the process works half of the clock's seconds (another shares its core): the
    # selection's steps, held by the reserve's 1 s when idle, take twice as long
    clock = Clock()
    source = FakeSource("only", clock, 2.0, [0.5])
    plan = Budget(
        clock(), 10.0, 0.0, 0.5, reserve_share=0.2, reserve_seconds=1.0, clock=clock, cpu_clock=lambda: clock.now / 2
    )
    Scheduler([source], PROBLEM, 0.01, plan).run(rows_of(1.0, 2.0))
    assert source.seen_rows == [2, 3, 4]  # 8 s left for the turns: three of 2 s
    expected = [plan.refinement_end.at - 1.0 - 2 * writing_seconds(rows_of(*[0.5] * turn)) for turn in range(3)]
    assert [deadline.at for deadline in source.deadlines[1:]] == pytest.approx(expected[1:])


@pytest.mark.parametrize(
    "condition, turns",
    [(None, 8), (2e-3, 3), (lambda loss, complexity: loss < 2e-3 and complexity <= 3, 3), (lambda *_: False, 8)],
)
def test_the_users_condition_stops_the_search(condition, turns):
    clock = Clock()
    source = FakeSource("s", clock, 1.0, [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10])
    plan = budget(clock, 8.0)
    Scheduler([source], PROBLEM, 0.01, plan, StopCondition(condition)).run(rows_of(1.0))
    assert len(source.turns) == turns
    if turns < 8:
        assert plan.plan[-1].status == "stopped: early_stop_condition"


def test_the_condition_reads_losses_in_the_units_of_y():
    rows = rows_of(1e-3)
    assert StopCondition(1.0, loss_scale=1e4).met(rows) is False
    assert StopCondition(10.0, loss_scale=1e4).met(rows) is True
    assert StopCondition(None).met(rows) is False


def test_an_exact_row_stops_the_search_before_any_turn():
    clock = Clock()
    source = FakeSource("s", clock, 1.0, [0.5])
    plan = budget(clock, 8.0)
    found = Scheduler([source], PROBLEM, 0.01, plan).run(rows_of(0.0, 1.0))
    assert source.turns == [] and len(found) == 0
    assert [(step.unit, step.status) for step in plan.plan] == [("continue", "stopped: a row is exact to rounding")]


def test_without_max_time_it_runs_the_steps_asked_for_and_none_by_default():
    clock = Clock()
    source = FakeSource("s", clock, 1.0, [0.5])
    plan = budget(clock, None)
    assert len(Scheduler([source], PROBLEM, 0.01, plan).run(rows_of(1.0))) == 0
    assert source.turns == [] and plan.plan == []
    Scheduler([source], PROBLEM, 0.01, plan, steps=3).run(rows_of(1.0))
    assert source.turns == [0, 1, 2] and source.deadlines == [None] * 3


def test_fixed_work_shares_count_turns_not_seconds():
    """Without ``max_time`` the shares count turns, so the order of turns does not depend
    on the clock: the same in every run."""
    orders = []
    for seconds in (1.0, 7.0):
        clock = Clock()
        sources = [FakeSource("a", clock, seconds, [0.9]), FakeSource("b", clock, 1.0, [0.9])]
        plan = budget(clock, None)
        Scheduler(sources, PROBLEM, 0.01, plan, steps=6).run(rows_of(1.0))
        orders.append([step.unit for step in plan.plan])
    assert orders[0] == orders[1]
    assert sorted(orders[0]) == sorted([f"continue: {name} {t}" for name in "ab" for t in range(3)])


def test_a_larger_budget_runs_the_smaller_ones_turns_and_more():
    runs = []
    for max_time in (5.0, 9.0, 20.0):
        clock = Clock()
        sources = [
            FakeSource("a", clock, 1.0, [0.5, 0.1, 0.05, 0.01, 0.001, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]),
            FakeSource("b", clock, 2.0, [0.4, 0.3, 0.02, 0.002, 2e-4, 2e-5, 2e-6, 2e-7]),
        ]
        plan = budget(clock, max_time)
        found = Scheduler(sources, PROBLEM, 0.01, plan).run(rows_of(1.0))
        runs.append(([step.unit for step in plan.plan if step.unit != "continue"], best_score(found, PROBLEM, 0.01)))
    for (small, small_score), (large, large_score) in zip(runs, runs[1:]):
        assert large[: len(small)] == small and len(large) > len(small)
        assert large_score <= small_score


def test_trimmed_keeps_the_best_and_the_front():
    rows = CandidateRows()
    for length, loss in [(1, 5.0), (3, 1.0), (3, 2.0), (5, 0.5), (7, 0.4), (7, 3.0), (9, 0.45)]:
        tokens = (
            ("c",) if length == 1 else ("mul",) * ((length - 1) // 2) + ("c", "x_1") + ("x_1",) * ((length - 3) // 2)
        )
        rows.add(Fitted(Skeleton(tokens), np.ones(tokens.count("c")), loss), origin="t")
    kept = trimmed(rows, PROBLEM, 0.01, keep=2)
    assert sorted(kept.losses) == [0.4, 0.45, 1.0, 5.0]  # the two best, and the simplest two of the front
    assert len(trimmed(rows, PROBLEM, 0.01, keep=10)) == len(rows)


def test_shares_describe_what_each_source_spent():
    shares = Shares()
    shares.record("operon", 3.0, 0.5)
    shares.record("network", 1.0, -1.0)
    assert shares.described() == "operon 75%, network 25%"
    assert shares.weight("operon") == 1.5 and shares.weight("network") == 1.0
    assert shares.next(["operon", "network"]) == "network"


def test_progress_lines_at_most_once_per_interval():
    clock = Clock()
    source = FakeSource("s", clock, 0.25, [0.5, 0.25, 0.125])
    lines = []
    plan = budget(clock, 3.0)
    Scheduler([source], PROBLEM, 0.01, plan, StopCondition(None, loss_scale=4.0), report=lines.append).run(rows_of(1.0))
    assert len(source.turns) == 13 and len(lines) == 3  # 3.25 s of turns, a line at 1, 2 and 3 s
    assert lines[0].startswith("1.0s: best loss 0.5 at complexity 3; sources s 100%")


def test_data_fingerprint_tells_data_apart():
    X = np.arange(6.0).reshape(3, 2)
    assert data_fingerprint(X, None) == data_fingerprint(X.copy(), None)
    assert data_fingerprint(X, None) != data_fingerprint(X.T.copy(), None)
    assert data_fingerprint(X, None) != data_fingerprint(X, ["m", "s"])


class FreeSource(FakeSource):
    """A source whose turns cost no time and add nothing."""

    def propose(self, rows, turn, deadline):
        self.turns.append(turn)
        return CandidateRows()


def test_a_source_whose_turns_cost_and_find_nothing_gives_way_then_retires():
    clock = Clock()
    free, real = FreeSource("free", clock, 0.0, []), FakeSource("real", clock, 1.0, [0.5])
    plan = budget(clock, 5.0)
    Scheduler([free, real], PROBLEM, 0.01, plan, least_charge=0.5, idle_turns=3).run(rows_of(1.0))
    assert len(real.turns) == 5 and len(free.turns) == 3  # three empty turns, then none
    assert plan.plan[-1].status == "stopped: the time left holds no turn"


def test_turns_add_only_the_rows_the_user_allows():
    """A row the restrictions refuse neither joins, nor ends the search as exact."""
    clock = Clock()
    source = FakeSource("s", clock, 1.0, [0.0, 0.5])  # its first turn finds an exact row

    def allowed(rows):
        return rows.where(lambda skeleton, constants, loss: loss > 0)

    found = Scheduler([source], PROBLEM, 0.01, budget(clock, 3.0), kept=allowed).run(rows_of(1.0))
    assert len(source.turns) == 3 and sorted(found.losses) == [0.5, 0.5]


def test_a_first_finite_row_credits_no_infinite_drop():
    clock = Clock()
    first = FakeSource("a", clock, 1.0, [0.5])
    scheduler = Scheduler([first], PROBLEM, 0.01, budget(clock, 2.0))
    scheduler.run(rows_of(np.inf))
    assert np.isfinite(scheduler.shares.weight("a"))


def test_the_progress_line_without_rows():
    scheduler = Scheduler([], PROBLEM, 0.01, budget(Clock(), 1.0))
    assert "no candidate yet" in scheduler.progress_line(CandidateRows(), CandidateRows())
