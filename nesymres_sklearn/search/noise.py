"""The noise level of ``y``, estimated from the data alone (``noise_std_``).

Each point is predicted by a weighted least-squares polynomial of its nearest
neighbours in the standardised features (the point itself left out; a feature of one
sign sampled over decades, ``SearchSettings.noise_log_span``, by its logarithm): its residual
``r_i`` has variance ``sigma**2 * v_i`` with ``v_i = 1/w_i + sum_j l_ij**2 / w_j`` (the
sample weights ``w`` count as inverse variances, ``l_i`` are the local fit's weights of
the neighbours' targets), plus the squared bias of the local fit where the law curves
more than the polynomial. Bias only inflates, so the estimate is the smallest over
local fits of degrees 1 to 3 (while they have at most
``SearchSettings.noise_max_terms`` coefficients) and a few neighbourhood sizes of a quantile of
``r_i**2 / v_i``, divided by that quantile of the chi-square law of one degree of
freedom (Gaussian noise). On at least ``SearchSettings.noise_stretch_features``
features the neighbourhoods are taken twice: in the standardised features, and with each
feature stretched by the law's sensitivity to it (the root mean square of its partial
derivative in a global quadratic least-squares fit, relative to the largest, at least
``SearchSettings.noise_least_stretch``): the neighbours then lie close along the
features that move ``y`` and far along those that hardly do, and the local fits read
less of the law's curvature. A law that varies faster than the points resolve
(``sin(x**3)`` over several periods) reads as noise. On more than
``SearchSettings.noise_points`` points, that many of them (drawn with a fixed seed) are
predicted, each by its neighbours among all the points: the work is bounded, the
neighbourhoods as close. With a deadline, the local fits that the time left held count
(NaN when none was).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial import cKDTree
from scipy.stats import chi2

from .budget import Deadline
from .fitting.polynomial import monomials
from .problem import Problem
from .settings import SearchSettings

#: Local fits of these total degrees are tried.
DEGREES = (1, 2, 3)
#: The sensitivities are read from a quadratic with at most this many coefficients (up to
#: nine features), else from a line: the work stays a few milliseconds.
SENSITIVITY_MAX_TERMS = 64
# With max_time, a local fit starts only while the time left holds this many seconds per
# centre times (neighbours + terms) times terms squared (its normal equations and their
# solve), at the fit's pace: 1-4 ns on the 2-core development machine (the first fit of
# 20 features on 1,000 centres, 31 neighbours: 41 ms).
NOISE_SECONDS_PER_UNIT = 5e-9


def _standardised(X: np.ndarray) -> np.ndarray:
    spread = X.std(axis=0)
    spread[spread == 0] = 1.0
    return (X - X.mean(axis=0)) / spread


def _in_logs(X: np.ndarray, span: float | None) -> np.ndarray:
    """``X`` standardised, each column of one sign whose largest magnitude is more than
    ``span`` times its smallest (none where ``span`` is None) and whose median lies
    nearer the middle of its range in logarithms than as it is (sampled over decades,
    not evenly from near 0) read as ``log|x|``."""
    read = np.array(X, dtype=np.float64)
    if span is not None:
        with np.errstate(all="ignore"):
            magnitudes = np.abs(read)
            one_sign = np.all(read > 0, axis=0) | np.all(read < 0, axis=0)
            wide = one_sign & (magnitudes.max(axis=0) > span * magnitudes.min(axis=0))
            logs = np.log(magnitudes)
            wide &= _off_middle(logs) < _off_middle(magnitudes)
            read[:, wide] = logs[:, wide]
    return _standardised(read)


def _off_middle(X: np.ndarray) -> np.ndarray:
    """How far each column's median lies from the middle of its range, as a share of it."""
    low, high = X.min(axis=0), X.max(axis=0)
    return np.abs((np.median(X, axis=0) - low) / np.where(high > low, high - low, 1.0) - 0.5)


def _stretch(Z: np.ndarray, normalised: np.ndarray, weights: np.ndarray, least: float) -> np.ndarray | None:
    """Each column's relative sensitivity: the root mean square over the points of the
    partial derivative of the weighted least-squares quadratic (linear where the
    quadratic has more than :data:`SENSITIVITY_MAX_TERMS` coefficients or a third of the
    points), divided by the largest, at least ``least``; None where the fit
    is not finite or nothing varies."""
    n, d = Z.shape
    pairs = [(i, j) for i in range(d) for j in range(i, d)]
    quadratic = 1 + d + len(pairs) <= min(SENSITIVITY_MAX_TERMS, n / 3)
    columns = [np.ones((n, 1)), Z] + ([np.column_stack([Z[:, i] * Z[:, j] for i, j in pairs])] if quadratic else [])
    root = np.sqrt(weights)
    with np.errstate(all="ignore"):
        coefficients = np.linalg.lstsq(np.hstack(columns) * root[:, None], normalised * root, rcond=None)[0]
        hessian = np.zeros((d, d))
        for (i, j), value in zip(pairs if quadratic else [], coefficients[1 + d :]):
            hessian[i, j] += value
            hessian[j, i] += value
        slopes = np.sqrt(np.mean((coefficients[1 : 1 + d] + Z @ hessian) ** 2, axis=0))
    if not np.all(np.isfinite(slopes)) or slopes.max() <= 0:
        return None
    return np.maximum(slopes / slopes.max(), least)


def _smoother(
    Z: np.ndarray, weights: np.ndarray, centres: np.ndarray, neighbours: np.ndarray, degree: int
) -> np.ndarray:
    """The weights (a row per centre) by which each of the points ``centres``' weighted
    least-squares polynomial of ``degree`` on its ``neighbours`` (a row of indices per
    centre) predicts the centre from the neighbours' targets."""
    offsets = Z[neighbours] - Z[centres][:, None, :]  # (m, k, d)
    powers = [np.ones_like(offsets), offsets, offsets * offsets, offsets * offsets * offsets][: degree + 1]
    columns = [np.ones(offsets.shape[:2])]
    for exponents in monomials(Z.shape[1], degree):
        column = columns[0]
        for j, power in enumerate(exponents):
            if power:
                column = column * powers[power][:, :, j]
        columns.append(column)
    design = np.stack(columns, axis=-1)
    w = weights[neighbours]
    weighted = design.transpose(0, 2, 1) * w[:, None, :]  # (n, p, k)
    gram = weighted @ design
    ridge = 1e-10 * np.trace(gram, axis1=1, axis2=2)[:, None, None] * np.eye(gram.shape[1]) / gram.shape[1]
    first = np.zeros(gram.shape[:2])
    first[:, 0] = 1.0
    # the intercept (the fit at the point) is e_1' G^-1 A'W y: with G symmetric, u = G^-1 e_1
    return np.einsum("np,npk->nk", np.linalg.solve(gram + ridge, first[:, :, None])[:, :, 0], weighted)


def _local_ratios(
    Z: np.ndarray, y: np.ndarray, weights: np.ndarray, centres: np.ndarray, neighbours: np.ndarray, degree: int
) -> np.ndarray:
    """``r_i**2 / v_i`` of each of the points ``centres``' local fit of ``degree`` on its
    ``neighbours`` (a row of indices per centre)."""
    smoother = _smoother(Z, weights, centres, neighbours, degree)
    residuals = y[centres] - np.einsum("nk,nk->n", smoother, y[neighbours])
    variances = 1.0 / weights[centres] + np.einsum("nk,nk->n", smoother**2, 1.0 / weights[neighbours])
    return residuals**2 / variances


def smoothed(problem: Problem, settings: SearchSettings) -> Problem:
    """``problem`` with each target replaced by its local fit: the polynomial of degree 2
    (1 where that has more than ``SearchSettings.noise_max_terms`` coefficients) fitted by
    weighted least squares to its nearest neighbours in the standardised features, the
    point itself among them, three times as many as the coefficients (all the points at
    most); the noise of ``y`` shrinks, a law's curvature beyond the polynomial's stays as
    a bias."""
    X, y = problem.X, problem.y
    n, d = X.shape
    degree = 2 if len(monomials(d, 2)) + 1 <= settings.noise_max_terms else 1
    k = min(3 * (len(monomials(d, degree)) + 1), n)
    weights = np.ones(n) if problem.weights is None else problem.weights
    Z = _standardised(X)
    neighbours = cKDTree(Z).query(Z, k)[1].reshape(n, k)
    offset = np.mean(y)
    with np.errstate(all="ignore"):
        smoother = _smoother(Z, weights, np.arange(n), neighbours, degree)
        values = offset + np.einsum("nk,nk->n", smoother, y[neighbours] - offset)
    return dataclasses.replace(problem, y=np.where(np.isfinite(values), values, y))


def noise_std(problem: Problem, settings: SearchSettings, deadline: Deadline | None = None, pace: float = 1.0) -> float:
    """The standard deviation of the noise of ``problem.y`` at a point of weight 1 (the
    weights have mean 1), in the units of ``problem.y``; 0 for a constant ``y``, NaN
    with too few points for a local line (fewer than the features plus 6) or when the
    time left before the ``deadline`` did not hold the first local fit
    (:data:`NOISE_SECONDS_PER_UNIT` at the fit's ``pace``, :meth:`.budget.Budget.pace`)."""
    X, y = problem.X, problem.y
    n, d = X.shape
    magnitude = float(np.max(np.abs(y)))
    unit = y / magnitude if magnitude > 0 else y  # no overflow near the largest floats
    spread = float(np.std(unit))
    if spread == 0:
        return 0.0
    weights = np.ones(n) if problem.weights is None else problem.weights
    # the features that span decades in their logarithms: a law of them curves less there
    Z, normalised = _in_logs(X, settings.noise_log_span), (unit - np.mean(unit)) / spread
    sizes = []  # (degree, neighbours, terms) of each local fit
    for degree in DEGREES:
        size = len(monomials(d, degree)) + 1
        if size > settings.noise_max_terms and degree > 1:
            break
        for factor in settings.noise_neighbourhoods:
            k = int(max(factor * size, size + 4))
            if k <= n - 1 and (degree == 1 or k <= (n - 1) / 2):
                sizes.append((degree, k, size))
    centres = np.arange(n)
    if n > settings.noise_points:
        centres = np.sort(np.random.default_rng(0).choice(n, settings.noise_points, replace=False))

    def holds(k: int, size: int) -> bool:  # the time left holds a local fit (the neighbours' search: the first)
        seconds = pace * NOISE_SECONDS_PER_UNIT * len(centres) * (k + size) * size**2
        return deadline is None or deadline.holds(seconds)

    if not sizes or not holds(*sizes[0][1:]):
        return float("nan")
    level = chi2.ppf(settings.noise_quantile, 1)
    estimates = []
    stretch = None
    if d >= settings.noise_stretch_features and settings.noise_least_stretch is not None:
        stretch = _stretch(Z[centres], normalised[centres], weights[centres], settings.noise_least_stretch)
    for metric in [Z] if stretch is None else [Z, Z * stretch]:
        if not holds(*sizes[0][1:]):
            break
        found = cKDTree(metric).query(metric[centres], max(k for _, k, _ in sizes) + 1)[1]
        # nearest first, the point itself (or a duplicate of it) left out
        found = np.take_along_axis(found, np.argsort(found == centres[:, None], axis=1, kind="stable"), axis=1)
        for degree, k, size in sizes:
            if not holds(k, size):
                break
            with np.errstate(all="ignore"):
                ratios = _local_ratios(metric, normalised, weights, centres, found[:, :k], degree)
            if np.all(np.isfinite(ratios)):
                estimates.append(np.quantile(ratios, settings.noise_quantile) / level)
    return float(np.sqrt(min(estimates)) * spread * magnitude) if estimates else float("nan")
