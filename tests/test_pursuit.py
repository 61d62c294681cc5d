"""The matching pursuit of rational laws under noise."""

import numpy as np

from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import CandidateRows
from nesymres_sklearn.search.identities_under_noise import PursuitUnderNoise, pursued_identity
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.pursuit import PURSUIT_MAX_POWER, _gains, laurent_exponents, laurent_values, pursuit
from nesymres_sklearn.search.settings import SearchSettings


def _noisy(law, level=0.001, seed=0, n=400, low=1.0, high=5.0, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(low, high, (n, d))
    clean = law(X)
    sd = level * np.std(clean)
    return Problem(X, clean + rng.normal(0.0, sd, n)), clean, sd


def test_the_monomials_are_the_laurent_ones_of_the_largest_bound_that_fits():
    exponents = laurent_exponents(3, most=100)
    degrees = np.abs(exponents).sum(axis=1)
    assert np.all(exponents[0] == 0) and np.all(np.diff(degrees) >= 0)
    assert len({tuple(e) for e in exponents}) == len(exponents) <= 100
    bound = degrees.max()
    every = {tuple(e) for e in np.array(np.meshgrid(*[range(-bound, bound + 1)] * 3)).reshape(3, -1).T}
    assert {e for e in every if sum(map(abs, e)) <= bound} == {tuple(e) for e in exponents}
    wide = laurent_exponents(3, most=10_000)
    assert len(wide) > 100 and np.abs(wide).max() <= PURSUIT_MAX_POWER
    assert laurent_exponents(3, most=10_000) is wide and not wide.flags.writeable  # computed once, shared


def test_each_step_adds_the_column_that_lowers_the_residual_most_beside_the_chosen():
    rng = np.random.default_rng(1)
    a, b, c = rng.normal(size=(3, 50))
    columns = np.column_stack([a, b, c, 2 * b])
    gains = _gains(columns, b + c, [1])
    assert np.argmax(gains) == 2 and gains[3] == -1.0  # 2 b lies in the chosen span


def test_a_sparse_law_of_high_degree_is_found_through_the_noise():
    law = lambda X: 0.5 * X[:, 0] ** 2 * X[:, 1] ** 2 * (X[:, 0] + X[:, 1]) / X[:, 2] ** 5  # noqa: E731
    problem, clean, sd = _noisy(law, low=0.5, high=3.0)
    found = pursued_identity(problem, sd, SearchSettings(), None)
    assert len(found) == 1 and found.origins == ["identity"]
    (skeleton,), (constants,) = found.skeletons, found.constants
    assert skeleton.n_constants == 2
    predicted = skeleton.program(problem.X, constants)
    assert np.sqrt(np.mean((predicted - clean) ** 2)) < sd


def test_a_difference_of_laurent_terms_is_found():
    law = lambda X: X[:, 0] / (X[:, 1] ** 2 * X[:, 2]) - 2 * X[:, 1] * X[:, 2] / X[:, 0]  # noqa: E731
    problem, clean, sd = _noisy(law)
    found = pursued_identity(problem, sd, SearchSettings(), None)
    assert len(found) == 1
    predicted = found.skeletons[0].program(problem.X, found.constants[0])
    assert np.sqrt(np.mean((predicted - clean) ** 2)) < sd and found.skeletons[0].n_constants <= 3


def test_no_law_where_no_few_monomials_follow_the_data_and_steps_stop_at_the_most_terms():
    wavy, _, sd = _noisy(lambda X: np.sin(3 * X[:, 0]) * np.exp(X[:, 1]) + X[:, 2])
    assert len(pursued_identity(wavy, sd, SearchSettings(), None)) == 0
    steps = list(pursuit(wavy, np.full(len(wavy.y), sd), 4, 0))
    assert [len(s.numerator) + len(s.denominator) for s in steps] == [2, 3, 4]
    assert all(s.error > 1 for s in steps)


def test_the_pursuit_is_a_source_of_one_turn_in_the_continuation():
    law = lambda X: 0.5 * X[:, 0] ** 2 * X[:, 1] ** 2 * (X[:, 0] + X[:, 1]) / X[:, 2] ** 5  # noqa: E731
    problem, _, sd = _noisy(law, low=0.5, high=3.0)
    source = PursuitUnderNoise(problem, sd, SearchSettings())
    first = source.propose(CandidateRows(), 0, None)
    assert source.name == "pursuit" and first.origins == ["identity"] and first.skeletons[0].n_constants == 2
    assert len(source.propose(first, 1, None)) == 0


def test_no_step_or_law_once_the_deadline_passes():
    law = lambda X: 0.5 * X[:, 0] ** 2 * X[:, 1] ** 2 * (X[:, 0] + X[:, 1]) / X[:, 2] ** 5  # noqa: E731
    problem, _, sd = _noisy(law, low=0.5, high=3.0)
    passed = Deadline(0.0, clock=lambda: 1.0)
    assert list(pursuit(problem, np.full(len(problem.y), sd), 4, 0, passed)) == []
    assert len(pursued_identity(problem, sd, SearchSettings(), passed)) == 0
    ticks = iter(range(10_000))  # one tick a look at the clock: the deadline passes within the search
    assert len(pursued_identity(problem, sd, SearchSettings(), Deadline(3.0, clock=lambda: next(ticks)))) == 0


def test_the_values_are_the_powers_with_their_signs():
    X = np.array([[2.0, -3.0], [-0.5, 4.0], [0.0, 1.5]])
    exponents = np.array([[0, 0], [1, -2], [-1, 3], [2, 1], [0, -1]])
    expected = np.prod(X[:, None, :] ** exponents[None].astype(float), axis=2)
    with np.errstate(divide="ignore"):
        got = laurent_values(X, exponents)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-12, atol=1e-300)  # 0**2: a denormal
    assert np.all(np.abs(got[~finite]) > 1e300)  # a negative power of a zero
