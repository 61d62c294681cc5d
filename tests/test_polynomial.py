import numpy as np

from nesymres_sklearn.search.fitting.constants import fit_constants
from nesymres_sklearn.search.fitting.polynomial import exact_polynomial, monomials

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
