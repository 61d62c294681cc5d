import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.writing.readable import exact_constants, simple_numbers, tidy_numbers, whole_roots

X = np.random.default_rng(0).uniform(1, 5, size=(100, 2))


def test_simple_numbers_are_tried_simplest_first():
    assert simple_numbers(0.49999999) == [0, 1, sympy.Rational(1, 2)]
    assert sympy.pi / 2 in simple_numbers(1.5707963)
    assert 1 / (2 * sympy.pi) in simple_numbers(0.15915494)  # h/(2*pi)
    assert 3 / sympy.pi not in simple_numbers(0.95)  # 3/pi is 0.955: beyond 0.1%
    assert simple_numbers(1.23456) == [0, 1]  # no small fraction or multiple of pi or e within 0.1%
    assert simple_numbers(np.inf) == [0, 1]
    # within an error bar that holds both, pi/2 (height 2) before 11/7 (height 11): a phase
    assert simple_numbers(1.5714, plain_only=True, spread=0.002)[2:] == [sympy.pi / 2, sympy.Rational(11, 7)]
    assert simple_numbers(3.141, plain_only=True, spread=0.002)[2:] == [sympy.pi]  # not 22/7 (height 22)


def test_the_reach_of_the_simple_numbers_and_the_plain_ones_are_settings():
    wide = SearchSettings(readable_max_change=1e-2)  # 3/pi is 0.955: within 1%
    assert 3 / sympy.pi in simple_numbers(0.95, settings=wide) and 3 / sympy.pi not in simple_numbers(0.95)
    assert simple_numbers(1.5000001, plain_only=True) == [0, 1, sympy.Rational(3, 2)]
    assert simple_numbers(1.5000001, plain_only=True, settings=SearchSettings(readable_max_plain=2)) == [0, 1]


def test_exact_fits_get_exact_constants():
    skeleton = Skeleton(("mul", "c", "mul", "x_1", "pow", "x_2", "2"))
    y = np.pi * X[:, 0] * X[:, 1] ** 2
    assert exact_constants(skeleton, np.array([np.pi * (1 + 1e-13)]), X, y) == [sympy.pi]


def test_coupled_constants_are_refitted_around_the_replaced_one():
    skeleton = Skeleton(("add", "add", "mul", "c", "x_1", "c", "c"))  # c0*x + c1 + c2, c1 + c2 = 2
    y = 1.5 * X[:, 0] + 2
    exact = exact_constants(skeleton, np.array([1.5, -3.7649207, 5.7649207]), X, y)
    assert exact[0] == sympy.Rational(3, 2)
    assert all(isinstance(c, sympy.Rational) for c in exact)
    assert sum(exact[1:]) == 2


def test_a_scale_that_a_ratio_s_constants_share_is_divided_out():
    skeleton = Skeleton(("div", "c", "add", "c", "div", "c", "x_1"))  # c0/(c1 + c2/x): c0 = 1 loses nothing
    y = 1 / (1 / 3 + 1 / X[:, 0])
    scale = 22929.4746687655  # as a fit left them (AIFM-32)
    exact = exact_constants(skeleton, np.array([scale, scale / 3, scale]), X, y)
    assert exact == [1, sympy.Rational(1, 3), 1]


def test_constants_are_kept_when_re_spelling_worsens_the_fit():
    skeleton = Skeleton(("mul", "c", "x_1"))
    y = 2.0004 * X[:, 0]
    assert exact_constants(skeleton, np.array([2.0004]), X, y) == [2.0004]


def test_tidy_numbers_and_the_selected_equation():
    x = sympy.Symbol("x")
    assert tidy_numbers(sympy.Float(3.0) * x + sympy.Float(0.5)) == 3 * x + sympy.Rational(1, 2)
    assert tidy_numbers(sympy.Float(2.718) * x) == sympy.Float(2.718) * x
    assert tidy_numbers(sympy.Float("inf") * x) == sympy.Float("inf") * x
    assert tidy_numbers(-x * sympy.sin(x + sympy.Float(3.14159265358979))) == x * sympy.sin(x)
    assert tidy_numbers(sympy.Float(np.pi / 2) * x) == sympy.pi / 2 * x
    assert tidy_numbers(sympy.Float(3.1416) * x) == sympy.Float(3.1416) * x
    regressor = NeSymReSRegressor(random_state=0).fit(X, 1.5 * X[:, 0] + 2)
    assert regressor.expression_ == sympy.Rational(3, 2) * sympy.Symbol("x0", real=True) + 2


x0, x1 = sympy.symbols("x0 x1", real=True)


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.398942280401433, 1 / sympy.sqrt(2 * sympy.pi)),  # the Gaussian's
        (np.e, sympy.E),
        (np.sqrt(2), sympy.sqrt(2)),
        (np.sqrt(np.pi), sympy.sqrt(sympy.pi)),
        (1.5 * np.sqrt(2), 3 * sympy.sqrt(2) / 2),
    ],
)
def test_named_numbers_and_their_small_multiples(value, expected):
    skeleton = Skeleton(("mul", "c", "exp", "mul", "div", "-1", "2", "pow", "x_1", "2"))
    y = float(expected) * np.exp(-(X[:, 0] ** 2) / 2)
    assert exact_constants(skeleton, np.array([value * (1 + 1e-12)]), X, y) == [expected]


def test_the_gaussian_is_written_with_its_constant():
    from nesymres_sklearn.search.scaling import Scaling
    from nesymres_sklearn.writing.writer import Writer

    skeleton = Skeleton(("mul", "c", "exp", "mul", "div", "-1", "2", "pow", "x_1", "2"))
    y = np.exp(-(X[:, 0] ** 2) / 2) / np.sqrt(2 * np.pi)
    exact = exact_constants(skeleton, np.array([0.398942280401433]), X, y)
    written = Writer(Scaling.identity(2), (x0, x1))(skeleton, np.array([float(c) for c in exact]), exact)
    assert str(written) == "exp(-x0**2/2)/sqrt(2*pi)"  # SymPy's evaluation: sqrt(2)*exp(-x0**2/2)/(2*sqrt(pi))
    assert sympy.simplify(written - sympy.exp(-(x0**2) / 2) / sympy.sqrt(2 * sympy.pi)) == 0


@pytest.mark.parametrize(
    "expression, text",
    [
        (sympy.exp(-(x0**2) / 2) / sympy.sqrt(2 * sympy.pi), "exp(-x0**2/2)/sqrt(2*pi)"),
        (-3 * x0 * sympy.sin(x1) / sympy.sqrt(2 * sympy.pi), "-3*x0*sin(x1)/sqrt(2*pi)"),
        (x1 + sympy.cos(x0 / (2 * sympy.sqrt(2 * sympy.pi))), "x1 + cos(x0/(2*sqrt(2*pi)))"),
        (1 / sympy.sqrt(2 * sympy.pi), "1/sqrt(2*pi)"),
        (sympy.sqrt(2) * x0 + sympy.sqrt(sympy.pi) * x1, "sqrt(2)*x0 + sqrt(pi)*x1"),  # not a multiple
    ],
)
def test_the_root_of_2_pi_is_written_whole_with_the_same_value(expression, text):
    written = whole_roots(expression)
    assert str(written) == text
    assert sympy.simplify(written - expression) == 0
    point = {x0: 0.7, x1: -1.3}
    assert float(written.subs(point)) == pytest.approx(float(expression.subs(point)), rel=1e-15)


@pytest.mark.slow
def test_the_gaussian_s_law_prints_as_a_person_writes_it():
    """Issue 53, item 3: the fitted Gaussian printed sqrt(2)*exp(-x0**2/2)/(2*sqrt(pi));
    written so, it is the same law, before and after pickling."""
    import pickle

    X = np.random.default_rng(0).uniform(-3, 3, (200, 1))
    regressor = NeSymReSRegressor(random_state=0).fit(X, np.exp(-(X[:, 0] ** 2) / 2) / np.sqrt(2 * np.pi))
    law = sympy.exp(-(x0**2) / 2) / sympy.sqrt(2 * sympy.pi)
    assert str(regressor.expression_) == "exp(-x0**2/2)/sqrt(2*pi)"
    assert sympy.simplify(regressor.expression_ - law) == 0
    unpickled = pickle.loads(pickle.dumps(regressor))
    assert sympy.srepr(unpickled.expression_) == sympy.srepr(regressor.expression_)
    assert unpickled.expression_ is unpickled.equations_.loc[unpickled.best_index_, "expression"]


def test_no_fake_fraction_in_an_inexact_fit():
    """A constant that explains nothing (operators=["exp"] on exp(x0)) once printed
    464/11: its mean happened to be within a part in 10^5 of it."""
    skeleton = Skeleton(("c",))
    y = np.exp(X[:, 0])
    y += 464 / 11 + 2e-4 - y.mean()
    assert exact_constants(skeleton, np.array([y.mean()]), X, y) == [y.mean()]
    assert exact_constants(Skeleton(("mul", "c", "x_1")), np.array([1.5]), X, 1.5 * X[:, 0] + np.sin(9 * X[:, 1])) == [
        sympy.Rational(3, 2)
    ]  # plain numbers still where the fit is inexact


def test_no_large_integer_in_print():
    from nesymres_sklearn.search.scaling import Scaling
    from nesymres_sklearn.writing.writer import Writer

    cube = Writer(Scaling((1e-3, 1.0), 1.0), (x0, x1))(Skeleton(("pow", "x_1", "3")), np.array([]), [])
    assert cube == sympy.Float(1e9) * x0**3 and not any(abs(n) > 10**6 for n in cube.atoms(sympy.Integer))


def test_a_term_at_rounding_s_level_vanishes_once_the_refits_are_spent():
    from nesymres_sklearn.search.fitting.constants import Evaluations

    skeleton = Skeleton(("add", "mul", "c", "mul", "x_1", "sin", "x_2", "c"))
    y = 1.2345678 * X[:, 0] * np.sin(X[:, 1])
    exact = exact_constants(skeleton, np.array([1.2345678, 5.6e-18]), X, y, evaluations=Evaluations(0))
    assert exact == [1.2345678, 0]


def test_an_imaginary_number_part_is_not_folded_into_a_float():
    from nesymres_sklearn.writing.readable import fold_float_factors

    x = sympy.Symbol("x", real=True)
    expression = sympy.sqrt(sympy.Float(-3.0)) * sympy.sqrt(2) * sympy.Abs(x)  # a fitted sqrt(-3*x**2)
    assert fold_float_factors(expression) == expression


def test_a_root_held_whole_stays_whole_in_latex():
    from nesymres_sklearn.writing.export import to_latex

    x0 = sympy.Symbol("x0")
    gaussian = whole_roots(sympy.exp(-(x0**2) / 2) / sympy.sqrt(2 * sympy.pi))
    assert to_latex(gaussian) == r"\frac{e^{- \frac{x_{0}^{2}}{2}}}{\sqrt{2 \pi}}"
    assert to_latex(whole_roots(3 * x0 / sympy.sqrt(2 * sympy.pi))) == r"\frac{3 x_{0}}{\sqrt{2 \pi}}"
    assert to_latex(sympy.sqrt(x0) / sympy.sqrt(2)) == sympy.latex(sympy.sqrt(x0) / sympy.sqrt(2))


def _noisy_fit(truth: float, level: float, seed: int = 0):
    """``truth * x0 * x1`` with Gaussian noise of ``level`` times its RMS, 400 points,
    the least-squares constant of ``c * x0 * x1`` and the noise's standard deviation."""
    rng = np.random.default_rng(seed)
    X_ = rng.uniform(1, 5, size=(400, 2))
    clean = truth * X_[:, 0] * X_[:, 1]
    sd = level * np.sqrt(np.mean(clean**2))
    y = clean + rng.normal(0, sd, len(clean))
    design = X_[:, 0] * X_[:, 1]
    return X_, y, np.array([design @ y / (design @ design)]), sd


def test_a_noisy_constant_becomes_the_plain_number_within_its_error_bar():
    skeleton = Skeleton(("mul", "c", "mul", "x_1", "x_2"))
    X_, y, fitted, sd = _noisy_fit(0.5, 0.01)
    assert fitted[0] != 0.5 and abs(fitted[0] - 0.5) > 1e-5  # the noise moved it
    assert exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd) == [sympy.Rational(1, 2)]
    at_zero = SearchSettings(snap_level=0.0)
    assert exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd, settings=at_zero) == [float(fitted[0])]  # as fitted
    # a misfit well above the noise level is an approximate law's: its constants stay
    assert exact_constants(skeleton, fitted, X_, y, noise=0.5 * sd) == [float(fitted[0])]


def test_a_noisy_constant_far_from_a_plain_number_stays_as_fitted():
    skeleton = Skeleton(("mul", "c", "mul", "x_1", "x_2"))
    X_, y, fitted, sd = _noisy_fit(0.52, 0.001)  # 1/2 lies many error bars away
    assert exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd) == [float(fitted[0])]


def test_a_noisy_constant_within_its_error_bar_of_a_physical_constant_becomes_it():
    from scipy import constants

    skeleton = Skeleton(("mul", "c", "mul", "x_1", "x_2"))
    X_, y, fitted, sd = _noisy_fit(constants.k * 1e20, 0.01)  # Boltzmann's constant, times a power of ten
    assert abs(fitted[0] / (constants.k * 1e20) - 1) > 1e-6
    (snapped,) = exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd)
    assert float(snapped) == pytest.approx(constants.k * 1e20, rel=1e-12)


@pytest.mark.parametrize("fraction, inverse", [(0.5, False), (2.0, True)])
def test_a_noisy_constant_within_its_error_bar_of_a_small_multiple_of_a_physical_constant_becomes_it(fraction, inverse):
    """``epsilon_0/2`` and ``2/hbar`` (times a power of ten): a fraction of height 2 has
    a family of 90 numbers a decade, rare enough for the bar of a noise of 0.5%; the
    same multiples are not tried at a bar six times as wide."""
    from scipy import constants
    from scipy.stats import norm

    from nesymres_sklearn.writing.readable import _physical_per_decade, chance_match, standard_errors

    base = 1 / constants.hbar if inverse else constants.epsilon_0
    truth = fraction * base * (1e-34 if inverse else 1e12)
    skeleton = Skeleton(("mul", "c", "mul", "x_1", "x_2"))
    X_, y, fitted, sd = _noisy_fit(truth, 0.005)
    assert abs(fitted[0] / truth - 1) > 1e-5
    (snapped,) = exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd)
    assert float(snapped) == pytest.approx(truth, rel=1e-12)
    assert _physical_per_decade(1) == 30 and _physical_per_decade(2) == 90
    wide = _noisy_fit(truth, 0.03)
    (kept,) = exact_constants(skeleton, wide[2], wide[0], wide[1], noise=1.5 * wide[3])
    assert kept == float(wide[2][0])
    # the bars as the snapping reads them: the snap level's quantile of the normal law times the standard error
    quantile = norm.ppf(0.5 + SearchSettings().snap_level / 2)
    bars = [quantile * standard_errors(skeleton, fit[2], fit[0], fit[1])[0] for fit in ((X_, y, fitted), wide)]
    family = _physical_per_decade(2)
    assert chance_match(family, bars[0], truth) <= SearchSettings().snap_chance < chance_match(family, bars[1], truth)


def test_a_constant_is_tried_again_once_the_one_it_traded_off_against_is_written_exactly():
    """In ``c0*x1/(x2 + c1)`` the two constants trade off, so at noise 0.02 the bar of
    ``c0`` is too wide for the rare family of physical constants (:func:`chance_match`);
    once ``c1`` is written as 1, the bar of ``c0`` with ``c1`` held is a quarter as wide,
    and ``c0`` becomes Boltzmann's constant (times a power of ten)."""
    from scipy import constants

    from nesymres_sklearn.search.fitting.constants import least_squares_run
    from nesymres_sklearn.writing.readable import chance_match, standard_errors

    boltzmann = constants.k * 1e23
    skeleton = Skeleton(("mul", "c", "mul", "x_1", "div", "1", "add", "c", "x_2"))
    rng = np.random.default_rng(0)
    X_ = rng.uniform(1, 5, (512, 2))
    clean = boltzmann * X_[:, 0] / (X_[:, 1] + 1)
    sd = 0.02 * np.std(clean)
    y = clean + rng.normal(0, sd, len(clean))
    fitted = least_squares_run(skeleton.program, X_, y, np.array([boltzmann, 1.0]))
    both = standard_errors(skeleton, fitted, X_, y)
    held = standard_errors(skeleton, fitted, X_, y, free=[0])
    assert np.isnan(held[1]) and held[0] < both[0] / 3  # the bar narrows with c1 held
    settings = SearchSettings()
    assert chance_match(60, 1.96 * both[0], fitted[0]) > settings.snap_chance  # too wide alone
    assert abs(fitted[0] / boltzmann - 1) > 1e-4
    snapped = exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd)
    assert snapped[1] == 1
    assert float(snapped[0]) == pytest.approx(boltzmann, rel=1e-12)


def test_a_wide_error_bar_snaps_to_no_physical_constant_or_multiple_of_pi():
    """At noise 0.3 the bar is about 2% wide: one of the 30 physical constants (and their
    inverses) or of the 142 multiples of pi per decade lies within it by chance, and the
    constant stays as fitted; ``snap_chance=inf`` tries them all the same."""
    from scipy import constants

    skeleton = Skeleton(("mul", "c", "mul", "x_1", "x_2"))
    X_, y, fitted, sd = _noisy_fit(constants.h * 1e36, 0.3)  # Planck's constant, 662.607...
    assert abs(fitted[0] / (constants.h * 1e36) - 1) > 1e-3
    assert exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd) == [float(fitted[0])]
    (snapped,) = exact_constants(skeleton, fitted, X_, y, noise=1.5 * sd, settings=SearchSettings(snap_chance=np.inf))
    assert float(snapped) != float(fitted[0])


def test_the_chance_of_a_match_grows_with_the_bar_and_the_family():
    from nesymres_sklearn.writing.readable import chance_match, simple_numbers

    assert chance_match(30, 1e-3, 1.0) == pytest.approx(30 * 2e-3 / np.log(10))
    assert chance_match(30, 1e-3, -100.0) == pytest.approx(chance_match(30, 1e-5, 1.0))
    assert chance_match(30, 1e-3, 0.0) == np.inf
    # Boltzmann's constant within a bar of 3e-4 (relative), not within one of 3e-3
    boltzmann = pytest.approx(1.380649e-23, rel=1e-9, abs=0)
    assert any(float(n) == boltzmann for n in simple_numbers(1.3805e-23, True, 4e-27))
    assert all(float(n) != boltzmann for n in simple_numbers(1.3805e-23, True, 4e-26))
    # a multiple of pi within the fitted value's own thousandth stays a candidate at any bar
    assert 4 * sympy.pi in simple_numbers(12.57, True, 0.004)


def test_a_fraction_times_a_power_of_ten_must_be_a_short_decimal_or_a_rare_match():
    """Under noise, ``3/2000`` (a short decimal) and ``600`` are plain; ``6000/11`` for
    545.3 +- 50 is one of 71 plain fractions per decade that a wide bar holds by chance."""
    from nesymres_sklearn.writing.readable import simple_numbers

    assert sympy.Rational(3, 2000) in simple_numbers(0.0015003, True, 2e-6)
    assert sympy.Integer(600) in simple_numbers(603.0, True, 50.0)
    assert simple_numbers(545.3, True, 50.0) == [0, 1]
    assert sympy.Rational(6000, 11) in simple_numbers(545.3, True, 50.0, SearchSettings(snap_chance=np.inf))
    assert sympy.Rational(3, 11) in simple_numbers(0.27275, True, 2e-4)  # its own decade: as before


def test_the_chance_of_a_multiple_of_pi_counts_the_forms_as_simple_as_it():
    """``2*pi`` is one of 6 multiples of pi and of ``1/pi`` per decade with numerator and
    denominator up to 2: within a bar of 2e-3 (relative) it is no chance match; ``7*pi/11``,
    one of 142 up to 12, 1.6e-3 away, is one within a bar of 2e-3."""
    from nesymres_sklearn.writing.readable import simple_numbers

    assert 2 * sympy.pi / 1000 in simple_numbers(0.00628684, True, 1.2e-5)
    assert 7 * sympy.pi / 11 not in simple_numbers(1.9960, True, 0.004)
    assert 7 * sympy.pi / 11 in simple_numbers(1.9960, True, 0.004, SearchSettings(snap_chance=np.inf))


def test_under_noise_an_irrational_form_within_a_thousandth_is_tried_only_where_rare():
    """``10*sqrt(2)`` fitted as 14.1422 +- 0.01: ``9*pi/2`` lies within a thousandth of it
    too, but it is one of some 80 multiples of pi per decade as high, which a bar of a
    thousandth holds by chance; the multiple of a named number and ``1/(4*pi)`` (one of
    22) stay candidates. Without noise, the thousandth is the only reach, as before."""
    from nesymres_sklearn.writing.readable import simple_numbers

    found = simple_numbers(10 * np.sqrt(2) + 1e-4, True, 0.01)
    assert 10 * sympy.sqrt(2) in found and 9 * sympy.pi / 2 not in found
    assert 9 * sympy.pi / 2 in simple_numbers(10 * np.sqrt(2) + 1e-4, True, 0.01, SearchSettings(snap_chance=np.inf))
    assert 1 / (4 * sympy.pi) in simple_numbers(1 / (4 * np.pi) + 1e-5, True, 1e-4)
    assert 9 * sympy.pi / 2 in simple_numbers(10 * np.sqrt(2) + 1e-4)
