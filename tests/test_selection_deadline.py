"""With ``max_time``, the selection ends in time: its refits stop at the fit's end."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.operon import refine as operon_refine
from nesymres_sklearn.operon.settings import OperonSettings
from nesymres_sklearn.search.budget import Calibration, Deadline
from nesymres_sklearn.search.fitted import CandidateRows, Fitted
from nesymres_sklearn.search.fitting.constants import Evaluations
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.search.selection.final import select
from nesymres_sklearn.writing.export import feature_symbols
from nesymres_sklearn.writing.readable import READABLE_EVALUATIONS, exact_constants
from nesymres_sklearn.writing.writer import Writer, write_selected


class _Clock:
    def __init__(self, now: float, tick: float = 0.0):
        self.now, self.tick = now, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def test_a_passed_deadline_leaves_no_evaluation():
    assert not Evaluations(10).spent
    passed = Evaluations(10, Deadline(1.0, _Clock(2.0)))
    assert passed.spent and not passed.take()
    ahead = Evaluations(10, Deadline(3.0, _Clock(2.0)))
    assert not ahead.spent and ahead.take()


def _rows_and_problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(64, 2))
    y = 2 * X[:, 0]
    rows = CandidateRows()
    # 2.000001*x_1 + 0.000001*x_2: the pruning drops the second term
    skeleton = Skeleton(("add", "mul", "c", "x_1", "mul", "c", "x_2"))
    constants = np.array([2.000001, 1e-6])
    loss = float(np.mean((skeleton.program(X, constants) - y) ** 2))
    rows.add(Fitted(skeleton, constants, loss), log_prob=0.0, origin="beam")
    writer = Writer(Scaling.identity(2), tuple(feature_symbols(["x0", "x1"])))
    return rows, Problem(X, y), writer


def test_without_a_deadline_the_selection_prunes():
    rows, problem, writer = _rows_and_problem()
    table = write_selected(select(rows, problem, 0.01, writer, seed=0), problem, writer)
    assert len(table.equations) == 2  # the pruned row joined, and is selected
    assert table.equations.loc[table.best_index, "expression"] == 2 * sympy.Symbol("x0", real=True)


def test_a_passed_end_stops_the_pruning():
    rows, problem, writer = _rows_and_problem()
    end = Deadline(1.0, _Clock(5.0))
    table = write_selected(select(rows, problem, 0.01, writer, seed=0, end=end), problem, writer, end)
    assert len(table.equations) == 1  # no pruned row joined


def test_a_passed_end_leaves_the_constants_as_fitted():
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 1))
    skeleton, constants = Skeleton(("mul", "c", "x_1")), np.array([2.0000000001])
    assert exact_constants(skeleton, constants, X, 2 * X[:, 0]) == [2]
    late = Evaluations(READABLE_EVALUATIONS, Deadline(1.0, _Clock(5.0)))
    assert exact_constants(skeleton, constants, X, 2 * X[:, 0], evaluations=late) == [2.0000000001]


@pytest.mark.parametrize(
    "n_points, sets_the_pace", [(Calibration.min_points - 1, False), (Calibration.min_points, True)]
)
def test_only_a_run_on_enough_points_sets_the_fits_operon_pace(n_points, sets_the_pace):
    calibration = Calibration(operon_seconds_per_evaluation_point=1.0)
    X = np.random.default_rng(0).uniform(1, 5, size=(n_points, 2))
    settings = OperonSettings(population_size=20, max_chunk_generations=1)
    deadline = Deadline(8.0, _Clock(0.0, tick=1.0))
    operon_refine.refine(X, X[:, 0] * X[:, 1], [], settings, 0, deadline, calibration=calibration)
    assert (calibration.operon_seconds_per_evaluation_point != 1.0) == sets_the_pace
    assert Calibration().operon_seconds_per_evaluation_point == 2.6e-7  # no process-wide pace changed


def _fitted_row(constant: float):
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 1))
    skeleton = Skeleton(("mul", "c", "x_1"))
    rows = CandidateRows()
    rows.add(Fitted(skeleton, np.array([constant]), float(np.mean((constant - 2) ** 2 * X[:, 0] ** 2))), origin="beam")
    return rows, Problem(X, 2 * X[:, 0]), Writer(Scaling.identity(1), tuple(feature_symbols(["x0"])))


def test_with_time_left_the_selected_row_is_polished_and_written_readably():
    rows, problem, writer = _fitted_row(2.0000001)
    end = Deadline(10.0, _Clock(0.0))
    table = write_selected(select(rows, problem, 0.01, writer, seed=0, end=end), problem, writer, end)
    assert table.equations.loc[table.best_index, "expression"] == 2 * sympy.Symbol("x0", real=True)


def test_a_passed_end_skips_the_polish_and_writes_the_selected_row_as_fitted():
    rows, problem, writer = _fitted_row(2.0000001)
    end = Deadline(1.0, _Clock(5.0))
    table = write_selected(select(rows, problem, 0.01, writer, seed=0, end=end), problem, writer, end)
    skeleton, constants, exact = table.fitted[table.best_index]
    assert constants.tolist() == [2.0000001] and exact is None
    assert table.equations.loc[table.best_index, "expression"] == sympy.Float(2.0000001) * sympy.Symbol("x0", real=True)


def test_the_pruning_keeps_the_time_to_write_the_best_row_readably():
    from nesymres_sklearn.search.selection.final import READABLE_SECONDS_PER_TOKEN, writing_seconds
    from nesymres_sklearn.search.settings import SearchSettings

    rows, problem, writer = _rows_and_problem()  # the best row: 7 tokens, which the pruning shortens
    kept = writing_seconds(rows) + SearchSettings().selection_margin
    for left, pruned in ((1.0, True), (kept + 0.5 * READABLE_SECONDS_PER_TOKEN * 7, False)):
        rows, problem, writer = _rows_and_problem()
        table = select(rows, problem, 0.01, writer, seed=0, end=Deadline(left, _Clock(0.0)))
        assert (len(table.equations) == 2) == pruned


def test_with_no_exact_row_the_pruning_leaves_the_held_out_choice_its_time(monkeypatch):
    """The pruning stops early enough for the held-out choice (1e-4 s per point at the
    fit's pace, at most half the time left); with an exact row, at the selection's end."""
    from nesymres_sklearn.search.selection import final
    from nesymres_sklearn.search.settings import SearchSettings

    rows, problem, writer = _rows_and_problem()
    noisy = Problem(problem.X, problem.y + np.random.default_rng(1).normal(0, 0.1, len(problem.y)))
    ends = []
    monkeypatch.setattr(final, "add_pruned", lambda rows, problem, penalty, seed, end, knobs: ends.append(end))
    monkeypatch.setattr(final, "writing_seconds", lambda rows: 0.0)
    monkeypatch.setattr(final, "READABLE_SECONDS_PER_TOKEN", 0.0)
    settings = SearchSettings(selection_margin=0.0)
    exact = CandidateRows()
    exact.add(Fitted(Skeleton(("mul", "c", "x_1")), np.array([2.0]), 0.0), origin="beam")
    for data, found, pace, left in ((noisy, rows, 1.0, 1.0), (noisy, rows, 2.0, 1.0), (noisy, rows, 1.0, 1e-3)):
        ends.clear()
        select(found, data, 0.01, writer, 0, end=Deadline(10.0 + left, _Clock(10.0)), settings=settings, pace=pace)
        assert 10.0 + left - ends[0].at == pytest.approx(min(0.5 * left, pace * 1e-4 * 64))
    ends.clear()
    select(exact, problem, 0.01, writer, 0, end=Deadline(11.0, _Clock(10.0)), settings=settings)
    assert ends[0].at == 11.0


def test_the_held_out_choice_runs_until_the_readable_writing_s_time_not_the_rows_writing_s(monkeypatch):
    """The rows are written before the held-out choice: the time kept for writing them is
    not taken from the choice, only the selected row's readable writing is."""
    from nesymres_sklearn.search.selection import final
    from nesymres_sklearn.search.settings import SearchSettings

    rows, problem, writer = _rows_and_problem()
    noisy = Problem(problem.X, problem.y + np.random.default_rng(1).normal(0, 0.1, len(problem.y)))
    chosen = []
    monkeypatch.setattr(final, "held_out_choice", lambda table, *args: chosen.append(args[-1]) or table.best_index)
    monkeypatch.setattr(final, "READABLE_SECONDS_PER_TOKEN", 0.0)
    settings = SearchSettings(selection_margin=0.1)
    for writing in (1.0, 0.0):  # 1 s to write the rows: past the pruning's end before the selection starts
        monkeypatch.setattr(final, "writing_seconds", lambda rows, seconds=writing: seconds)
        chosen.clear()
        select(rows, noisy, 0.01, writer, 0, end=Deadline(10.5, _Clock(10.0)), settings=settings)
        assert len(chosen) == 1 and chosen[0].at == pytest.approx(10.4)
    chosen.clear()
    select(rows, noisy, 0.01, writer, 0, end=Deadline(10.05, _Clock(10.0)), settings=settings)
    assert chosen == []  # the readable writing's margin alone is more than the time left


def test_under_noise_the_selection_keeps_time_for_snapping_the_selected_row():
    # the pruning stops where the selected row's writing will run; under noise that
    # writing snaps its constants within their error bars, with refits, and takes longer
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(2000, 2))
    y = 2 * X[:, 0] + rng.normal(0, 0.01, 2000)
    skeleton = Skeleton(("add", "mul", "c", "x_1", "mul", "c", "x_2"))
    constants = np.linalg.lstsq(X, y, rcond=None)[0]
    loss = float(np.mean((skeleton.program(X, constants) - y) ** 2))
    writer = Writer(Scaling.identity(2), tuple(feature_symbols(["x0", "x1"])))
    pruned = {}
    for noise in (float("nan"), 0.01):  # not estimated; the noise of the data
        rows = CandidateRows()
        rows.add(Fitted(skeleton, constants, loss), log_prob=0.0, origin="beam")
        end = Deadline(5.05, _Clock(5.0))  # 50 ms left, by a clock that stands still
        table = select(rows, Problem(X, y), 0.01, writer, seed=0, end=end, noise=noise)
        pruned[noise == 0.01] = len(table.equations) > 1
    assert pruned == {False: True, True: False}
