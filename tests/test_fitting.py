import ctypes
import ctypes.util
import time

import numpy as np
import pytest

from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import mse
from nesymres_sklearn.search.fitting.constants import EVALUATION_WORK, Evaluations, fit_constants, least_squares_run


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(100, 2))
    return X, 2.5 * np.sin(1.7 * X[:, 0]) + 0.3 * X[:, 1]


def test_recovers_the_true_constants(data):
    X, y = data
    program = PrefixProgram(["add", "mul", "c", "sin", "mul", "c", "x_1", "mul", "c", "x_2"])
    fit = fit_constants(program, X, y, n_restarts=8, rng=np.random.default_rng(0))
    assert fit.mse < 1e-16
    np.testing.assert_allclose(np.abs(fit.constants), [2.5, 1.7, 0.3], rtol=1e-6)
    assert fit.mse == mse(program, X, y, fit.constants)  # the reported loss is the returned constants' loss


def test_exact_fit_stops_restarting(data):
    X, y = data
    fit = fit_constants(PrefixProgram(["mul", "c", "x_1"]), X, 3 * X[:, 0], 10, np.random.default_rng(0))
    assert fit.n_restarts_run == 1 and fit.constants[0] == pytest.approx(3.0)


def test_no_constants_is_just_evaluated(data):
    X, y = data
    fit = fit_constants(PrefixProgram(["x_1"]), X, y, 4, np.random.default_rng(0))
    assert fit.constants.shape == (0,) and fit.mse == pytest.approx(np.mean((X[:, 0] - y) ** 2))


def test_undefined_everywhere_gives_infinite_loss(data):
    X, _ = data
    y = np.ones(len(X))
    fit = fit_constants(PrefixProgram(["ln", "mul", "c", "-1"]), X, y, 2, np.random.default_rng(0))
    # ln(-c) is defined for c < 0: the fit either finds such a c (a finite loss) or
    # reports an infinite loss, never NaN.
    assert not np.isnan(fit.mse)
    assert np.isfinite(fit.mse) == (fit.constants[0] < 0)


def test_deadline_in_the_past_runs_a_single_start(data):
    X, y = data
    program = PrefixProgram(["add", "mul", "c", "sin", "mul", "c", "x_1", "mul", "c", "x_2"])
    fit = fit_constants(program, X, y, 8, np.random.default_rng(0), deadline=Deadline(time.time() - 1))
    assert fit.n_restarts_run == 1


def test_seeded_restarts_are_reproducible(data):
    X, y = data
    program = PrefixProgram(["mul", "c", "sin", "mul", "c", "x_1"])
    a = fit_constants(program, X, y, 4, np.random.default_rng(5))
    b = fit_constants(program, X, y, 4, np.random.default_rng(5))
    np.testing.assert_array_equal(a.constants, b.constants)


def test_weights_decide_which_points_the_constants_fit():
    X = np.linspace(1, 5, 40)[:, None]
    y = np.where(np.arange(40) < 20, 2.0 * X[:, 0], 5.0 * X[:, 0])  # two populations
    program = PrefixProgram(["mul", "c", "x_1"])
    first = np.r_[np.full(20, 1.999), np.full(20, 0.001)]  # mean 1
    second = first[::-1]
    fit_first = fit_constants(program, X, y, 2, np.random.default_rng(0), weights=first)
    fit_second = fit_constants(program, X, y, 2, np.random.default_rng(0), weights=second)
    assert fit_first.constants[0] == pytest.approx(2.0, abs=0.01)
    assert fit_second.constants[0] == pytest.approx(5.0, abs=0.01)
    expected = np.average((fit_first.constants[0] * X[:, 0] - y) ** 2, weights=first)
    assert fit_first.mse == pytest.approx(expected, rel=1e-12)


def _dirty_the_heap(round_: int) -> None:
    """Leave different garbage in freed C memory, as a long-running process does."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    size = 64 * (round_ % 20 + 1)
    block = libc.malloc(size)
    ctypes.memset(block, round_ * 37 % 256, size)
    libc.free(ctypes.c_void_p(block))


@pytest.mark.slow
def test_a_rank_deficient_fit_does_not_depend_on_leftover_memory():
    # Only the product of the last two constants matters. SciPy's C MINPACK reads one
    # number past the Jacobian on such problems: without the zero column of
    # the zero column of fitting.least_squares_run, some of these starts gave two different answers
    # depending on what freed memory held.
    X = np.random.RandomState(0).uniform(size=(30, 3))
    y = (np.arange(30) % 3).astype(float)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    program = PrefixProgram(["mul", "c", "exp", "mul", "pow", "mul", "c", "x_1", "3", "pow", "mul", "c", "x_3", "3"])
    rng = np.random.default_rng(0)
    for start in [np.ones(3), *rng.uniform(-5, 5, size=(9, 3))]:
        answers = set()
        for round_ in range(40):
            _dirty_the_heap(round_)
            answers.add(least_squares_run(program, X, y, start).tobytes())
        assert len(answers) == 1, start


def test_a_fit_continued_from_its_first_start_equals_one_fit(data):
    """``previous`` resumes a fit: the first start, then the rest from the same
    generator, gives the fit of one call (what lets the search run every candidate's
    first start before any further start)."""
    X, y = data
    program = PrefixProgram(["add", "mul", "c", "sin", "mul", "c", "x_1", "mul", "c", "cos", "mul", "c", "x_2"])
    whole = fit_constants(program, X, y, 4, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    first = fit_constants(program, X, y, 1, rng)
    assert first.n_restarts_run == 1
    continued = fit_constants(program, X, y, 4, rng, previous=first)
    assert continued.n_restarts_run == whole.n_restarts_run
    np.testing.assert_array_equal(continued.constants, whole.constants)
    assert continued.mse == whole.mse


def test_shared_evaluations_count_a_long_program_in_proportion_to_its_length():
    """A shared bound on work: with two constants, an evaluation of a program of
    EVALUATION_WORK tokens spends three of the shared evaluations where one of a 6-token
    program spends one, so the same limit stops the long program's run after a third
    as many evaluations."""

    class Counted(Evaluations):
        def take(self, count=1.0):
            self.taken.append(count)
            return super().take(count)

    X = np.random.default_rng(0).uniform(1, 2, size=(64, 1))
    short = PrefixProgram(["mul", "c", "exp", "mul", "c", "x_1"])
    sums = (EVALUATION_WORK - 6) // 2
    long = PrefixProgram(("add " * sums + "mul c exp mul c x_1 " + "x_1 " * sums).split())
    assert len(short.tokens) * 3 <= EVALUATION_WORK and len(long.tokens) * 3 == 3 * EVALUATION_WORK
    taken = {}
    for name, program in (("short", short), ("long", long)):
        evaluations = Counted(6)
        evaluations.taken = []
        y = program(X, np.array([0.5, 0.7])) + 0.1 * X[:, 0] ** 3
        least_squares_run(program, X, y, np.array([2.0, -1.0]), evaluations=evaluations)
        taken[name] = evaluations.taken
    # six granted and the one refused; two granted and the one refused
    assert taken == {"short": [1.0] * 7, "long": [3.0] * 3}
