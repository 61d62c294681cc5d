"""Laws ``(a + c*m)**(1/p)`` found exactly (``search/offset_power.py``)."""

import numpy as np
import pytest

from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.identities import identity_rows
from nesymres_sklearn.search.offset_power import offset_power_law
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings

RNG = np.random.default_rng(0)
X = RNG.uniform(1, 5, (400, 4))
DECADES = 10.0 ** RNG.uniform(-1, 2, (400, 4))  # every feature over three decades


def _eccentricity(X):
    """An orbit's eccentricity: a square root of 1 plus a monomial of four features."""
    return np.sqrt(1 + 2 * X[:, 0] * X[:, 1] ** 2 / (X[:, 2] * X[:, 3] ** 2) * 1e-3)


@pytest.mark.parametrize(
    "X_, law, head, constants",
    [
        (DECADES, _eccentricity, ("sqrt", "add", "c", "mul", "c"), [1.0, 2e-3]),
        (X, lambda X: 1 / np.sqrt(1 - 0.02 * X[:, 0] ** 2 / X[:, 1]), ("div", "1", "sqrt", "add"), [1.0, -0.02]),
        (X, lambda X: 3.0 + 0.5 * X[:, 2] ** 1.5, ("add", "c", "mul", "c"), [3.0, 0.5]),
        (X, lambda X: 1 / (2.0 + X[:, 0] * X[:, 3] ** 3), ("div", "1", "add", "c", "mul", "c"), [2.0, 1.0]),
    ],
    ids=["sqrt of one plus a monomial", "one over sqrt of one minus", "a plus a half power", "one over a plus"],
)
def test_the_law_and_its_constants_come_back(X_, law, head, constants):
    y = law(X_)
    found = offset_power_law(Problem(X_, y))
    assert found is not None
    assert found.skeleton.tokens[: len(head)] == head
    np.testing.assert_allclose(found.constants, constants, rtol=1e-8)
    np.testing.assert_allclose(found.skeleton.program(X_, found.constants), y, rtol=1e-10)


@pytest.mark.parametrize(
    "law",
    [
        lambda X: 2.0 * X[:, 0] ** 2 / X[:, 1],  # a power law: a is 0
        lambda X: np.sin(X[:, 0]) * X[:, 1],
        lambda X: 1.0 + X[:, 0] + X[:, 1] ** 2,  # two monomials
        lambda X: np.exp(X[:, 0] / X[:, 1]),
    ],
    ids=["power law", "sine", "two monomials", "exponential"],
)
def test_other_laws_give_none(law):
    assert offset_power_law(Problem(X, law(X))) is None


def test_noisy_data_and_a_passed_deadline_give_none():
    y = 3.0 + 0.5 * X[:, 2] ** 1.5
    noisy = y + np.random.default_rng(1).normal(0, 0.01 * y.std(), len(y))
    assert offset_power_law(Problem(X, noisy)) is None
    assert offset_power_law(Problem(X, y), Deadline(0.0, lambda: 1.0)) is None


def test_the_identities_write_it_as_an_exact_law_that_ends_the_search():
    """Of degree 5 under the root, no rational reading of ``y`` or ``y**2`` writes it."""
    y = np.sqrt(1 + 2e-3 * DECADES[:, 0] ** 3 * DECADES[:, 1] ** 2 / (DECADES[:, 2] ** 3 * DECADES[:, 3] ** 2))
    problem = Problem(DECADES, y)
    rows, ends = identity_rows(problem, SearchSettings())
    assert len(rows) == 1 and ends
    assert rows.skeletons[0].tokens[:5] == ("sqrt", "add", "c", "mul", "c")
    assert problem.is_exact_to_rounding(rows.losses[0])
