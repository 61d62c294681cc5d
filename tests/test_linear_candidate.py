import numpy as np
import pytest

from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.variables.features import linear_candidate, linear_skeleton

X = np.random.default_rng(0).uniform(1, 5, (300, 20))


def test_the_linear_candidate_holds_the_features_that_pay_for_their_tokens_with_exact_constants():
    y = 2.5 * X[:, 3] - 0.5 * X[:, 12] + 4.0
    skeleton, constants, loss = linear_candidate(Problem(X, y), complexity_penalty=0.01)
    # chosen one at a time, largest gain first: x3, then x12
    assert skeleton == linear_skeleton([3, 12])
    np.testing.assert_allclose(constants, [2.5, -0.5, 4.0], rtol=1e-10)
    assert loss < 1e-20
    np.testing.assert_allclose(skeleton.program(X, constants), y, rtol=1e-12)


def test_a_term_that_does_not_pay_for_its_tokens_is_left_out_and_a_higher_penalty_leaves_out_more():
    y = X[:, 3] + np.random.default_rng(2).normal(scale=0.3, size=300)
    # each other feature explains a little of the noise: free terms all come in
    assert len(linear_candidate(Problem(X, y), 0.0)[0]) > len(linear_skeleton([3, 7, 11]))
    assert linear_candidate(Problem(X, y), 0.01)[0] == linear_skeleton([3])
    skeleton, constants, _ = linear_candidate(Problem(X, np.random.default_rng(1).normal(size=300)), 0.1)
    assert skeleton == linear_skeleton([])  # noise: the mean alone
    assert len(constants) == 1


def test_sample_weights_weight_the_least_squares_fit():
    y = X[:, 0].copy()
    y[:150] = 3 * X[:150, 0]  # two lines: the weights say which one counts
    weights = np.r_[np.full(150, 1e-6), np.full(150, 2 - 1e-6)]
    skeleton, constants, loss = linear_candidate(Problem(X, y, weights), 0.01)
    assert skeleton == linear_skeleton([0])
    np.testing.assert_allclose(constants, [1.0, 0.0], atol=1e-4)
    assert loss == pytest.approx(np.average((X[:, 0] - y) ** 2, weights=weights), rel=1e-3)


def test_a_linear_law_in_60_of_80_features_comes_out_whole_with_its_constants():
    """Forward selection by Gram-Schmidt steps finds every term of a law in many
    features, and the final least-squares fit its constants."""
    rng = np.random.default_rng(3)
    X = rng.uniform(1, 5, (200, 80))
    weights = rng.normal(size=80) * (np.arange(80) < 60)
    skeleton, constants, loss = linear_candidate(Problem(X, X @ weights + 2.0), 0.01)
    assert sorted(int(t[2:]) - 1 for t in skeleton.tokens if t.startswith("x_")) == list(range(60))
    assert loss < 1e-20
    np.testing.assert_allclose(skeleton.program(X, constants), X @ weights + 2.0, rtol=1e-9)
