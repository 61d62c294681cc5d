"""From hypotheses to fitted candidates: one fixed sequence of fits that a deadline cuts short."""

import os
import threading
import warnings

import numpy as np
import pytest

from nesymres_sklearn.operon.fitting import OperonConstantFitter
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.decoding.hypothesis import Hypothesis
from nesymres_sklearn.search.fitting.candidates import fit_candidates, skeleton_candidates
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchRequest

HYPOTHESES = [
    Hypothesis(("mul", "c", "sin", "mul", "c", "x_1"), -1.0),
    Hypothesis(("add", "mul", "c", "x_1", "c"), -2.0),
    Hypothesis(("mul", "c", "exp", "mul", "c", "x_1"), -3.0),
    Hypothesis(("add", "mul", "c", "cos", "mul", "c", "x_1", "c"), -4.0),
]


class StepClock:
    """A clock that moves ``step`` seconds each time it is read."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def problem():
    X = np.random.default_rng(0).uniform(-2, 2, size=(80, 1))
    return Problem(X, 1.3 * np.sin(0.7 * X[:, 0]) + 0.1 * X[:, 0] ** 2)


@pytest.mark.slow
def test_without_a_deadline_every_candidate_is_fitted_and_jobs_do_not_change_the_fits(problem):
    candidates = skeleton_candidates(HYPOTHESES)
    serial = fit_candidates(candidates, problem, SearchRequest(n_restarts=3, seed=5), None)
    parallel = fit_candidates(candidates, problem, SearchRequest(n_restarts=3, seed=5, n_jobs=2), None)
    assert all(fit is not None for fit in serial)
    for one, other in zip(serial, parallel):
        np.testing.assert_array_equal(one.constants, other.constants)
        assert one.mse == other.mse and one.n_restarts_run == other.n_restarts_run


def test_a_passed_deadline_fits_only_the_baseline(problem):
    candidates = skeleton_candidates(HYPOTHESES)
    fits = fit_candidates(candidates, problem, SearchRequest(), Deadline(-1.0, StepClock(1.0)))
    fitted = [(candidate.origin, fit) for candidate, fit in zip(candidates, fits) if fit is not None]
    assert [origin for origin, _ in fitted] == ["baseline"]
    # fitted in full, not left at its first start's 1 (a fit that printed "0" under load, issue 39)
    assert fitted[0][1].constants == pytest.approx([problem.y.mean()])


def test_a_later_deadline_fits_a_longer_prefix_of_the_same_sequence(problem):
    """The first starts run in beam order before any further start, and the deadline
    (here: a number of clock readings, one per evaluation) only cuts that sequence: a
    later deadline fits every candidate an earlier one fitted, at least as well."""
    candidates = skeleton_candidates(HYPOTHESES)
    request = SearchRequest(n_restarts=2, seed=1)
    runs = [fit_candidates(candidates, problem, request, Deadline(at, StepClock(1.0))) for at in (3.0, 40.0)]
    runs.append(fit_candidates(candidates, problem, request, None))
    fitted = [{index for index, fit in enumerate(run) if fit is not None} for run in runs]
    assert fitted[0] < fitted[1] <= fitted[2] == set(range(len(candidates)))
    for earlier, later in zip(runs, runs[1:]):
        for index in fitted[0]:
            assert later[index].mse <= earlier[index].mse


class RecordingFitter(OperonConstantFitter):
    """Operon's fitter that records where each of its runs ran (the list is the class's,
    shared by every copy)."""

    runs: list = []

    def run(self, tokens, start):
        RecordingFitter.runs.append((os.getpid(), threading.get_ident(), self))  # kept alive: ids stay unique
        return super().run(tokens, start)


@pytest.mark.slow
def test_jobs_fit_in_threads_of_this_process_each_with_its_own_runner(problem):
    """``n_jobs`` fits in threads (no worker process to start, the data not copied to one),
    and no two threads share the compiled runner, whose optimiser holds state."""
    candidates = skeleton_candidates(HYPOTHESES)
    runner = RecordingFitter(problem, 20)
    RecordingFitter.runs.clear()
    serial = fit_candidates(candidates, problem, SearchRequest(n_restarts=2, seed=3), None, runner=runner)
    in_serial = list(RecordingFitter.runs)
    RecordingFitter.runs.clear()
    parallel = fit_candidates(candidates, problem, SearchRequest(n_restarts=2, seed=3, n_jobs=2), None, runner=runner)
    assert {pid for pid, _, _ in in_serial} == {pid for pid, _, _ in RecordingFitter.runs} == {os.getpid()}
    assert {id(fitter) for _, _, fitter in in_serial} == {id(runner)}
    threads_of = {}
    for _, thread, fitter in RecordingFitter.runs:
        threads_of.setdefault(id(fitter), set()).add(thread)
    assert id(runner) not in threads_of and threading.get_ident() not in set().union(*threads_of.values())
    assert all(len(threads) == 1 for threads in threads_of.values())
    for one, other in zip(serial, parallel):
        np.testing.assert_array_equal(one.constants, other.constants)


@pytest.mark.slow
def test_the_threads_leave_the_warning_filters_to_the_caller(problem, monkeypatch):
    """The filters are the process's: fits in several threads at once must not each save
    and restore them (``catch_warnings`` is not thread-safe), so only the caller does."""
    entered, original = [], warnings.catch_warnings

    def recording(*args, **kwargs):
        entered.append(threading.get_ident())
        return original(*args, **kwargs)

    monkeypatch.setattr(warnings, "catch_warnings", recording)
    before = list(warnings.filters)
    fits = fit_candidates(skeleton_candidates(HYPOTHESES), problem, SearchRequest(n_restarts=2, seed=3, n_jobs=2), None)
    assert all(fit is not None for fit in fits)
    assert entered and set(entered) == {threading.get_ident()}
    assert warnings.filters == before
