"""Fewer variables for the network: the few combinations of the features that ``y`` depends on.

Many laws with many features depend on them only through a few combinations: groups
of powers (``x1*x2/(x3*x4)`` inside an ``exp``, ``v/c``) and differences (``x2 - x1``),
the symmetries AI Feynman tests pairwise (Udrescu & Tegmark 2020). When ``y = g(W t)``
with ``t = log x`` (products of powers) or ``t = x`` (sums), every gradient of ``y``
with respect to ``t`` lies in the row space of ``W``. So, in each coordinate system:

1. A Gaussian process (scikit-learn; a Gaussian kernel with one length scale per
   column, plus white noise) is fitted on at most ``SURROGATE_POINTS`` points, to
   ``log|y|`` for products of powers when ``y`` keeps one sign, else to ``y``; its
   gradients at them are exact in closed form. Repeated points count once (a point
   left out would be predicted by its copy).
2. For ``r`` from 1 to the network's variables, the leading ``r`` right singular
   vectors of the gradients (each scaled to length 1) span the estimate of ``W``'s rows.
3. A simple basis of that span: for every choice of ``r`` pivot columns, the basis that
   is the identity there, its entries rounded to multiples of one half (products of
   powers) or to integers (sums), at most ``MAX_EXPONENT`` in magnitude. Of the bases
   that leave out about the least share of the gradients' length (within
   ``reduction_left_out_slack`` times it plus ``reduction_left_out_floor``, and at most
   ``reduction_max_left_out``), the simplest (smallest sum of magnitudes) come first.
4. The first ``CANDIDATES_PER_RANK`` are verified: a Gaussian process on the ``r``
   combinations must predict ``y`` at left-out points (leave-one-out, in closed form)
   with at least ``reduction_min_r2`` of its variance explained and at most
   ``reduction_max_error_ratio`` of the error of the one on all features (or both
   exact; both are :class:`..settings.SearchSettings` fields). A wrong combination loses
   information and predicts worse; a right one predicts better, having fewer inputs.
   Of those that pass, the simplest that predicts about as well as the best; then its
   halves rounded toward zero, if that predicts better still.

The fewest combinations that pass win, logs first on a tie. Nothing new starts after
the network's deadline, and the second system only when the time left exceeds what
the first one's Gaussian process on all the features took. Products of powers need every column positive. The
network then works on the combinations, each divided by a power of ten that keeps it
in the network's range, and each of its skeletons comes back over the features by
substitution. Noise blurs the test: with 1% of noise a group of powers is still found,
with more, often nothing is (or a combination that the noisy data cannot tell from the
true one).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace

import numpy as np
import sympy

from ...expression.monomial import monomial_tokens
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT, variable_token
from ...shared_setting import one_blas_thread
from ..budget import Deadline
from ..exactness import SURROGATE, is_exact_surrogate
from ..scaling import FEATURE_BAND, power_of_ten
from ..settings import SearchSettings
from .power_law import MAX_EXPONENT, keeps_one_sign
from .surrogate import OutOfTime, Surrogate

#: Points the Gaussian processes are fitted on (a random subset of larger data).
SURROGATE_POINTS = 128
#: Fewer distinct points than this give no reduction.
MIN_POINTS = 20
#: Rounded bases verified for each number of combinations.
CANDIDATES_PER_RANK = 2
#: Pivots are chosen among this many columns, those that weigh most in the span.
PIVOT_COLUMNS = 8
#: Pivot blocks this close to singular give no basis.
MIN_PIVOT_DETERMINANT = 1e-3


@dataclass(frozen=True)
class Reduction:
    """The network's variables ``z_k = combination_k(x) / scales[k]``. Row ``k`` of
    ``coefficients`` holds the powers of the features in ``z_k`` (``logarithmic``) or
    their integer coefficients in a sum; ``r2`` is the leave-one-out share of ``y``'s
    variance that the combinations explain."""

    coefficients: np.ndarray
    logarithmic: bool
    scales: np.ndarray
    r2: float

    @property
    def columns(self) -> np.ndarray:
        """The features that take part."""
        return np.flatnonzero(np.any(self.coefficients != 0, axis=0))

    def features(self, X: np.ndarray) -> np.ndarray:
        """The combinations of the columns of ``X``, one column each, scaled."""
        with np.errstate(all="ignore"):
            if self.logarithmic:
                Z = np.exp(np.log(X) @ self.coefficients.T)
            else:
                Z = X @ self.coefficients.T
        return Z / self.scales

    def _tokens(self, k: int) -> tuple[list[str], list[float]]:
        """Tokens of ``z_k`` over the features, and the constants they hold."""
        row = self.coefficients[k]
        if self.logarithmic:
            tokens = monomial_tokens({j: float(b) for j, b in enumerate(row) if b != 0})
        else:
            terms = [
                [variable_token(j)] if b == 1 else ["mul", str(int(b)), variable_token(j)]
                for j, b in enumerate(row)
                if b != 0
            ]
            tokens = [token for term in terms[:-1] for token in ("add", *term)] + terms[-1]
        if self.scales[k] == 1:
            return tokens, []
        return ["mul", CONSTANT, *tokens], [1 / float(self.scales[k])]

    def substituted(self, skeleton: Skeleton, constants: np.ndarray) -> tuple[Skeleton, np.ndarray]:
        """``skeleton`` over the combinations (``x_1`` is ``z_1``), rewritten over the
        features, with its constants and those of the substitutions in token order."""
        return skeleton.substituted(constants, self._tokens)

    def describe(self, symbols) -> list[str]:
        """Each combination written with the features' SymPy ``symbols``, unscaled."""
        written = []
        for row in self.coefficients:
            terms = [(symbols[j], sympy.Rational(b)) for j, b in enumerate(row) if b != 0]
            if self.logarithmic:
                written.append(str(sympy.Mul(*(symbol**b for symbol, b in terms))))
            else:
                written.append(str(sympy.Add(*(b * symbol for symbol, b in terms))))
        return written


def _rounded_bases(directions: np.ndarray, step: float) -> list[np.ndarray]:
    """Simple bases of the span of the rows of ``directions``: the identity in each
    choice of pivot columns (among the ``PIVOT_COLUMNS`` that weigh most in the span),
    rounded to multiples of ``step``; distinct, none with an entry beyond
    ``MAX_EXPONENT`` or a zero row."""
    r = len(directions)
    weights = np.linalg.norm(directions, axis=0)
    candidates = np.sort(np.argsort(-weights, kind="stable")[:PIVOT_COLUMNS])
    bases, seen = [], set()
    for pivots in itertools.combinations(candidates, r):
        block = directions[:, pivots]
        if abs(np.linalg.det(block)) < MIN_PIVOT_DETERMINANT:
            continue
        basis = np.round(np.linalg.solve(block, directions) / step) * step + 0.0
        if np.any(np.abs(basis) > MAX_EXPONENT) or np.any(np.all(basis == 0, axis=1)):
            continue
        q, _ = np.linalg.qr(basis.T)
        key = np.round(q @ q.T, 6).tobytes()  # the span: a row's sign or a sum of rows is the same reduction
        if key not in seen:
            seen.add(key)
            bases.append(basis)
    return bases


def _left_out(unit_gradients: np.ndarray, basis: np.ndarray) -> float:
    """Share of the gradients' squared length outside the span of ``basis``'s rows."""
    q, _ = np.linalg.qr(basis.T)
    inside = unit_gradients @ q
    return float(1 - np.sum(inside**2) / np.sum(unit_gradients**2))


def _simplest(bases: list[np.ndarray], unit_gradients: np.ndarray, settings: SearchSettings) -> list[np.ndarray]:
    """``bases`` that leave out at most ``reduction_left_out_slack`` times the least share of the
    gradients' length (plus ``reduction_left_out_floor``), the simplest (smallest sum of
    magnitudes) first; the gradients' errors make closer fits than that noise."""
    left_out = [_left_out(unit_gradients, basis) for basis in bases]
    if not bases:
        return []
    slack, floor = settings.reduction_left_out_slack, settings.reduction_left_out_floor
    bound = min(slack * min(left_out) + floor, settings.reduction_max_left_out)
    kept = [(np.abs(basis).sum(), share, i) for i, (basis, share) in enumerate(zip(bases, left_out)) if share <= bound]
    return [bases[i] for _, _, i in sorted(kept)]


def _reduce(
    T: np.ndarray,
    target: np.ndarray,
    most: int,
    step: float,
    seed: int,
    deadline: Deadline | None,
    settings: SearchSettings,
) -> tuple[tuple | None, float]:
    """The fewest verified combinations (rows, at most ``most``) of the columns of
    ``T`` and their leave-one-out error, or ``None`` (also once ``deadline`` passed);
    and the seconds the Gaussian process on all the columns took."""
    clock = time.perf_counter if deadline is None else deadline.clock  # the budget's clock, when there is one
    moment = clock()
    full = Surrogate(T, target, seed, deadline)
    seconds = clock() - moment
    return _verified(T, target, full, most, step, seed, deadline, settings), seconds


def _verified(
    T: np.ndarray,
    target: np.ndarray,
    full: Surrogate,
    most: int,
    step: float,
    seed: int,
    deadline: Deadline | None,
    settings: SearchSettings,
) -> tuple | None:
    """The proposals from ``full``'s gradients, verified (see ``_reduce``) against the
    ``settings``' ``reduction_min_r2`` and ``reduction_max_error_ratio``."""
    if deadline is not None and deadline.passed():
        return None
    gradients = full.gradients()
    lengths = np.linalg.norm(gradients, axis=1)
    keep = lengths > 1e-12 * (lengths.max() or 1.0)
    if keep.sum() < 2:
        return None
    unit = gradients[keep] / lengths[keep, None]
    directions = np.linalg.svd(unit, full_matrices=False)[2]
    for r in range(1, min(most, T.shape[1] - 1) + 1):
        passed = []
        for basis in _simplest(_rounded_bases(directions[:r], step), unit, settings)[:CANDIDATES_PER_RANK]:
            if deadline is not None and deadline.passed():
                return None
            error = Surrogate(T @ basis.T, target, seed, deadline).error
            good = error <= 1 - settings.reduction_min_r2
            if good and (error <= settings.reduction_max_error_ratio * full.error or is_exact_surrogate(error)):
                passed.append((error, basis))
                if is_exact_surrogate(error):
                    break
        if passed:  # the simplest of those that predict about as well as the best
            least = min(error for error, _ in passed)
            error, basis = next(item for item in passed if item[0] <= 2 * least + SURROGATE)
            return _toward_zero(T, target, basis, error, seed)
    return None


def _toward_zero(T: np.ndarray, target: np.ndarray, basis: np.ndarray, error: float, seed: int) -> tuple:
    """``basis`` with its halves rounded toward zero when that predicts better (the
    gradients' errors can turn a power 0 or 1 into a half), else ``basis``; and the
    error."""
    simpler = np.fix(basis)
    if np.array_equal(simpler, basis) or np.any(np.all(simpler == 0, axis=1)):
        return basis, error
    if np.linalg.matrix_rank(simpler) < len(simpler):
        return basis, error
    simpler_error = Surrogate(T @ simpler.T, target, seed).error
    return (simpler, simpler_error) if simpler_error < error else (basis, error)


def reduction(
    X: np.ndarray,
    y: np.ndarray,
    n_variables: int,
    seed: int,
    deadline: Deadline | None = None,
    settings: SearchSettings | None = None,
) -> Reduction | None:
    """At most ``n_variables`` combinations of the columns of ``X`` that ``y`` depends
    on (see the module docstring; ``settings``, default :class:`.SearchSettings`, say how
    well they must predict ``y``), or ``None`` when the data show none or ``deadline``
    passes first."""
    settings = SearchSettings() if settings is None else settings
    if X.shape[1] <= n_variables:
        return None
    # repeated points would predict themselves when one is left out
    distinct = np.unique(X, axis=0, return_index=True)[1]
    if len(distinct) < MIN_POINTS:
        return None
    sample = np.sort(np.random.default_rng(seed).permutation(distinct)[:SURROGATE_POINTS])
    in_logs = np.log(np.abs(y[sample])) if keeps_one_sign(y) else y[sample]
    systems = [(True, 0.5, in_logs)] if np.all(X > 0) else []
    systems.append((False, 1.0, y[sample]))
    found, seconds = None, 0.0
    with one_blas_thread():
        for logarithmic, step, target in systems:
            most = n_variables if found is None else len(found[1]) - 1  # logs win a tie
            if most < 1 or (deadline is not None and deadline.left() <= seconds):  # it would end after it
                break
            T = np.log(X[sample]) if logarithmic else X[sample]
            try:
                result, seconds = _reduce(T, target, most, step, seed, deadline, settings)
            except OutOfTime:
                break
            if result is not None:
                found = (logarithmic, *result)
    if found is None:
        return None
    logarithmic, basis, error = found
    unscaled = Reduction(basis, logarithmic, np.ones(len(basis)), 1 - error)
    Z = unscaled.features(X)
    if not np.all(np.isfinite(Z)):
        return None
    return replace(unscaled, scales=np.array([power_of_ten(column, FEATURE_BAND) for column in Z.T]))
