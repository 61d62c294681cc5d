"""Readable, exact constants for the selected equation.

Each fitted constant is tried, in turn, as 0, as 1 (a constant that does nothing; the
other free constants divided by it too, for a scale that a ratio's constants share), and
as the nearest "simple" number within ``readable_max_change`` (relative; this and
``readable_max_plain`` are :class:`..search.settings.SearchSettings` fields): a fraction with a
denominator up to ``MAX_DENOMINATOR`` (integers included), such a multiple of pi, a
fraction of pi with a denominator up to ``MAX_DENOMINATOR_OVER_PI`` (``1/(2*pi)``, the
``h/(2*pi)`` of a law written with Planck's ``h``), or a multiple with a denominator up
to ``MAX_DENOMINATOR_OF_NAMED`` of one of the ``NAMED`` numbers (``e``, ``sqrt(2)``,
``sqrt(pi)``, ``1/sqrt(2*pi)``: the Gaussian's ``0.398942280401433``), up to
``MAX_READABLE_MAGNITUDE``. A replacement is kept when the equation's fraction of
variance unexplained does not grow beyond ``FVU_TOLERANCE`` (relative) or the selection
floor, so an exact fit stays exact and ``2.0000000013*x`` becomes ``2*x``. An inexact
fit (:func:`..exactness.is_readable_exactly`) barely moves when one
constant moves by a part in a thousand, so there only plain numbers are tried
(:func:`plain`: numerators and denominators up to ``readable_max_plain``), never a fraction such
as ``464/11`` that the data do not pin down. Constants that become 0 or 1 in additive or
multiplicative places then vanish when the equation is written with SymPy's automatic
evaluation, which splits ``1/sqrt(2*pi)`` into ``sqrt(2)/(2*sqrt(pi))``: the written
equation holds it whole (:func:`whole_roots`).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import sympy

# SymPy imports this module (and its combinatorics, 0.2-0.4 s) on its first evaluated
# sum; imported here, that happens at import time, not inside a fit's time budget.
import sympy.tensor.tensor  # noqa: F401
from scipy import constants as physical
from scipy.stats import chi2, norm

from ..expression.skeleton import Skeleton
from ..search.exactness import fvu_floor, is_readable_exactly, keeps_every_point, worst_relative_error
from ..search.fitted import mse
from ..search.fitting.constants import Evaluations, least_squares_run
from ..search.problem import variance
from ..search.settings import SearchSettings

#: The simple numbers (the vocabulary of the written law's exact numbers, which
#: :func:`tidy_numbers` and :func:`named_constants` read too): fractions with denominators
#: up to this, and such multiples of pi.
MAX_DENOMINATOR = 12
# Fractions of pi are dense enough with small denominators (1/(2*pi), 3/(4*pi)).
MAX_DENOMINATOR_OVER_PI = 4
#: Numbers a person writes by name, tried with rational multipliers of denominators up to
#: ``MAX_DENOMINATOR_OF_NAMED``: more would make nearly every number one of them.
NAMED = (sympy.E, sympy.sqrt(2), sympy.sqrt(sympy.pi), 1 / sympy.sqrt(2 * sympy.pi))
MAX_DENOMINATOR_OF_NAMED = 4
#: A physical constant may be snapped to times a fraction of numerator and denominator up
#: to this (``epsilon_0/2``, ``2/hbar``), each height under the chance rule of its family.
MAX_HEIGHT_OF_PHYSICAL = 4
#: Physical constants (CODATA, SI) that a noisy constant may be within its error bar, times
#: a power of ten: Boltzmann's, Planck's (and reduced), light's speed, Newton's, the
#: elementary charge, the electron's and proton's masses, the vacuum's permittivity and
#: permeability, Coulomb's constant, Avogadro's, the gas constant, Stefan-Boltzmann's and
#: the standard gravity.
PHYSICAL = tuple(
    getattr(physical, name)
    for name in ("k", "h", "hbar", "c", "G", "e", "m_e", "m_p", "epsilon_0", "mu_0", "N_A", "R", "sigma", "g")
) + (1 / (4 * np.pi * physical.epsilon_0),)
# Larger constants stay floats: an integer such as 9061438163468778 is not readable.
MAX_READABLE_MAGNITUDE = 1e4
#: How much (relative) a re-spelled constant may raise an exact fit's fraction of variance
#: unexplained: rounding's share, so that an exact fit stays exact.
FVU_TOLERANCE = 1e-9
# Residual evaluations that the refits of one equation's constants share (a bound on the
# work, not on the clock: the same row always gets the same constants).
READABLE_EVALUATIONS = 400


def nearest_simple_numbers(value: float) -> list[sympy.Expr]:
    """The small fraction (denominator up to ``MAX_DENOMINATOR``) nearest to ``value``,
    then the nearest nonzero such multiple of pi, the nearest ``q/pi`` (the denominator
    of ``q`` up to ``MAX_DENOMINATOR_OVER_PI``) and the nearest multiple of each of the
    ``NAMED`` numbers (denominators up to ``MAX_DENOMINATOR_OF_NAMED``); ``value`` must
    be finite. None beyond ``MAX_READABLE_MAGNITUDE``."""
    if abs(value) > MAX_READABLE_MAGNITUDE:
        return []
    fraction = Fraction(value).limit_denominator(MAX_DENOMINATOR)
    found: list[sympy.Expr] = [sympy.Rational(fraction.numerator, fraction.denominator)]
    multiple = Fraction(value / np.pi).limit_denominator(MAX_DENOMINATOR)
    if multiple != 0:
        found.append(sympy.Rational(multiple.numerator, multiple.denominator) * sympy.pi)
    over = Fraction(value * np.pi).limit_denominator(MAX_DENOMINATOR_OVER_PI)
    if over != 0:
        found.append(sympy.Rational(over.numerator, over.denominator) / sympy.pi)
    for named in NAMED:
        times = Fraction(value / float(named)).limit_denominator(MAX_DENOMINATOR_OF_NAMED)
        if times != 0:
            found.append(sympy.Rational(times.numerator, times.denominator) * named)
    return found


def plain(number: sympy.Expr, max_plain: int = SearchSettings.readable_max_plain) -> bool:
    """Whether ``number`` is a rational (or a rational times pi, ``1/pi`` or a ``NAMED``
    number) whose numerator and denominator are at most ``max_plain``: ``3/2``, ``2*pi``,
    not ``943/2`` or ``464/11``."""
    rational = number.as_coeff_Mul()[0]
    return rational.is_Rational and abs(rational.p) <= max_plain and rational.q <= max_plain


def simple_numbers(
    value: float, plain_only: bool = False, spread: float | None = None, settings: SearchSettings | None = None
) -> list[sympy.Expr]:
    """Exact numbers to try for ``value``, simplest first: 0 and 1 (a constant that
    does nothing), then the nearest small fraction and multiple of pi and of the named
    numbers (:func:`plain` ones only, at ``settings.readable_max_plain``, if asked)
    within ``settings.readable_max_change`` of it (default :class:`.SearchSettings`);
    with ``spread`` (an error bar, on noisy targets) also the fractions times a power of
    ten and their multiples of pi, and the ``PHYSICAL`` constants and their inverses
    times a small fraction and a power of ten (:func:`_physical_multiples`), within it;
    under noise, every form but a fraction of the value's own decade only where its
    family makes the match rare (:func:`chance_match`, ``settings.snap_chance``)."""
    settings = SearchSettings() if settings is None else settings
    close: list[sympy.Expr] = [sympy.Integer(0), sympy.Integer(1)]
    if not np.isfinite(value):
        return close
    max_change, max_plain = settings.readable_max_change, settings.readable_max_plain
    reach = max_change * abs(value)
    numbers = nearest_simple_numbers(value)
    noisy = spread is not None and np.isfinite(spread)
    scaled: list[sympy.Expr] = []  # the numbers of other decades: 1.0006e-3 becomes 1e-3
    if noisy:
        reach = max(reach, spread)
        if value != 0 and (power := math.floor(math.log10(abs(value)))) != 0:
            decade = sympy.Integer(10) ** power
            scaled = [number * decade for number in nearest_simple_numbers(value / float(decade))]

    # a multiple of pi, a physical constant or a fraction times a power of ten says more than
    # a fraction: within an error bar (or another decade) it is tried only where a value drawn
    # at random would rarely lie as close to one as simple (2*pi: one of 6 per decade)
    def rare(per_decade: int) -> bool:
        return chance_match(per_decade, reach, value) <= settings.snap_chance

    for number in sorted(numbers, key=_simplicity) + sorted(scaled, key=_simplicity):
        if plain_only and not (plain(number, max_plain) or (noisy and plain(number / _decade(number), max_plain))):
            continue
        distance = abs(float(number) - value)
        wide = distance > max_change * abs(value) or number not in numbers
        pi_form = noisy and _fraction_of(number) is not None
        if not number.is_Rational and (
            (wide and not pi_form) or (noisy and not rare(_irrational_forms_per_decade(number)))
        ):
            continue  # a wide bar holds many named forms; under noise, 9*pi/2 within 0.1% of 10*sqrt(2) is chance
        decade = _decade(number)
        scaled_fraction = noisy and number.is_Rational and decade != 1 and not _decimal(number / decade)
        if scaled_fraction and not rare(_fractions_per_decade(_height(number))):
            continue  # 6000/11 for 545 +- 50: a fraction times a power of ten, by chance
        if number not in close and distance <= reach:
            close.append(number)
    if noisy:  # within the error bar, each multiple under the chance rule of its family (of at most its height)
        per_number = chance_match(1, spread, value)
        close += [
            sympy.Float(number, 15)
            for height, number in _physical_multiples(value)
            if abs(number - value) <= spread and _physical_per_decade(height) * per_number <= settings.snap_chance
        ]
    return close


def chance_match(per_decade: int, reach: float, value: float) -> float:
    """The expected number of a family's numbers (``per_decade`` of them in each decade,
    spread evenly on a log scale) within ``reach`` of ``value``: the chance that a value
    drawn at random lies that close to one of them."""
    return per_decade * 2 * reach / (abs(value) * math.log(10)) if value != 0 else math.inf


@functools.lru_cache
def _fractions_per_decade(max_plain: int, factors: tuple[float, ...] = (1.0,)) -> int:
    """How many fractions of numerators and denominators up to ``max_plain`` times each of
    ``factors`` lie in one decade."""
    fractions = {Fraction(p, q) for p in range(1, max_plain + 1) for q in range(1, max_plain + 1)}
    return len({round(math.log10(float(f) * factor) % 1, 12) for f in fractions for factor in factors})


def _irrational_forms_per_decade(number: sympy.Expr) -> int:
    """How many numbers of ``number``'s family lie in one decade: the plain multiples of pi
    and of ``1/pi`` as high as it, or the multiples of the ``NAMED`` numbers."""
    if _fraction_of(number) is not None:
        return _pi_forms_per_decade(_height(number))
    return len(NAMED) * _fractions_per_decade(MAX_DENOMINATOR_OF_NAMED)


def _pi_forms_per_decade(max_plain: int) -> int:
    """How many plain multiples of pi and of ``1/pi`` lie in one decade."""
    return _fractions_per_decade(max_plain, (math.pi, 1 / math.pi))


def _simplicity(number: sympy.Expr) -> tuple[int, int]:
    """The order in which :func:`simple_numbers` tries ``number``: fractions and fractions of
    pi by their height (``pi/2`` before ``11/7``, which both lie within 1.5714's error
    bar), the ``NAMED`` numbers' multiples after them."""
    return (0, _height(number)) if _fraction_of(number) is not None else (1, 0)


def _height(number: sympy.Expr) -> int:
    """The larger of the numerator and the denominator of ``number``'s fraction (of pi, or
    over pi), its power of ten left out (the smallest over a decade more or less):
    ``2*pi``, ``pi/5000`` and ``pi/2000`` are of height 2."""
    fraction = _fraction_of(number)
    fraction = fraction / _decade(fraction)
    return min(max(abs(int(f.p)), int(f.q)) for f in (fraction, fraction * 10, fraction / 10))  # pi/5: 2*pi/10


def _decimal(fraction: sympy.Rational) -> bool:
    """Whether ``fraction`` is a short decimal (its denominator divides a power of ten: 3/2, 3/4, not 6/11)."""
    return set(sympy.factorint(fraction.q)) <= {2, 5}


def _fraction_of(number: sympy.Expr) -> sympy.Rational | None:
    """The fraction that ``number`` is, or is times pi or over pi; None if none."""
    return next((form for form in (number, number / sympy.pi, number * sympy.pi) if form.is_Rational), None)


def _physical_multiples(value: float) -> list[tuple[int, float]]:
    """The multiples ``p/q * C * 10**k`` nearest ``value`` (with its sign) of each of the
    ``PHYSICAL`` constants and their inverses ``C``, for each fraction ``p/q`` of height
    (the larger of ``p`` and ``q``) up to ``MAX_HEIGHT_OF_PHYSICAL``, with that height,
    the lowest first; none for 0 or a non-finite value."""
    if value == 0 or not np.isfinite(value):
        return []
    found = []
    for fraction in _fractions(MAX_HEIGHT_OF_PHYSICAL):
        for base in _physical_bases():
            multiple = float(fraction) * base
            decade = round(math.log10(abs(value) / multiple))
            number = math.copysign(multiple * 10.0**decade, value)
            found.append((max(fraction.numerator, fraction.denominator), number))
    return sorted(found, key=lambda pair: (pair[0], abs(pair[1] - value)))


@functools.lru_cache
def _fractions(max_height: int) -> tuple[Fraction, ...]:
    """The fractions of numerators and denominators up to ``max_height``, lowest height first."""
    fractions = {Fraction(p, q) for p in range(1, max_height + 1) for q in range(1, max_height + 1)}
    return tuple(sorted(fractions, key=lambda f: (max(f.numerator, f.denominator), f)))


@functools.lru_cache
def _physical_bases() -> tuple[float, ...]:
    """The ``PHYSICAL`` constants and their inverses."""
    return tuple(base for constant in PHYSICAL for base in (constant, 1 / constant))


def _physical_per_decade(height: int) -> int:
    """How many multiples of the ``PHYSICAL`` constants and their inverses by fractions of
    at most ``height`` lie in one decade (30 for the constants alone)."""
    return _fractions_per_decade(height, _physical_bases())


def _decade(number: sympy.Expr) -> sympy.Rational:
    """The power of ten in the rational part of ``number`` (``3/4000``: ``1/1000``), 1 if none."""
    rational = number.as_coeff_Mul()[0]
    if not rational.is_Rational or rational == 0:
        return sympy.Integer(1)
    twos_fives = [sympy.multiplicity(prime, value) for value in (rational.p, rational.q) for prime in (2, 5)]
    up, down = min(twos_fives[0], twos_fives[1]), min(twos_fives[2], twos_fives[3])
    return sympy.Integer(10) ** (up - down)


def standard_errors(
    skeleton: Skeleton, constants: np.ndarray, X: np.ndarray, y: np.ndarray, weights=None, free=None
) -> np.ndarray:
    """The fitted constants' standard errors by the delta method (``s² (JᵀWJ)⁻¹``,
    ``s²`` the residual variance; :mod:`nesymres_sklearn.uncertainty` has the same for
    the fitted equation); inf where the data do not determine a constant. With ``free``
    (positions), the errors of those constants with the others held at their values
    (NaN for the others): a constant that trades off against one written exactly is
    pinned down closer once that one is fixed."""
    weights = np.ones(len(y)) if weights is None else weights
    free = list(range(len(constants))) if free is None else list(free)
    with np.errstate(all="ignore"):
        values, jacobian = skeleton.program.value_and_jacobian(X, constants)
        jacobian = jacobian[:, free]
        dof = max(len(y) - len(free), 1)
        variance_ = float(np.sum(weights * (y - values) ** 2)) / dof
        gram = jacobian.T @ (jacobian * weights[:, None])
    errors = np.full(len(constants), np.nan)
    if not (np.isfinite(variance_) and np.all(np.isfinite(gram))):
        errors[free] = np.inf
        return errors
    covariance = variance_ * np.linalg.pinv(gram)
    determined = np.abs(np.diag(gram)) > 0
    errors[free] = np.where(determined, np.sqrt(np.clip(np.diag(covariance), 0.0, None)), np.inf)
    return errors


def exact_constants(
    skeleton: Skeleton,
    constants: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
    evaluations: Evaluations | None = None,
    noise: float = 0.0,
    settings: SearchSettings | None = None,
) -> list:
    """``constants`` with each one replaced by a simple exact number where that keeps
    the fit (the constants not yet replaced are re-fitted around it; plain numbers only
    when the fit is inexact, see the module docstring); the others stay floats.
    ``weights`` (mean 1) weight the squared errors; once the refits have spent the
    ``evaluations`` (default: ``READABLE_EVALUATIONS``), each constant left is only
    tried as 0 as it stands (one evaluation), so that a term the fit left at rounding's
    level (``+ 5.6e-18``) still vanishes. ``settings`` (default :class:`.SearchSettings`)
    give the knobs: the simple numbers' reach (:func:`simple_numbers`) and ``level``, the
    ``snap_level``. With ``level`` above 0 and an inexact fit whose root mean squared
    error is at most ``noise`` (the noise level, times the settings' ratio: the misfit is
    the noise's, not an approximate law's; 0, the default, never), a constant is also
    tried as the plain number (times a power of ten) or physical constant nearest to it within
    its error bar (the ``level`` quantile of the normal law times its standard error,
    the constants already written held fixed), and the numbers are kept while the
    likelihood-ratio test at ``level`` holds: ``n log(mse / mse_fitted)`` at most the
    chi-square quantile of as many degrees of freedom as constants replaced. There, a
    constant written exactly narrows the bars of those that traded off against it, so
    the constants left are tried again until a pass writes none."""
    settings = SearchSettings() if settings is None else settings
    level = settings.snap_level
    evaluations = Evaluations(READABLE_EVALUATIONS) if evaluations is None else evaluations
    scale = variance(y, weights) or 1.0

    def fvu(values):
        return mse(skeleton.program, X, y, values, weights) / scale

    def worst_relative(values) -> float:
        with np.errstate(all="ignore"):
            return worst_relative_error(skeleton.program(X, values), y)

    def refit(values, free):
        """``values`` with the constants at positions ``free`` re-fitted, the others fixed."""
        if not free:
            return values
        found = least_squares_run(
            skeleton.program, X, y, values[free], fixed=values, free=free, weights=weights, evaluations=evaluations
        )
        return values if found is None else found

    values = np.array(constants, dtype=np.float64)
    exact: dict[int, sympy.Expr] = {}
    reference = fvu(values)
    inexact = not is_readable_exactly(reference)
    loss = reference * scale
    noisy = inexact and level > 0 and loss <= noise**2 and len(y) > len(values)
    original = None if inexact else worst_relative(values)  # exact: keep every point (data over decades)
    quantile = norm.ppf(0.5 + level / 2)

    def bars() -> np.ndarray | None:
        """The error bars of the constants not yet written exactly, those written held fixed."""
        free = [j for j in range(len(values)) if j not in exact]
        return standard_errors(skeleton, values, X, y, weights, free) * quantile if noisy else None

    floor = fvu_floor(y, scale, weights)  # the selection's

    def allowed(replaced: int) -> float:
        if noisy:  # the likelihood-ratio test of ``replaced`` constants fixed
            return reference * np.exp(chi2.ppf(level, replaced) / len(y))
        return max(reference * (1 + FVU_TOLERANCE), floor)

    spread, pending = bars(), list(range(len(values)))
    while pending:
        for i in pending:
            spent = evaluations.spent
            free = [j for j in range(len(values)) if j != i and j not in exact]
            bound = allowed(len(exact) + 1)
            if spent:
                numbers = [sympy.Integer(0)]
            else:
                spread_i = None if spread is None else spread[i]
                numbers = simple_numbers(float(values[i]), plain_only=inexact, spread=spread_i, settings=settings)
            for number in numbers:
                trial = values.copy()
                trial[i] = float(number)
                if not spent and fvu(trial) > bound and number == 1 and values[i] != 0:
                    trial[free] = values[free] / values[i]  # a scale shared by a ratio's constants
                if not spent and fvu(trial) > bound:
                    trial = refit(trial, free)
                if fvu(trial) <= bound and (inexact or keeps_every_point(worst_relative(trial), original)):
                    values, exact[i] = trial, number
                    if noisy:
                        spread = bars()
                    break
        # under noise, a constant written exactly narrows the bars of those it traded off
        # against: the ones tried before it are tried again, until none more is written
        tried_again = [i for i in pending if i not in exact]
        pending = tried_again if noisy and len(tried_again) < len(pending) else []
    return [exact.get(i, float(v)) for i, v in enumerate(values)]


def tidy_numbers(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with every float that is a small fraction, or such a multiple or
    fraction of pi, up to rounding (``3.0``, ``0.5``, ``3.14159265358979`` from folded operations)
    written exactly, so that SymPy's evaluation applies (``sin(x + pi)`` is ``-sin(x)``)."""
    replacements = {}
    for number in expression.atoms(sympy.Float):
        value = float(number)
        if not np.isfinite(value):
            continue
        for exact in nearest_simple_numbers(value):
            if abs(float(exact) - value) <= 1e-12 * abs(value):
                replacements[number] = exact
                break
    return expression.xreplace(replacements) if replacements else expression


#: Integers (and denominators) beyond this are written as floats: ``1.0e+9``, not ``1000000000``.
LARGEST_EXACT_INTEGER = 10**6


def large_numbers_as_floats(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with every rational whose numerator or denominator is beyond
    ``LARGEST_EXACT_INTEGER`` written as a float (SymPy multiplies the powers of ten of
    the units into ``1000000000``)."""
    replacements = {
        number: sympy.Float(number)
        for number in expression.atoms(sympy.Rational)
        if abs(number.p) > LARGEST_EXACT_INTEGER or number.q > LARGEST_EXACT_INTEGER
    }
    return expression.xreplace(replacements) if replacements else expression


#: A root that SymPy's evaluation splits and a person writes whole: ``1/sqrt(2*pi)``, the
#: Gaussian's factor, which SymPy writes ``sqrt(2)/(2*sqrt(pi))``.
WHOLE_ROOT = 2 * sympy.pi


def whole_roots(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with each product whose number part is a rational multiple of
    ``1/sqrt(2*pi)`` written with that root whole (``exp(-x0**2/2)/sqrt(2*pi)``, not
    ``sqrt(2)*exp(-x0**2/2)/(2*sqrt(pi))``): the same value, those products held
    unevaluated (SymPy's evaluation would split the root again)."""
    root = sympy.sqrt(WHOLE_ROOT)
    replacements = {}
    for product in expression.atoms(sympy.Mul):
        number, rest = product.as_independent(*product.free_symbols, as_Add=False)
        ratio = number * root
        if ratio.is_Rational and ratio != 0:
            replacements[product] = [f for f in (ratio, *sympy.Mul.make_args(rest)) if f != 1]
    if not replacements:
        return expression
    with sympy.evaluate(False):
        whole = sympy.Pow(WHOLE_ROOT, sympy.Rational(-1, 2))
        return expression.xreplace({product: sympy.Mul(*factors, whole) for product, factors in replacements.items()})


def fold_float_factors(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with every product whose number part mixes a float with exact
    irrational numbers (``0.316227766016838*sqrt(10)*sqrt(x)``, from undoing the units)
    written with that part as one float, which :func:`tidy_numbers` can then read."""

    def fold(product: sympy.Expr) -> sympy.Expr:
        number, rest = product.as_independent(*product.free_symbols, as_Add=False)
        if number.is_Float or not number.has(sympy.Float) or number.is_extended_real is not True:
            return product  # an imaginary part (sqrt of a negative number) is no float
        return sympy.Float(number.evalf()) * rest

    return expression.replace(lambda e: e.is_Mul and not e.is_number, fold)


#: A float is written with the law's dimensional constants when it is a simple number
#: times a product of their powers to within this (relative): rounding, not a fit's error.
NAMED_CONSTANT_TOLERANCE = 1e-9
#: Largest magnitude of an exponent of a dimensional constant tried.
MAX_CONSTANT_EXPONENT = 4


def named_constants(expression: sympy.Expr, constants: dict[sympy.Symbol, float]) -> sympy.Expr:
    """``expression`` with every float that is, up to rounding, a simple number (a
    fraction, or such a multiple or fraction of pi) times a product of powers of the
    ``constants`` (symbol -> value) written so: ``-1.11265005605362e-17`` is ``-1/c**2``.
    Of several such forms, the one with the fewest powers wins."""
    if not constants:
        return expression
    symbols, values = list(constants), np.array(list(constants.values()), dtype=np.float64)
    span = range(-MAX_CONSTANT_EXPONENT, MAX_CONSTANT_EXPONENT + 1)
    exponents = np.array(
        [e for e in np.ndindex(*(len(span),) * len(values)) if any(i != MAX_CONSTANT_EXPONENT for i in e)]
    )
    exponents = exponents - MAX_CONSTANT_EXPONENT
    exponents = exponents[np.argsort(np.abs(exponents).sum(axis=1), kind="stable")]
    log_products = exponents @ np.log(np.abs(values))
    replacements = {}
    for number in expression.atoms(sympy.Float):
        value = float(number)
        if not np.isfinite(value) or value == 0:
            continue
        ratios = np.sign(value) * np.exp(np.log(abs(value)) - log_products)
        for ratio, powers in zip(ratios, exponents):
            simple = next(
                (
                    s
                    for s in nearest_simple_numbers(ratio)
                    if abs(float(s) - ratio) <= NAMED_CONSTANT_TOLERANCE * abs(ratio)
                ),
                None,
            )
            if simple is not None:
                replacements[number] = simple * sympy.Mul(*(s ** int(b) for s, b in zip(symbols, powers)))
                break
    return expression.xreplace(replacements) if replacements else expression
