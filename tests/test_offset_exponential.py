"""Laws ``c*m*(exp(k*n) ± 1)**±1`` found exactly (``search/offset_exponential.py``)."""

import numpy as np
import pytest

from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.identities import identity_rows
from nesymres_sklearn.search.offset_exponential import offset_exponential_law
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings

RNG = np.random.default_rng(0)
X = RNG.uniform(1, 5, (512, 4))
SIGNED = X.copy()
SIGNED[:, :2] *= np.where(RNG.random((512, 2)) < 0.5, -1.0, 1.0)  # the first two columns change sign


@pytest.mark.parametrize(
    "X_, law, tokens, constants",
    [
        (
            X,
            lambda X: 2.5 * X[:, 0] ** 3 / (X[:, 3] ** 2 * (np.exp(0.7 * X[:, 0] * X[:, 1] / X[:, 2]) - 1)),
            ("div", "mul", "c", "div", "pow", "x_1", "3", "pow", "x_4", "2"),
            [2.5, 0.7],
        ),
        (X, lambda X: 3.0 / (np.exp(-1.1 * X[:, 1] / X[:, 3]) + 1), ("div", "c", "add", "exp"), [3.0, -1.1]),
        (
            SIGNED,  # the current and the voltage change sign
            lambda X: 1.3 * X[:, 0] * (np.exp(0.4 * X[:, 1] / X[:, 2]) - 1),
            ("mul", "mul", "c", "x_1", "add", "exp"),
            [1.3, 0.4],
        ),
    ],
    ids=["over exp minus one", "over exp plus one", "times exp minus one"],
)
def test_the_law_and_its_constants_come_back(X_, law, tokens, constants):
    found = offset_exponential_law(Problem(X_, law(X_)))
    assert found is not None
    assert found.skeleton.tokens[: len(tokens)] == tokens
    np.testing.assert_allclose(found.constants, constants, rtol=1e-10)


def test_a_law_over_sixty_decades_fits_its_small_values_too():
    """``y`` from 1e-5 to 1e60: the law's constants fit the relative errors, not the largest value alone."""
    n = np.linspace(0.001, 1.0, 300)[:, None] * np.array([1.0, 1.0])
    X_ = np.column_stack([RNG.uniform(1, 2, 300), n[:, 0] * RNG.uniform(1, 2, 300), RNG.uniform(1, 2, 300)])
    y = X_[:, 0] * (np.exp(140.0 * X_[:, 1] / X_[:, 2]) - 1)
    assert np.max(y) / np.min(y) > 1e50
    found = offset_exponential_law(Problem(X_, y))
    assert found is not None
    np.testing.assert_allclose(found.skeleton.program(X_, found.constants), y, rtol=1e-9)


@pytest.mark.parametrize(
    "law",
    [
        lambda X: X[:, 0] / (X[:, 1] + X[:, 2]),  # rational: the identities' own
        lambda X: X[:, 0] * np.exp(-X[:, 1]),  # a monomial times an exponential
        lambda X: np.sin(X[:, 0]) * X[:, 1],
    ],
)
def test_other_laws_give_none(law):
    assert offset_exponential_law(Problem(X, law(X))) is None


def test_none_where_y_is_zero_or_the_deadline_has_passed():
    y = 3.0 / (np.exp(-1.1 * X[:, 1] / X[:, 3]) + 1)
    assert offset_exponential_law(Problem(X, np.where(np.arange(512) == 7, 0.0, y))) is None
    passed = Deadline(0.0, lambda: 1.0)
    assert offset_exponential_law(Problem(X, y), passed) is None


def test_the_identities_write_it_as_an_exact_law_that_ends_the_search():
    y = 2.5 * X[:, 0] ** 3 / (X[:, 3] ** 2 * (np.exp(0.7 * X[:, 0] * X[:, 1] / X[:, 2]) - 1))
    rows, ends = identity_rows(Problem(X, y), SearchSettings())
    assert len(rows) == 1 and ends
    assert "exp" in rows.skeletons[0].tokens
    assert Problem(X, y).is_exact_to_rounding(rows.losses[0])


def test_under_noise_the_law_holds_to_the_noise_and_an_other_law_gives_none():
    from nesymres_sklearn.search.exactness import Tolerance

    rng = np.random.default_rng(1)
    clean = 2.5 * X[:, 0] ** 3 / (X[:, 3] ** 2 * (np.exp(0.7 * X[:, 0] * X[:, 1] / X[:, 2]) - 1))
    sd = 0.01 * np.sqrt(np.mean(clean**2))
    noisy = Problem(X, clean + rng.normal(0, sd, len(clean)))
    tolerance = Tolerance(sd=np.full(len(clean), sd), ratio=1.5)
    assert offset_exponential_law(noisy) is None  # not exact to rounding
    found = offset_exponential_law(noisy, None, tolerance)
    assert found is not None and found.skeleton.tokens[:4] == ("div", "mul", "c", "div")
    np.testing.assert_allclose(found.constants, [2.5, 0.7], rtol=0.01)
    other = np.sin(X[:, 0]) * X[:, 1] + 3
    noisy_other = Problem(X, other + rng.normal(0, 0.01 * np.sqrt(np.mean(other**2)), len(other)))
    assert offset_exponential_law(noisy_other, None, tolerance) is None


def test_the_law_under_noise_and_the_identities_to_the_noise_write_it_where_no_rational_law_holds():
    from nesymres_sklearn.search.identities_under_noise import identities_to_the_noise, noisy_identity_rows

    rng = np.random.default_rng(2)
    clean = 2.5 * X[:, 0] ** 3 / (X[:, 3] ** 2 * (np.exp(0.7 * X[:, 0] * X[:, 1] / X[:, 2]) - 1))
    sd = 0.01 * np.sqrt(np.mean(clean**2))
    problem = Problem(X, clean + rng.normal(0, sd, len(clean)))
    for rows in (
        noisy_identity_rows(problem, sd, SearchSettings(), None),
        identities_to_the_noise(problem, sd, SearchSettings(), None, 0, (16,)),
    ):
        assert len(rows) == 1 and "exp" in rows.skeletons[0].tokens and rows.origins == ["identity"]
        np.testing.assert_allclose(rows.constants[0], [2.5, 0.7], rtol=0.01)


def test_to_the_noise_the_law_replaces_an_identity_of_more_constants_that_approximates_it():
    """With ``k*n`` small on the data, a law of the identities' systems of 64 unknowns
    holds to 0.001 noise too, with five constants; of the laws that hold, the one of
    fewer constants comes back."""
    from nesymres_sklearn.search.identities_under_noise import identities_to_the_noise, noise_tolerance

    rng = np.random.default_rng(3)
    clean = 2.5 * X[:, 0] ** 3 / (X[:, 3] ** 2 * (np.exp(0.1 * X[:, 0] * X[:, 1] / X[:, 2]) - 1))
    sd = 0.001 * np.sqrt(np.mean(clean**2))
    problem = Problem(X, clean + rng.normal(0, sd, len(clean)))
    other = identity_rows(problem, SearchSettings(), None, 0, noise_tolerance(problem, sd, SearchSettings(), 64))[0]
    assert len(other) == 1 and other.skeletons[0].n_constants > 2
    found = identities_to_the_noise(problem, sd, SearchSettings(), None, 0, (64,))
    assert len(found) == 1 and found.skeletons[0].tokens[:4] == ("div", "mul", "c", "div")
    np.testing.assert_allclose(found.constants[0], [2.5, 0.1], rtol=0.01)
