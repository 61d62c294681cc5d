"""The linear systems of the polynomial identities (:mod:`.identities`) and the laws read
from their null vectors.

When ``y = P(x)/Q(x)`` for polynomials ``P`` and ``Q``, the identity ``t*Q - P = 0``
holds at every point with ``t = y``; when ``y = ±sqrt(P/Q)``, with ``t = y**2``. It is
linear in the coefficients: over the monomials of total degree up to ``d_P`` and
``d_Q`` (:func:`basis_exponents`, :func:`degree_pairs`), they are a null vector of the
matrix of the columns ``m(x)`` and ``-t*m(x)`` (:class:`System`, on at most
``SVD_POINTS`` points spread over the data), its smallest right singular vector. Each
point's row is scaled to unit norm (every point counts alike on data over decades), then
each column, so that a coefficient is its term's share of the identity (:func:`scaled_matrix`);
an identity *holds* when it leaves at most a rounding's share of the sum of squares of
its terms (:func:`.exactness.is_exact_to_rounding`). The null vector is made sparse
(:meth:`System.sparse`) and read as the law ``c*m*P/Q`` or ``c*m*sqrt(P/Q)``
(:func:`terms_law`); the law extrapolates where, fitted on the points where any one feature
is at most its median, it holds on every point (:func:`extrapolates`).

Under noise (a :class:`.exactness.Tolerance`), each point's row is divided by the noise
of its ``t`` instead, a null vector holds where its residual is at most
``noise_ratio**2`` times the share of it that the noise of ``t`` makes (a generalized
eigenproblem, :class:`Nulls`), the law is polished by Gauss-Newton steps on its own
error (:meth:`System.fitted_terms`), and it extrapolates where its constants'
uncertainty adds to the noise (:func:`_extrapolates_to_the_noise`).
"""

from __future__ import annotations

from functools import cache
from itertools import combinations, product
from typing import NamedTuple

import numpy as np
import scipy.linalg

from ..expression.monomial import monomial_tokens
from ..expression.skeleton import Skeleton
from ..expression.tokens import CONSTANT
from .budget import Deadline
from .exactness import EXACT, Tolerance, is_exact_to_rounding
from .fitted import Fitted, mse
from .fitting.constants import least_squares_run
from .fitting.polynomial import count_monomials, monomials_of_degree
from .problem import Problem
from .pursuit import gauss_newton, law_residual

#: The total degree of ``P`` and of ``Q``, at most (integer powers up to 5 are tokens).
MAX_DEGREE = 5
#: The singular value decompositions read at most this many points, spread over the data.
SVD_POINTS = 256
#: Where ``y`` changes sign, the features that change sign whose products are compared
#: with it, at most (2**8 products).
MAX_SIGN_FEATURES = 8
#: Under noise, the null vectors' generalized eigenproblem (:class:`Nulls`) adds
#: this share of the mean of its residuals' matrix's diagonal to it (that matrix is
#: singular where monomials are).
NULL_RIDGE = 1e-12


def basis_exponents(n_features: int, unknowns: int, sines: frozenset = frozenset()) -> np.ndarray:
    """The exponents (rows) of the monomials of ``n_features`` variables, the constant
    first and then by total degree, up to the largest degree at which they are fewer than
    ``unknowns`` (and at most ``MAX_DEGREE``); the columns in ``sines`` to a power of at most 1."""
    rows: list[tuple[int, ...]] = [(0,) * n_features]
    for degree in range(1, MAX_DEGREE + 1):
        if len(rows) + count_monomials(n_features, degree, len(sines)) >= unknowns:
            break  # counted first: a layer too large to use is not listed (20 features' cubes: 1,540)
        rows += [e for e in monomials_of_degree(n_features, degree) if all(e[j] <= 1 for j in sines)]
    return np.array(rows, dtype=np.int64).reshape(len(rows), n_features)


def spread_points(n: int) -> np.ndarray:
    """The indices of the at most ``SVD_POINTS`` points, spread over ``n``, that the systems read."""
    return np.unique(np.linspace(0, n - 1, min(n, SVD_POINTS)).astype(int))


def basis_and_counts(n_features: int, unknowns: int, sines: frozenset = frozenset()) -> tuple[np.ndarray, np.ndarray]:
    """:func:`basis_exponents` and how many of them are of each total degree or less."""
    exponents = basis_exponents(n_features, unknowns, sines)
    return exponents, np.cumsum(np.bincount(exponents.sum(axis=1)))


def degree_pairs(counts: np.ndarray, unknowns: int) -> list[tuple[int, int]]:
    """The degrees ``(d_P, d_Q)`` whose monomials (``counts[d]``: those of total degree up
    to ``d``; degrees beyond ``counts`` have too many) are at most ``unknowns``, without
    ``(0, 0)`` (a constant ``y``)."""
    degrees = range(len(counts))
    return [(p, q) for p, q in product(degrees, degrees) if (p, q) != (0, 0) and counts[p] + counts[q] <= unknowns]


def largest_pairs(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs below no other pair."""
    return [(p, q) for p, q in pairs if not any(a >= p and b >= q and (a, b) != (p, q) for a, b in pairs)]


def monomial_values(X: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """The monomials of ``exponents`` (rows) at the points ``X``, one column each."""
    return np.prod(X[:, None, :] ** exponents[None], axis=2)


def scaled_matrix(
    matrix: np.ndarray, derivative: np.ndarray | None = None, sd: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``matrix`` with each row and then each column of unit norm, the columns' norms (a
    zero row or column stays as it is), and ``derivative`` (each row's by the point's
    ``t``; ``None`` exact to rounding) scaled alike. Under noise (``sd``, that of each
    point's ``t``), each row is divided by its noise instead: the residuals are then in
    units of the noise, and a chi-square test weighs each point by what it carries (on
    rows of unit norm, the noisiest points would pass any vector)."""
    if sd is None:
        rows = np.linalg.norm(matrix, axis=1, keepdims=True)
        rows = np.where(rows > 0, rows, 1.0)
    else:
        rows = sd[:, None]
    matrix = matrix / rows
    norms = np.linalg.norm(matrix, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    slopes = None if derivative is None else derivative / rows / norms
    return matrix / norms, norms, slopes


_SYGVX, _SYGVX_LWORK = scipy.linalg.get_lapack_funcs(("sygvx", "sygvx_lwork"), (np.zeros((1, 1)),))


@cache
def _sygvx_workspace(k: int) -> int:
    """``dsygvx``'s optimal workspace for ``k`` unknowns, queried as scipy queries it."""
    work, info = _SYGVX_LWORK(k, uplo="L")
    if info != 0:
        raise np.linalg.LinAlgError(f"dsygvx's workspace query failed (info {info}) for {k} unknowns")
    return int(work)


def _largest_generalized(a: np.ndarray, b: np.ndarray, count: int) -> np.ndarray:
    """The eigenvectors (columns, ascending) of the ``count`` largest eigenvalues of
    ``a v = w (b + r I) v``, ``r`` :data:`NULL_RIDGE` times the mean of ``b``'s diagonal:
    LAPACK's ``dsygvx`` as :func:`scipy.linalg.eigh` calls it for ``subset_by_index``,
    without its checks and its workspace query on every call (the identities under noise
    solve tens of thousands of these small problems); ``1 <= count <= len(b)``."""
    k = len(b)
    ridged = b.copy()
    ridged.flat[:: k + 1] += NULL_RIDGE * np.trace(b) / k
    _, vectors, found, _, info = _SYGVX(
        a, ridged, itype=1, jobz="V", range="I", uplo="L", il=k - count + 1, iu=k, lwork=_sygvx_workspace(k)
    )
    if info != 0:
        raise np.linalg.LinAlgError(f"dsygvx failed (info {info}) on a {k} x {k} null-vector problem")
    return vectors[:, :found]


class Nulls:
    """The null vectors of a scaled ``matrix`` over any subset of its columns, and whether
    each holds to ``tolerance``. Exact to rounding: the right singular vectors of the
    smallest singular values. Under noise: those of the smallest ratio of the squared
    residual to the share of it that the noise of ``t`` makes (the rows change with ``t``
    by ``slopes``, :func:`scaled_matrix`), a generalized eigenproblem of the two Gram matrices
    (computed once): the columns' own near-dependencies (a polynomial of ``cos`` on a
    narrow range), which ``t`` has no part in, leave residuals below the noise's, but no
    noise explains them."""

    def __init__(self, matrix: np.ndarray, slopes: np.ndarray | None, tolerance: Tolerance):
        self.matrix, self.tolerance = matrix, tolerance
        if not tolerance.exact:
            noise = slopes * tolerance.sd[:, None]
            self.gram, self.noise_gram = matrix.T @ matrix, noise.T @ noise
            # every block of finite Gram matrices is finite: then no block is checked
            self.finite = bool(np.all(np.isfinite(self.gram)) and np.all(np.isfinite(self.noise_gram)))

    def holds(self, columns: np.ndarray | None = None, count: int = 1) -> list[bool]:
        """Whether the ``count`` closest null vectors over ``columns`` (default: all) hold."""
        if self.tolerance.exact:  # the singular values alone
            values = np.linalg.svd(self._columns(columns), compute_uv=False)
            return [self.tolerance.null_holds(values[-k] ** 2) for k in range(1, count + 1)]
        return self.vectors(columns, count)[0]

    def vectors(self, columns: np.ndarray | None = None, count: int = 1) -> tuple[list[bool], np.ndarray]:
        """The ``count`` closest null vectors over ``columns`` (rows, the closest first)
        and whether each holds."""
        if self.tolerance.exact:
            _, values, vectors = np.linalg.svd(self._columns(columns), full_matrices=False)
            return [self.tolerance.null_holds(values[-k] ** 2) for k in range(1, count + 1)], vectors[::-1][:count]
        every = slice(None) if columns is None else np.ix_(columns, columns)
        gram, noise = self.gram[every], self.noise_gram[every]
        k = len(gram)
        if k < count or not (self.finite or (np.all(np.isfinite(gram)) and np.all(np.isfinite(noise)))):
            return [False] * count, np.zeros((count, k))
        # the largest ratios of the noise's share to the residual, ascending
        vectors = _largest_generalized(noise, gram, count)
        vectors = vectors[:, ::-1].T
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        holds = [self.tolerance.null_holds(v @ gram @ v, v @ noise @ v) for v in vectors]
        return holds, vectors

    def _columns(self, columns: np.ndarray | None) -> np.ndarray:
        return self.matrix if columns is None else self.matrix[:, columns]


class System:
    """The identity's matrix for one ``t`` on the points read: the monomial columns
    ``basis`` (by total degree; ``counts[d]`` of degree up to ``d``) for ``P`` and ``-t``
    times them for ``Q``, by pair of degrees; its null vectors hold to ``tolerance``
    (that of ``t`` on those points)."""

    def __init__(self, basis: np.ndarray, t: np.ndarray, counts: np.ndarray, tolerance: Tolerance = EXACT):
        self.basis, self.t, self.counts, self.tolerance = basis, t, counts, tolerance
        self._tested: dict[tuple[int, int], tuple[bool, bool]] = {}
        self._last: tuple[tuple[int, int], tuple[np.ndarray, np.ndarray, Nulls]] | None = None

    def size(self, pair: tuple[int, int]) -> int:
        return int(self.counts[pair[0]] + self.counts[pair[1]])

    def columns(self, pair: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, Nulls]:
        """The columns of ``P``'s monomials then ``Q``'s, scaled, their norms, and their
        null vectors (:func:`scaled_matrix`, :class:`Nulls`; under noise, with how the columns
        change with ``t``); the last pair's kept for the steps that follow its test."""
        if self._last is None or self._last[0] != pair:
            n_p, n_q = (int(self.counts[degree]) for degree in pair)
            derivative = None
            if not self.tolerance.exact:
                derivative = np.hstack([np.zeros((len(self.t), n_p)), -self.basis[:, :n_q]])
            raw = np.hstack([self.basis[:, :n_p], -self.t[:, None] * self.basis[:, :n_q]])
            matrix, norms, slopes = scaled_matrix(raw, derivative, self.tolerance.sd)
            self._last = (pair, (matrix, norms, Nulls(matrix, slopes, self.tolerance)))
        return self._last[1]

    def _test(self, pair: tuple[int, int]) -> tuple[bool, bool]:
        """Whether one identity of these degrees holds, and whether a second does."""
        if pair not in self._tested:
            self._tested[pair] = tuple(self.columns(pair)[2].holds(count=2))
        return self._tested[pair]

    def holds(self, pair: tuple[int, int]) -> bool:
        """Whether an identity of these degrees holds on the points read."""
        return self._test(pair)[0]

    def degenerate(self, pair: tuple[int, int]) -> bool:
        """Whether more than one identity of these degrees holds."""
        return self._test(pair)[1]

    def sparse(self, pair: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The monomials (columns of the basis) of ``P`` and of ``Q`` that the identity
        needs: the terms of the smallest shares are dropped while the rest holds, the
        most such at once, until none can go."""
        matrix, _, nulls = self.columns(pair)
        n_p = int(self.counts[pair[0]])
        kept = np.arange(matrix.shape[1])

        def holds_on(columns: np.ndarray) -> bool:  # with terms of both P and Q
            return bool(columns[0] < n_p <= columns[-1] and nulls.holds(columns)[0])

        while True:
            vector = nulls.vectors(kept)[1][0]
            order = np.argsort(np.abs(vector), kind="stable")
            low, high = 0, len(kept) - 2  # the identity keeps a term of P and one of Q
            while low < high:  # the longest run of ``order`` whose removal leaves an identity
                middle = (low + high + 1) // 2
                if holds_on(kept[np.sort(order[middle:])]):
                    low = middle
                else:
                    high = middle - 1
            if low == 0:
                return kept[kept < n_p], kept[kept >= n_p] - n_p
            kept = kept[np.sort(order[low:])]

    def fitted_terms(self, pair: tuple[int, int]) -> tuple[Terms, np.ndarray, np.ndarray] | None:
        """Under noise, the monomials of ``P`` and of ``Q`` that the law needs
        (:meth:`sparse`), their coefficients and shares: the law ``t = P/Q`` from their
        closest null vector (:class:`Nulls`), polished by Gauss-Newton steps on the
        law's own error (each point's over its noise); ``None`` where that law does not
        hold (the null vector's test is to first order: where ``Q`` nears 0, the law's
        error is not the equation's) or has more than ``tolerance.most_constants``."""
        sd, ratio, most = self.tolerance.sd, self.tolerance.ratio, self.tolerance.most_constants
        _, norms, nulls = self.columns(pair)
        n_p = int(self.counts[pair[0]])
        terms = Terms(*self.sparse(pair), root=False)
        if most is not None and len(terms.numerator) + len(terms.denominator) - 1 > most:
            return None
        columns = np.concatenate([terms.numerator, n_p + terms.denominator])
        vector = nulls.vectors(columns)[1][0]
        numerator, denominator = self.basis[:, terms.numerator], self.basis[:, terms.denominator]
        coefficients = gauss_newton(
            numerator, denominator, self.t, vector / norms[columns], 1.0 / sd, self.tolerance.polish
        )
        error = law_residual(numerator, denominator, self.t, coefficients, 1.0 / sd)[0] / len(self.t)
        return (terms, coefficients, np.abs(vector)) if error <= ratio**2 else None


class Terms(NamedTuple):
    """An identity's monomials (rows of the exponents) in ``P`` and in ``Q``, and whether
    its ``t`` is ``y**2`` (``root``)."""

    numerator: np.ndarray
    denominator: np.ndarray
    root: bool


def fitted_coefficients(
    problem: Problem, exponents: np.ndarray, terms: Terms, part
) -> tuple[np.ndarray, np.ndarray] | None:
    """The coefficients of ``P``'s and then ``Q``'s monomials fitted on the points ``part``
    of ``problem``, and their terms' shares; ``None`` where they are not finite or those
    points do not determine them (more than one identity holds there)."""
    X, y = problem.X[part], problem.y[part]
    t = y * y if terms.root else y
    with np.errstate(all="ignore"):
        matrix = np.hstack(
            [
                monomial_values(X, exponents[terms.numerator]),
                -t[:, None] * monomial_values(X, exponents[terms.denominator]),
            ]
        )
        matrix, norms, _ = scaled_matrix(matrix)
    if not np.all(np.isfinite(matrix)) or len(matrix) <= matrix.shape[1]:
        return None
    _, values, vectors = np.linalg.svd(matrix, full_matrices=False)
    if is_exact_to_rounding(values[-2] ** 2):
        return None
    return vectors[-1] / norms, np.abs(vectors[-1])


def terms_law(problem: Problem, exponents: np.ndarray, terms: Terms, part=slice(None)) -> Fitted | None:
    """The law of the identity's ``terms`` fitted on the points ``part`` of ``problem``
    (its loss on every point): ``c * m * P/Q`` or ``c * m * sqrt(P/Q)`` (``terms.root``),
    where ``m`` is the monomial that ``P/Q`` (or its root, as far as the features' signs
    allow) has as a factor, the terms of the largest shares in ``P`` and ``Q`` have no
    constant and ``c`` holds the scale and the sign; ``None`` where those points do not
    determine it (:func:`fitted_coefficients`) or ``P`` or ``Q`` is 0."""
    fitted = fitted_coefficients(problem, exponents, terms, part)
    return None if fitted is None else law_of(problem, exponents, terms, *fitted)


def law_of(
    problem: Problem, exponents: np.ndarray, terms: Terms, coefficients: np.ndarray, shares: np.ndarray
) -> Fitted | None:
    """:func:`terms_law` from the ``coefficients`` of ``P``'s and then ``Q``'s monomials and
    their terms' ``shares``."""
    n_p = len(terms.numerator)
    p_lead, q_lead = int(np.argmax(shares[:n_p])), int(np.argmax(shares[n_p:]))
    p, q = coefficients[:n_p], coefficients[n_p:]
    if p[p_lead] == 0 or q[q_lead] == 0:  # P or Q is 0: no law
        return None
    scale, p, q = p[p_lead] / q[q_lead], p / p[p_lead], q / q[q_lead]
    p_exponents, q_exponents = exponents[terms.numerator], exponents[terms.denominator]
    factor = p_exponents.min(axis=0) - q_exponents.min(axis=0)
    if terms.root:
        # sqrt(x**2) is x where x keeps one sign; where y changes sign, the monomial
        # outside the root must carry it (y = x0*sqrt(x1**2 + x2**2)), as the loss checks
        # (rounded towards 0: an odd power in the denominator stays in the root, sqrt(x0/x1)
        # and not sqrt(x0*x1)/x1, which differs from the law where x1 < 0 and x0 < 0)
        one_sign = np.all(problem.X >= 0, axis=0) | np.all(problem.X <= 0, axis=0) | changes_sign(problem.y)
        outside = np.where(one_sign, np.fix(factor / 2), 2 * np.fix(factor / 4)).astype(int)
        inside = factor - 2 * outside
    else:
        outside, inside = factor, 0 * factor
    p_exponents = p_exponents - p_exponents.min(axis=0) + np.maximum(inside, 0)
    q_exponents = q_exponents - q_exponents.min(axis=0) + np.maximum(-inside, 0)
    sign = 1 if scale > 0 or not terms.root else -1  # under the root, P/Q > 0
    numerator = sum_of_terms([monomial_term(e, j != p_lead, sign) for j, e in enumerate(p_exponents)])
    denominator = sum_of_terms([monomial_term(e, j != q_lead) for j, e in enumerate(q_exponents)])
    monomial = monomial_tokens(dict(enumerate(outside.tolist()))) if np.any(outside) else []
    tokens = numerator if denominator == ["1"] else ["div", *numerator, *denominator]
    if terms.root:
        if numerator == ["1"]:
            tokens = ["div", *(monomial or ["1"]), "sqrt", *denominator]
        else:
            tokens = [*(["mul", *monomial] if monomial else []), "sqrt", *tokens]
    elif monomial:
        tokens = monomial if tokens == ["1"] else ["mul", *monomial, *tokens]
    skeleton = Skeleton(("mul", CONSTANT, *tokens))
    inner = np.concatenate([np.delete(sign * p, p_lead), np.delete(q, q_lead)])
    if terms.root:  # c's sign is y's over the rest
        with np.errstate(all="ignore"):
            rest = skeleton.program(problem.X, np.concatenate([[1.0], inner]))
        scale = np.sqrt(abs(scale)) * (1.0 if np.nansum(rest * problem.y) >= 0 else -1.0)
    constants = np.concatenate([[scale], inner])
    return Fitted(skeleton, constants, mse(skeleton.program, problem.X, problem.y, constants, problem.weights))


def changes_sign(y: np.ndarray) -> bool:
    return bool(np.any(y > 0) and np.any(y < 0))


def sign_carried(X: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``y`` keeps one sign, or changes it as a product of some features does
    (the only way a law ``c*m*sqrt(P/Q)`` can): else ``t = y**2`` is not tried. At most
    ``MAX_SIGN_FEATURES`` features that change sign are combined."""
    if not changes_sign(y):
        return True
    signed = [j for j in range(X.shape[1]) if changes_sign(X[:, j])]
    if len(signed) > MAX_SIGN_FEATURES:
        return True  # too many to combine: the system decides
    negative = np.signbit(y)
    for size in range(1, len(signed) + 1):
        for subset in combinations(signed, size):
            product = np.logical_xor.reduce(np.signbit(X[:, list(subset)]), axis=1)
            if np.array_equal(product, negative) or np.array_equal(product, ~negative):
                return True
    return False


def law_holds(problem: Problem, law: Fitted, tolerance: Tolerance) -> bool:
    """Whether ``law``, of loss ``law.loss`` on ``problem``'s points, holds to ``tolerance`` there."""
    if not np.isfinite(law.loss):
        return False
    if tolerance.exact:
        return problem.is_exact_to_rounding(law.loss)
    with np.errstate(all="ignore"):
        predicted = law.skeleton.program(problem.X, law.constants)
    return tolerance.law_holds(problem.y, predicted, law.loss, problem.scale)


def extrapolates(
    problem: Problem,
    exponents: np.ndarray,
    terms: Terms,
    tolerance: Tolerance = EXACT,
    fitted: np.ndarray | None = None,
) -> bool:
    """Whether, for every feature, the identity fitted on the points where the feature is
    at most its median holds (to ``tolerance``) on every point, where those points
    determine it: a rational function that only approximates ``y`` to rounding (Padé's of
    ``exp`` on a narrow range) is exact where it was fitted, not beyond. Under noise, the
    law's constants are refitted on those points by least squares (the null vector's
    fit weighs the points by ``|Q|``), from the null vector's and from the constants
    ``fitted`` on every point (a start near a pole that the points approach may
    converge beyond it), the lower loss on those points kept, and the error of its
    prediction that their uncertainty makes adds to the noise
    (:func:`_extrapolates_to_the_noise`)."""
    for column in problem.X.T:
        part = column <= np.median(column)
        found = terms_law(problem, exponents, terms, part)
        if found is None:
            continue
        if tolerance.exact:
            if not law_holds(problem, found, tolerance):
                return False
            continue
        starts = [found.constants]
        if fitted is not None and len(fitted) == len(found.constants):
            starts.append(fitted)
        if not _extrapolates_to_the_noise(problem, found, part, tolerance, starts):
            return False
    return True


def law_extrapolates(problem: Problem, law: Fitted, tolerance: Tolerance, deadline: Deadline | None = None) -> bool:
    """Whether ``law``, its constants refitted from its own on the points where each
    feature is at most its median, holds on every point to the noise and the variance of
    its prediction (:func:`_extrapolates_to_the_noise`); not once ``deadline`` passes."""
    for column in problem.X.T:
        if deadline is not None and deadline.passed():
            return False
        if not _extrapolates_to_the_noise(problem, law, column <= np.median(column), tolerance):
            return False
    return True


def _extrapolates_to_the_noise(
    problem: Problem, law: Fitted, part: np.ndarray, tolerance: Tolerance, starts: list | None = None
) -> bool:
    """Whether ``law``, its constants refitted on the points ``part`` by least squares
    (from each of ``starts``, default its own constants; the lowest loss on ``part``),
    holds on every point to the noise of ``tolerance`` plus the variance of its
    prediction (the constants' covariance from those points, to first order)."""
    X, y, program, sd = problem.X, problem.y, law.skeleton.program, tolerance.sd
    X_part, y_part, weights = X[part], y[part], sd[part] ** -2.0
    refits = [least_squares_run(program, X_part, y_part, start, weights=weights) for start in starts or [law.constants]]
    refits = [values for values in refits if values is not None]
    if not refits:
        return False
    constants = min(refits, key=lambda values: mse(program, X_part, y_part, values, weights))
    predicted, jacobian = program.value_and_jacobian(X, constants)
    with np.errstate(all="ignore"):
        scaled = jacobian[part] / sd[part, None]
        if not np.all(np.isfinite(scaled)):
            return False
        # each constant's column of unit norm first: constants of far different scales
        # would leave the small singular values below the pseudo-inverse's cut
        norms = np.linalg.norm(scaled, axis=0)
        norms = np.where(norms > 0, norms, 1.0)
        covariance = np.linalg.pinv((scaled / norms).T @ (scaled / norms)) / np.outer(norms, norms)
    variance = np.einsum("ij,jk,ik->i", jacobian, covariance, jacobian)
    return tolerance.law_holds(y, predicted, mse(program, X, y, constants, problem.weights), problem.scale, variance)


def monomial_term(exponent: np.ndarray, constant: bool, sign: int = 1) -> list[str]:
    """Tokens of a monomial times a constant, or without one (times ``sign``)."""
    powers = {j: int(power) for j, power in enumerate(exponent) if power}
    if constant:
        return ["mul", CONSTANT, *monomial_tokens(powers)] if powers else [CONSTANT]
    if not powers:
        return [str(sign)]
    return monomial_tokens(powers) if sign == 1 else ["mul", "-1", *monomial_tokens(powers)]


def sum_of_terms(terms: list[list[str]]) -> list[str]:
    tokens: list[str] = []
    for term in terms[:-1]:
        tokens += ["add", *term]
    return tokens + terms[-1]
