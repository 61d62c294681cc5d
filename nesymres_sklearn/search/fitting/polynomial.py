"""An exact polynomial, when the data is one: a candidate that needs no network.

Polynomials with several terms (``x**3 + x**2 + x``) are long skeletons, which a small
network rarely proposes exactly, yet linear least squares finds them at once. The
target is fitted on every monomial of the features up to ``MAX_DEGREE`` total degree
(by number of features); when that fit is exact (:func:`..exactness.is_exact_polynomial`),
the terms whose removal keeps it exact are dropped, weakest first, and the remaining sum
``c*m1 + c*m2 + ... + c`` becomes a candidate skeleton. Data that no polynomial fits
exactly (noise, other functions) gets no candidate: a polynomial that only approximates
would win in sample and fail outside the support.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import comb

import numpy as np

from ...expression.monomial import monomial_tokens
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..exactness import is_exact_polynomial
from ..problem import variance

# Total degree of the monomials tried, by number of features.
MAX_DEGREE = {1: 6, 2: 4, 3: 3}


def monomials(n_features: int, degree: int) -> list[tuple[int, ...]]:
    """Exponent tuples of every monomial of total degree 1..``degree``."""
    return [exponents for total in range(1, degree + 1) for exponents in monomials_of_degree(n_features, total)]


def monomials_of_degree(n_features: int, degree: int) -> list[tuple[int, ...]]:
    """Exponent tuples of every monomial of total degree ``degree``."""
    found = []
    for factors in combinations_with_replacement(range(n_features), degree):
        exponents = [0] * n_features
        for j in factors:
            exponents[j] += 1
        found.append(tuple(exponents))
    return found


def count_monomials(n_features: int, degree: int, at_most_once: int = 0) -> int:
    """How many monomials :func:`monomials_of_degree` lists, less those in which one of
    ``at_most_once`` of the features has a power above 1 (counted, not listed)."""
    free = n_features - at_most_once
    return sum(
        comb(at_most_once, k) * (comb(free + degree - k - 1, degree - k) if free else int(degree == k))
        for k in range(min(at_most_once, degree) + 1)
    )


def _fvu(basis: np.ndarray, y: np.ndarray, weights: np.ndarray | None) -> float:
    root = np.ones(len(y)) if weights is None else np.sqrt(weights)
    design = np.column_stack([basis, np.ones(len(y))]) * root[:, None]
    scale = np.linalg.norm(design, axis=0)
    scale[scale == 0] = 1.0
    coefficients = np.linalg.lstsq(design / scale, y * root, rcond=None)[0]
    residual = y * root - (design / scale) @ coefficients
    return float(np.mean(residual**2) / (variance(y, weights) or 1.0))


def exact_polynomial(X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> Skeleton | None:
    """The sparsest exact polynomial skeleton found for ``(X, y)`` (``weights``: sample
    weights, mean 1), or ``None``."""
    n_features = X.shape[1]
    if n_features not in MAX_DEGREE or len(y) < 3:
        return None
    terms = monomials(n_features, MAX_DEGREE[n_features])
    if len(terms) + 1 >= len(y):
        return None
    with np.errstate(all="ignore"):
        basis = np.column_stack([np.prod(X ** np.array(e), axis=1) for e in terms])
    if not np.all(np.isfinite(basis)) or not is_exact_polynomial(_fvu(basis, y, weights)):
        return None
    kept = list(range(len(terms)))
    for index in reversed(range(len(terms))):  # highest degrees first
        trial = [k for k in kept if k != index]
        if trial and is_exact_polynomial(_fvu(basis[:, trial], y, weights)):
            kept = trial
    tokens: list[str] = []
    for k in kept:
        tokens += ["add", "mul", CONSTANT, *monomial_tokens({j: power for j, power in enumerate(terms[k]) if power})]
    return Skeleton((*tokens, CONSTANT))
