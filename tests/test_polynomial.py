import numpy as np

from nesymres_sklearn.search.fitting.constants import fit_constants
from nesymres_sklearn.search.fitting.polynomial import count_monomials, exact_polynomial, monomials, monomials_of_degree
from nesymres_sklearn.search.identity_systems import basis_exponents

rng = np.random.default_rng(0)


def test_monomials_up_to_a_total_degree():
    assert monomials(1, 3) == [(1,), (2,), (3,)]
    assert monomials(2, 2) == [(1, 0), (0, 1), (2, 0), (1, 1), (0, 2)]


def test_exact_polynomials_become_sparse_skeletons():
    X = rng.uniform(-1, 1, size=(100, 2))
    y = X[:, 0] ** 4 - X[:, 0] ** 3 + X[:, 1] ** 2 / 2 - X[:, 1]
    skeleton = exact_polynomial(X, y)
    assert skeleton.n_constants == 5  # four terms and the intercept
    assert {"x_1", "x_2"} <= set(skeleton.tokens) and skeleton.tokens.count("pow") == 3
    fit = fit_constants(skeleton.program, X, y, 1, np.random.default_rng(0))
    assert fit.mse < 1e-20
    np.testing.assert_allclose(sorted(fit.constants), [-1, -1, 0, 0.5, 1], atol=1e-9)


def test_no_candidate_when_no_polynomial_fits_exactly():
    X = rng.uniform(1, 5, size=(100, 2))
    assert exact_polynomial(X, X[:, 0] * np.sin(X[:, 1])) is None
    noisy = X[:, 0] ** 2 + rng.normal(0, 0.01, size=100)
    assert exact_polynomial(X, noisy) is None
    assert exact_polynomial(X[:10], X[:10, 0] ** 2) is None  # more monomials than points


def test_count_monomials_counts_the_listed_monomials_with_features_at_most_once():
    for n_features in range(1, 7):
        for degree in range(5):
            listed = monomials_of_degree(n_features, degree)
            for once in range(n_features + 1):
                kept = [e for e in listed if all(e[j] <= 1 for j in range(once))]
                assert count_monomials(n_features, degree, once) == len(kept)


def test_the_identities_basis_stops_before_a_layer_too_large_without_listing_it():
    exponents = basis_exponents(20, 300)
    assert exponents.shape == (1 + 20 + 210, 20)  # the cubes (1,540) are counted, not kept
    assert exponents.sum(axis=1).max() == 2
