"""More features than the network has variables: which ones it sees, and how its
skeletons are written back over all of them.

Features are ranked by relevance to ``y``: the largest of their estimated mutual
information (:func:`mutual_information`, which catches non-monotone dependence such
as ``sin(x)`` or ``x**2``), their absolute Spearman
correlation (which catches a monotone term that the k-nearest-neighbour estimate of
mutual information misses next to stronger ones, as ``x5`` in ``x1*x4 + x5``) and their
interaction: the absolute Spearman correlation of ``y`` with their product with another
feature, where it exceeds both factors' own (``x0*x1`` on data centred at 0 depends on
neither factor alone). Mutual information is divided by its largest value, the
correlations by the largest of them; ties by position. The network works on the top ones,
and its skeletons' variables are renamed to the features they stand for. A linear
candidate over every feature (fitted like the others) keeps what the network cannot
see from being lost entirely: its terms are chosen forward, one at a time, while
each lowers the selection score (:mod:`..selection.scores`), so it holds only the
features that pay for their tokens and the selection's pruning has little left to try.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma
from scipy.stats import rankdata

from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT, variable_index, variable_token
from ..fitted import Fitted
from ..problem import Problem, variance
from ..selection.scores import log_fvu, scores

#: The interactions are computed on at most this many rows (drawn with the seed) and
#: for at most this many features (beyond it, the pairs' products cost more than the
#: rest of the ranking).
INTERACTION_ROWS = 512
MAX_INTERACTION_FEATURES = 64


#: Neighbours of the Kraskov estimate of mutual information (scikit-learn's default).
MI_NEIGHBOURS = 3


def _within(sorted_values: np.ndarray, values: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """For each of ``values``, how many of ``sorted_values`` lie within its ``radius``
    (``|v - value| <= radius``, computed as written: ``value + radius`` may round past a
    value at the boundary, so the ends found by bisection are moved until the comparison
    holds exactly)."""
    n = len(sorted_values)
    low = np.searchsorted(sorted_values, values - radius)
    high = np.searchsorted(sorted_values, values + radius, "right")
    for _ in range(n):
        below, above = np.maximum(low - 1, 0), np.minimum(high, n - 1)
        low_out = (low < n) & (values - sorted_values[np.minimum(low, n - 1)] > radius)
        low_in = (low > 0) & (values - sorted_values[below] <= radius)
        high_out = (high > 0) & (sorted_values[np.maximum(high - 1, 0)] - values > radius)
        high_in = (high < n) & (sorted_values[above] - values <= radius)
        if not (low_out.any() or low_in.any() or high_out.any() or high_in.any()):
            break
        low, high = low + low_out - low_in, high - high_out + high_in
    return high - low


def mutual_information(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Each column's mutual information with ``y`` in nats: the Kraskov-Stögbauer-
    Grassberger estimate of :func:`sklearn.feature_selection.mutual_info_regression`
    (the same scaling, the same tiny noise drawn from ``seed``, ``MI_NEIGHBOURS``
    neighbours, the same counts), with one KD-tree per column for the neighbours and the
    marginal counts read off sorted values. scikit-learn's function spends 3-6 ms per
    column on validation and trees whatever the number of rows (0.06-0.13 s for 20
    features, more than a fit at ``max_time=0.1`` has); on a few hundred points this takes
    a fifth of that."""
    n_samples, n_features = X.shape
    found = np.zeros(n_features)
    if n_samples <= MI_NEIGHBOURS:
        return found
    rng = np.random.RandomState(seed)
    spread, spread_y = np.std(X, axis=0), np.std(y)
    X = X / np.where(spread > 0, spread, 1.0)  # a constant column stays, as scikit-learn's scale leaves it
    y = y / (spread_y if spread_y > 0 else 1.0)
    X = X + 1e-10 * np.maximum(1.0, np.mean(np.abs(X), axis=0)) * rng.standard_normal((n_samples, n_features))
    y = y + 1e-10 * max(1.0, float(np.mean(np.abs(y)))) * rng.standard_normal(n_samples)
    sorted_y = np.sort(y)
    for j in range(n_features):
        points = np.column_stack([X[:, j], y])
        radius = np.nextafter(cKDTree(points).query(points, k=MI_NEIGHBOURS + 1, p=np.inf)[0][:, -1], 0)
        in_x = _within(np.sort(X[:, j]), X[:, j], radius)
        in_y = _within(sorted_y, y, radius)
        estimate = digamma(n_samples) + digamma(MI_NEIGHBOURS) - np.mean(digamma(in_x)) - np.mean(digamma(in_y))
        found[j] = max(0.0, estimate)
    return found


def _spearman(columns: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Absolute Spearman correlation of ``y`` with each column (0 for constant ones)."""
    ranks = rankdata(columns, axis=0)
    ranks -= ranks.mean(axis=0)
    target = rankdata(y)
    target -= target.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        found = np.abs(ranks.T @ target) / (np.linalg.norm(ranks, axis=0) * np.linalg.norm(target))
    return np.nan_to_num(found)


def _interactions(X: np.ndarray, y: np.ndarray, correlation: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's largest interaction (see the module docstring) and the feature it
    interacts with there (-1 for none)."""
    n_features = X.shape[1]
    pairs = np.zeros((n_features, n_features))
    if 2 <= n_features <= MAX_INTERACTION_FEATURES:
        if len(y) > INTERACTION_ROWS:
            rows = np.random.default_rng(seed).choice(len(y), INTERACTION_ROWS, replace=False)
            X, y = X[rows], y[rows]
        first, second = np.triu_indices(n_features, k=1)
        products = _spearman(X[:, first] * X[:, second], y)
        products[products <= np.maximum(correlation[first], correlation[second])] = 0.0
        pairs[first, second] = pairs[second, first] = products
    found = pairs.max(axis=1, initial=0.0)
    return found, np.where(found > 0, pairs.argmax(axis=1), -1)


def relevance(X: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's relevance to ``y`` in [0, 1] (see the module docstring) and, where
    its interaction sets it, the feature it interacts with (-1 elsewhere)."""
    information = mutual_information(X, y, seed)
    correlation = _spearman(X, y)
    interaction, partners = _interactions(X, y, correlation, seed)
    largest = max(correlation.max(), interaction.max()) or 1.0
    alone = np.maximum(information / (information.max() or 1.0), correlation / largest)
    interaction = interaction / largest
    partners[interaction < alone] = -1
    return np.maximum(alone, interaction), partners


def relevant_features(X: np.ndarray, y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Indices of ``k`` most relevant features of ``X`` to ``y`` (:func:`most_relevant`
    of their :func:`relevance`), in increasing order."""
    if X.shape[1] <= k:
        return np.arange(X.shape[1])
    return most_relevant(*relevance(X, y, seed), k)


def by_relevance(scores: np.ndarray) -> np.ndarray:
    """The features' indices, the highest relevance ``scores`` first (ties by position)."""
    return np.lexsort((np.arange(len(scores)), -scores))


def most_relevant(scores: np.ndarray, partners: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` features of the highest relevance ``scores``, in increasing
    order: in order of relevance, each with the partner its interaction needs
    (``partners``, :func:`relevance`; a pair only where both fit in), then the most
    relevant of those left out."""
    n_features = len(scores)
    if n_features <= k:
        return np.arange(n_features)
    ranked = by_relevance(scores)
    chosen: list[int] = []
    for feature in ranked:
        partner = int(partners[feature])
        group = [int(feature)] if partner < 0 or partner in chosen else [int(feature), partner]
        if feature not in chosen and len(chosen) + len(group) <= k:
            chosen += group
    chosen += [int(feature) for feature in ranked if feature not in chosen][: k - len(chosen)]
    return np.sort(chosen)


def other_subsets(scores: np.ndarray, k: int, read: np.ndarray, most: int) -> list[np.ndarray]:
    """The subsets of ``k`` features (indices in increasing order) drawn from the ``most``
    most relevant (by ``scores``, ties by position), largest summed relevance first
    (ties in the order of :func:`itertools.combinations`), without the subset ``read``."""
    ranked = by_relevance(scores)[:most]
    subsets = [np.sort(np.array(chosen)) for chosen in combinations(ranked, k)]
    order = np.argsort([-scores[subset].sum() for subset in subsets], kind="stable")
    read = set(np.asarray(read).tolist())
    return [subsets[i] for i in order if set(subsets[i].tolist()) != read]


def on_features(skeleton: Skeleton, features: np.ndarray) -> Skeleton:
    """``skeleton`` over a subset of features (``x_1`` is ``features[0]``) rewritten
    over all of them."""
    tokens = []
    for token in skeleton.tokens:
        index = variable_index(token)
        tokens.append(token if index is None else variable_token(int(features[index])))
    return Skeleton(tuple(tokens))


def linear_skeleton(features) -> Skeleton:
    """``c*x_a + c*x_b + ... + c`` over the ``features`` (column indices)."""
    return Skeleton((*_added_terms(features), CONSTANT))


def sum_skeleton(features) -> Skeleton:
    """``c*x_a + c*x_b + ...`` over the ``features`` (column indices, at least one): a
    line without its intercept."""
    return Skeleton((*_added_terms(features[:-1]), "mul", CONSTANT, variable_token(int(features[-1]))))


def _added_terms(features) -> list[str]:
    """The prefix tokens ``add mul c x_j`` of each of the ``features``, in order."""
    return [token for j in features for token in ("add", "mul", CONSTANT, variable_token(int(j)))]


def least_squares_line(problem: Problem, features: list[int]) -> tuple[np.ndarray, float]:
    """The (weighted) least-squares coefficients of ``y`` on the ``features`` and a
    constant (in :func:`linear_skeleton`'s order), and their mean squared error."""
    design = np.column_stack([problem.X[:, features], np.ones(len(problem.y))])
    root = np.ones(len(problem.y)) if problem.weights is None else np.sqrt(problem.weights)
    coefficients = np.linalg.lstsq(design * root[:, None], problem.y * root, rcond=None)[0]
    loss = float(np.average((design @ coefficients - problem.y) ** 2, weights=problem.weights))
    return coefficients, loss


def forward_terms(problem: Problem, basis: np.ndarray, costs: np.ndarray, complexity_penalty: float) -> list[int]:
    """Columns of ``basis`` chosen forward, each added while it lowers the selection
    score of ``c*b_1 + c*b_2 + ... + c`` (``costs``: each column's prefix tokens as a
    term, ``add mul c`` included).

    Each step adds the column that lowers the (weighted) squared error most, read off
    the residual and the remaining columns made orthogonal to those chosen (a
    Gram-Schmidt step per column added, so the work grows as points x columns x terms)."""
    n, d = basis.shape
    root = np.ones(n) if problem.weights is None else np.sqrt(problem.weights)
    total = float(np.sum(root**2))
    scale = variance(problem.y, problem.weights) or 1.0
    unit = root / np.linalg.norm(root)  # the constant, weighted
    weighted = basis * root[:, None]
    floors = 1e-12 * np.maximum(np.einsum("ij,ij->j", weighted, weighted), 1e-300)
    columns = weighted - np.outer(unit, unit @ weighted)
    residual = problem.y * root
    residual = residual - unit * (unit @ residual)
    norms = np.einsum("ij,ij->j", columns, columns)

    def score(tokens: int, squared_error: float) -> float:
        return float(scores(log_fvu([squared_error / total], scale), [tokens], complexity_penalty)[0])

    chosen: list[int] = []
    squared_error = float(residual @ residual)
    best, tokens = score(1, squared_error), 1
    while len(chosen) < d:
        with np.errstate(all="ignore"):
            gains = np.where(norms > floors, (residual @ columns) ** 2 / norms, 0.0)
        gains[chosen] = -1.0
        column = int(np.argmax(gains))  # the lowest index among equal gains
        trial = score(tokens + int(costs[column]), max(squared_error - float(gains[column]), 0.0))
        if not trial < best:
            break
        direction = columns[:, column] / np.sqrt(norms[column])
        residual = residual - direction * (direction @ residual)
        columns -= np.outer(direction, direction @ columns)
        norms = np.einsum("ij,ij->j", columns, columns)
        chosen, squared_error, best, tokens = (
            [*chosen, column],
            float(residual @ residual),
            trial,
            tokens + costs[column],
        )
    return chosen


def linear_candidate(problem: Problem, complexity_penalty: float) -> Fitted:
    """The linear candidate (skeleton, constants, mean squared error): forward
    selection of features (:func:`forward_terms`), each added while it lowers the
    selection score; the constants are then one least-squares fit on the chosen features."""
    chosen = forward_terms(problem, problem.X, np.full(problem.X.shape[1], 4), complexity_penalty)
    coefficients, loss = least_squares_line(problem, chosen)
    return Fitted(linear_skeleton(chosen), coefficients, loss)
