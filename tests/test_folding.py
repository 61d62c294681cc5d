"""The selected equation as a person writes it: the units folded into its constants,
no rescaling left in print, powers of ten beyond 1e6 as floats (issue 39)."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.writing.folding import folded
from nesymres_sklearn.writing.readable import whole_roots

x0, x1 = sympy.symbols("x0 x1", real=True)
LOG_1E3 = sympy.Float(np.log(1e-3))  # what a fit over x0/1e-3 absorbs into a constant


def written(expression, scaling):
    """The selected row's path: over the search's units, then unscaled and folded."""
    return folded(scaling.unscale_expression(expression, [x0, x1], evaluate=True))


@pytest.mark.parametrize(
    "scaled, scaling, expected",
    [
        (x1 * sympy.log(x0) + LOG_1E3 * x1, Scaling((1e-3, 1.0), 1.0), x1 * sympy.log(x0)),
        ((x1 - 1) * sympy.log(x0) + sympy.log(x0) + LOG_1E3 * x1, Scaling((1e-3, 1.0), 1.0), x1 * sympy.log(x0)),
        (sympy.sin(x1 + sympy.log(x0) + LOG_1E3), Scaling((1e-3, 1.0), 1.0), sympy.sin(x1 + sympy.log(x0))),
        (sympy.sqrt(x0**2 + x1**2), Scaling((1e3, 1e3), 1e3), sympy.sqrt(x0**2 + x1**2)),
        (1 / (1000 * x0 - 3000), Scaling((1.0, 1.0), 1e3), 1 / (x0 - 3)),
    ],
    ids=["log", "log-regrouped", "log-inside", "sqrt", "pole"],
)
def test_the_rescaling_does_not_show_in_print(scaled, scaling, expected):
    assert written(scaled, scaling) == expected


@pytest.mark.parametrize("power", [30, 300, -30, 8])
def test_powers_of_ten_beyond_a_million_stay_floats(power):
    expression = written(x0 * sympy.sin(x1), Scaling((1.0, 1.0), 10.0**power))
    assert expression == sympy.Float(10.0**power) * x0 * sympy.sin(x1)
    assert len(str(expression)) < 30  # never a 31- or 301-digit integer
    assert sympy.sstr(expression, min=-4, max=6) == f"1.0e{power:+d}*x0*sin(x1)"


def test_small_powers_of_ten_stay_exact():
    assert written(x0, Scaling((1.0, 1.0), 1e3)) == 1000 * x0
    assert written(x0, Scaling((1e-3, 1.0), 1.0)) == 1000 * x0


def test_every_form_is_the_same_function():
    offset = x1 * sympy.log(1000 * x0) + sympy.Float(2.7182818) * x1  # log(1000) joins the float
    assert folded(offset) == x1 * (sympy.log(x0) + sympy.Float(2.7182818 + np.log(1000)))
    points = {x0: 0.0123, x1: 4.56}
    assert float(folded(offset).subs(points)) == pytest.approx(float(offset.subs(points)), rel=1e-12)
    exact = x1 * sympy.log(1000 * x0)  # no float to cancel against: the law as fitted
    assert folded(exact) == exact


x2 = sympy.Symbol("x2", real=True)
# AIF-38, as the units stage and the network wrote it in two seeds
GROUPED = x0 * sympy.sqrt(1 - sympy.pi**2 * x1**2 / (x0**2 * x2**2)) / x1
FLIPPED = sympy.pi * sympy.sqrt(x0**2 * x2**2 / (sympy.pi**2 * x1**2) - 1) / x2
MOVED = sympy.sqrt(x0**2 / x1**2 - sympy.pi**2 / x2**2)


def test_only_even_powers_of_features_move_into_a_root():
    """Moving x0 into sqrt(A) as x0**2 holds where x0 > 0 alone (issue 53: the printed
    law is the law everywhere); x0**2 moves, as an identity, when that is shorter."""
    assert folded(GROUPED) == GROUPED
    assert folded(x0**2 * sympy.sqrt(1 / x0**4 + x1**2)) == sympy.sqrt(x0**4 * x1**2 + 1)
    assert folded(x0**2 * sympy.sqrt(1 + x1**2)) == x0**2 * sympy.sqrt(x1**2 + 1)  # longer inside


def test_a_root_in_the_denominator_keeps_its_group():
    lorentz = x0 * x1 / sympy.sqrt(1 - x1**2 / x2**2)  # not x0/sqrt(1/x1**2 - 1/x2**2)
    assert folded(lorentz) == lorentz
    assert folded(3 * x0 * sympy.sqrt(x1**2 + x2**2)) == 3 * x0 * sympy.sqrt(x1**2 + x2**2)


def test_the_moved_form_is_another_law_where_a_feature_is_negative():
    before, after = (sympy.lambdify((x0, x1, x2), e) for e in (GROUPED, MOVED))
    rng = np.random.default_rng(0)
    a, b, c = rng.uniform(1, 5, 20), rng.uniform(1, 5, 20), rng.uniform(20, 30, 20)
    np.testing.assert_allclose(after(a, b, c), before(a, b, c), rtol=1e-12)
    np.testing.assert_allclose(after(a, -b, c), -before(a, -b, c), rtol=1e-12)  # x1 < 0: the sign differs


def test_absolute_values_stay_in_the_writer():
    """|x| as x is the selected skeleton's rewrite where the data are of one sign
    (:mod:`nesymres_sklearn.writing.signs`), which ``predict`` runs too; the
    writer and the folding keep |x|."""
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.writing.writer import Writer

    law = sympy.sin(2 * sympy.pi * sympy.Abs(x0) * sympy.Abs(x1) / sympy.Abs(x2)) ** 2  # from Operon's abs
    assert folded(law) == law
    skeleton = Skeleton(("mul", "abs", "x_1", "abs", "x_2"))
    assert Writer(Scaling.identity(2), (x0, x1))(skeleton, np.array([]), []) == sympy.Abs(x0) * sympy.Abs(x1)


def test_like_terms_that_the_factoring_collects_to_rounding_are_dropped():
    # Operon's -0.6478*x0**2 - 0.2524*x0*(-2.567*x0 - 3.963*exp(-0.6*x1**2)): the x0**2 terms cancel
    x0, x1 = sympy.symbols("x0 x1")
    c = [-0.2523595925572775, 3.9625995186730707, -0.6478256149131193, -0.602409638554217]
    written = c[2] * x0**2 + c[0] * x0 * (-2.56707346983881 * x0 - c[1] * sympy.exp(c[3] * x1**2))
    numbers = [abs(float(number)) for number in sympy.factor_terms(written).atoms(sympy.Float)]
    assert 0 < min(numbers) < 1e-15  # SymPy's factoring leaves the x0**2 terms' rounding
    assert folded(written) == x0 * sympy.exp(sympy.Float(c[3]) * x1**2)
    # a small number the law holds stays
    kept = folded(x0**2 + sympy.Float(1e-14) * x0 + sympy.Float(2.5) * x1)
    assert kept.has(sympy.Float(1e-14))


@pytest.mark.parametrize(
    "written",
    [
        "0.657744623479467*exp(x0 - (x0 + 1)**2/2)",  # 1/sqrt(2*pi) times exp(-1/2) outside, the shift inside
        "exp(1.35568324707851*x0 - (0.707106781186548*x0 + 0.958612817150216)**2)",  # the x0 terms cancel to 1e-14
    ],
)
def test_a_gaussian_with_its_shift_inside_the_exponent_is_written_as_a_person_writes_it(written):
    x0 = sympy.Symbol("x0")
    expression = sympy.sympify(written, locals={"x0": x0})
    assert str(whole_roots(folded(expression))) == "exp(-x0**2/2)/sqrt(2*pi)"
    # an exponent that does not get shorter expanded stays as it is
    assert folded(sympy.exp(x0 * (x0 + 1))) == sympy.exp(x0 * (x0 + 1))


def test_sums_and_products_of_sines_and_cosines_are_written_as_one_where_shorter():
    x0, x1, x2, x3 = sympy.symbols("x0:4", real=True)
    law = x0 * (1 - x1**2) / (x1 * sympy.sin(x2) * sympy.sin(x3) + x1 * sympy.cos(x2) * sympy.cos(x3) + 1)
    assert folded(law) == x0 * (1 - x1**2) / (x1 * sympy.cos(x2 - x3) + 1)
    assert folded(2 * x0 * sympy.sin(x1) * sympy.cos(x1)) == x0 * sympy.sin(2 * x1)
    assert folded(x0 * sympy.sin(x1) + x2 * sympy.cos(x1)) == x0 * sympy.sin(x1) + x2 * sympy.cos(x1)  # nothing to join


def test_harmonics_of_one_angle_are_added_into_one_cosine():
    from nesymres_sklearn.writing.folding import harmonics_added

    x0, x1 = sympy.symbols("x0:2", real=True)
    law = 3.054 * x0 + np.cos(2.84) * sympy.cos(x1) - np.sin(2.84) * sympy.sin(x1) + x1 / x0
    assert folded(law) == 3.054 * x0 + sympy.cos(x1 + sympy.Float(2.84)) + x1 / x0
    points = np.random.default_rng(0).uniform(1, 5, (32, 2))
    before, after = (sympy.lambdify((x0, x1), form)(*points.T) for form in (law, harmonics_added(law)))
    np.testing.assert_allclose(after, before, rtol=1e-13)
    two_angles = 2.0 * sympy.cos(x0) + 3 * sympy.sin(x1)
    assert harmonics_added(two_angles) == two_angles


def test_logs_are_split_only_where_they_are_few():
    from nesymres_sklearn.writing.folding import MAX_SPLIT_LOGS, _logs_split

    x = sympy.symbols(f"x0:{MAX_SPLIT_LOGS + 1}", positive=True)
    few = sympy.Mul(*(sympy.log(1000.0 * v) for v in x[:MAX_SPLIT_LOGS])) - 1.5 * x[0]
    assert _logs_split(few) is not None
    many = sympy.Mul(*(sympy.log(1000.0 * v) for v in x)) - 1.5 * x[0]  # one more: its expansion is left out
    assert _logs_split(many) is None


def test_folding_keeps_to_the_allowed_functions():
    """The harmonics of ``sin`` alone are not added into a ``cos`` the user excluded (issue 65)."""
    x = sympy.Symbol("x", real=True)
    expression = sympy.sin(x) + sympy.sin(x + sympy.Float(1.5707963267949))
    assert sympy.cos in {type(f) for f in folded(expression).atoms(sympy.Function)}  # shortest: sin(x) + cos(x)
    kept = folded(expression, frozenset({"add", "mul", "sin"}))
    assert {type(f) for f in kept.atoms(sympy.Function)} == {sympy.sin}
    points = np.linspace(-30, 30, 61)
    np.testing.assert_allclose(sympy.lambdify(x, kept)(points), np.sin(points) + np.cos(points), atol=1e-9)
