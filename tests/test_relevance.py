import numpy as np
import pytest

from nesymres_sklearn.search.variables import features
from nesymres_sklearn.search.variables.features import relevance, relevant_features


def _centred(n_features: int = 6, n_points: int = 200, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-3, 3, (n_points, n_features))


def test_a_product_of_features_centred_at_zero_ranks_its_factors_first():
    """``x0*x1`` on U(-3, 3) depends on neither factor alone; the product does."""
    X = _centred(5)
    y = X[:, 3] * X[:, 1] + 0.3 * X[:, 4]
    np.testing.assert_array_equal(relevant_features(X, y, 2, 0), [1, 3])
    np.testing.assert_array_equal(relevant_features(X, y, 3, 0), [1, 3, 4])
    scores, _ = relevance(X, y, 0)
    assert min(scores[[1, 3]]) > max(scores[[0, 2]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_pair_is_read_whole_or_not_at_all(seed):
    """Issue 37's example: two products and two single terms, three variables to read."""
    X = _centred(seed=seed)
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]
    chosen = set(relevant_features(X, y, 3, seed))
    assert {0, 1} <= chosen or {4, 5} <= chosen
    assert not ({0, 1} & chosen and {4, 5} & chosen)  # one pair, whole, and one single term


def test_a_product_that_correlates_less_than_its_factor_does_not_count():
    """On positive data every product with ``x0`` correlates with ``y = x0``, less than
    ``x0`` itself: the other features gain nothing from it."""
    X = np.random.default_rng(0).uniform(1, 5, (200, 4))
    y = X[:, 0]
    scores, partners = relevance(X, y, 0)
    assert scores[0] == 1.0 and max(scores[1:]) < 0.5
    assert 0 not in partners and partners[0] == -1  # no feature is paired with x0


def test_interactions_use_at_most_the_rows_and_features_set(monkeypatch):
    X = _centred(4, n_points=2000)
    y = X[:, 0] * X[:, 1] + 0.1 * X[:, 2]
    seen = []
    spearman = features._spearman

    def recording(columns, target):
        seen.append(columns.shape)
        return spearman(columns, target)

    monkeypatch.setattr(features, "_spearman", recording)
    np.testing.assert_array_equal(relevant_features(X, y, 2, 0), [0, 1])
    assert seen == [(2000, 4), (features.INTERACTION_ROWS, 6)]  # the features alone, then the 6 pairs
    seen.clear()
    monkeypatch.setattr(features, "MAX_INTERACTION_FEATURES", 3)
    relevant_features(X, y, 2, 0)
    assert seen == [(2000, 4)]  # no pairs beyond the limit


@pytest.mark.parametrize("n_points, n_features, seed", [(300, 20, 0), (64, 5, 1), (2000, 3, 2), (5, 2, 3)])
def test_mutual_information_is_scikit_learns_estimate(n_points, n_features, seed):
    """The same Kraskov estimate as scikit-learn's, value for value: a smooth law, a
    column of repeated values (ties at the radius), a constant column."""
    from sklearn.feature_selection import mutual_info_regression

    X = np.random.default_rng(seed).uniform(-3, 5, (n_points, n_features))
    X[:, -1] = np.round(X[:, -1])
    if n_features > 3:
        X[:, 2] = 1.5
    y = np.sin(X[:, 0]) * X[:, 1] + X[:, -1] ** 2
    np.testing.assert_array_equal(
        features.mutual_information(X, y, seed), mutual_info_regression(X, y, random_state=seed)
    )


def test_mutual_information_catches_what_rank_correlation_misses():
    """``y = x0**2`` on data centred at 0 has no rank correlation with ``x0``."""
    X = _centred(3)
    information = features.mutual_information(X, X[:, 0] ** 2, 0)
    assert information[0] > 1.0 and max(information[1:]) < 0.1


def test_other_subsets_come_largest_summed_relevance_first_from_the_most_relevant():
    from nesymres_sklearn.search.variables.features import other_subsets

    scores = np.array([0.9, 0.1, 0.5, 0.7, 0.3])
    subsets = other_subsets(scores, 2, np.array([3, 0]), most=4)  # feature 1 is not among the 4 most relevant
    assert [subset.tolist() for subset in subsets] == [[0, 2], [0, 4], [2, 3], [3, 4], [2, 4]]
    assert len(other_subsets(scores, 5, np.arange(5), most=5)) == 0  # the one subset is the one read
