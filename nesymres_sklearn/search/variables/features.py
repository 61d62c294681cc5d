"""More features than the network has variables: which ones it sees, and how its
skeletons are written back over all of them.

Features are ranked by relevance to ``y``: the larger of their estimated mutual
information (:func:`sklearn.feature_selection.mutual_info_regression`, which catches
non-monotone dependence such as ``sin(x)`` or ``x**2``) and their absolute Spearman
correlation (which catches a monotone term that the k-nearest-neighbour estimate of
mutual information misses next to stronger ones, as ``x5`` in ``x1*x4 + x5``), each
divided by its largest value; ties by position. The network works on the top ones,
and its skeletons' variables are renamed to the features they stand for. A linear
candidate over every feature (fitted like the others) keeps what the network cannot
see from being lost entirely.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata
from sklearn.feature_selection import mutual_info_regression

from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT, variable_index, variable_token


def relevance(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Each feature's relevance to ``y`` in [0, 1] (see the module docstring)."""
    information = mutual_info_regression(X, y, random_state=seed)
    with np.errstate(invalid="ignore"):
        ranks = np.column_stack([rankdata(X, axis=0), rankdata(y)])
        correlation = np.abs(np.corrcoef(ranks, rowvar=False)[-1, :-1])
    scores = [np.nan_to_num(s) / (np.nanmax(s) or 1.0) for s in (information, correlation)]
    return np.maximum(*scores)


def relevant_features(X: np.ndarray, y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Indices of the ``k`` most relevant features, in increasing order."""
    if X.shape[1] <= k:
        return np.arange(X.shape[1])
    ranked = np.lexsort((np.arange(X.shape[1]), -relevance(X, y, seed)))
    return np.sort(ranked[:k])


def on_features(skeleton: Skeleton, features: np.ndarray) -> Skeleton:
    """``skeleton`` over a subset of features (``x_1`` is ``features[0]``) rewritten
    over all of them."""
    tokens = []
    for token in skeleton.tokens:
        index = variable_index(token)
        tokens.append(token if index is None else variable_token(int(features[index])))
    return Skeleton(tuple(tokens))


def linear_skeleton(n_features: int) -> Skeleton:
    """``c*x_1 + c*x_2 + ... + c``."""
    tokens: list[str] = []
    for j in range(n_features):
        tokens += ["add", "mul", CONSTANT, variable_token(j)]
    return Skeleton((*tokens, CONSTANT))
