"""The selected equation as a person writes it: the units folded into its constants,
no rescaling left in print, powers of ten beyond 1e6 as floats (issue 39)."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.search.selection.folding import folded

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


@pytest.mark.parametrize(
    "product, expected",
    [
        (sympy.sqrt(x0) * sympy.sqrt(x1 / x2), sympy.sqrt(x0 * x1 / x2)),  # a monomial times a group
        (sympy.sqrt(x0) * sympy.sqrt(x1) / sympy.sqrt(x2), sympy.sqrt(x0 * x1 / x2)),
        (3 * sympy.sqrt(x0) * sympy.sqrt(x2) * sympy.sin(x1), 3 * sympy.sqrt(x0 * x2) * sympy.sin(x1)),
        (sympy.sin(sympy.sqrt(x0) * sympy.sqrt(x1)) + 1, sympy.sin(sympy.sqrt(x0 * x1)) + 1),  # inside too
        (x0**2 * x1**2, x0**2 * x1**2),  # integer powers stay apart
        (sympy.sqrt(x0) * x1 ** sympy.Rational(1, 3), sympy.sqrt(x0) * x1 ** sympy.Rational(1, 3)),  # two roots
    ],
)
def test_the_roots_of_a_product_are_written_as_one_root(product, expected):
    assert folded(product) == expected


def test_one_root_is_the_law_wherever_the_roots_are_real():
    """Equal where every base is at least 0 (the law's real domain); real also where a
    pair of bases is negative, where the roots apart are not."""
    law = sympy.sqrt(x0) * sympy.sqrt(x1) / sympy.sqrt(x2)
    one = sympy.lambdify((x0, x1, x2), folded(law), "numpy")
    apart = sympy.lambdify((x0, x1, x2), law, "numpy")
    X = np.random.default_rng(0).uniform(0.1, 5, (50, 3))
    np.testing.assert_allclose(one(*X.T), apart(*X.T), rtol=1e-14)
    with np.errstate(invalid="ignore"):
        assert np.isnan(apart(-1.0, -2.0, 1.0)) and one(-1.0, -2.0, 1.0) == pytest.approx(np.sqrt(2.0))
