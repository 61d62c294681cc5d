"""Readable display: constants to a few significant digits, the fitted estimator's text
and HTML summaries, and the command line's rounded equation."""

import re
import warnings

import numpy as np
import pytest
import sympy
from sklearn import config_context

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.cli import main
from nesymres_sklearn.writing.display import rounded

x = sympy.Symbol("x", real=True)
FULL = 2.74892876575634


def test_floats_are_rounded_to_significant_digits_and_exact_numbers_stay():
    expression = FULL * sympy.sin(x) + sympy.Rational(3, 2) * x**2 + sympy.pi + 123456.789 * x
    assert set(str(rounded(expression)).split(" + ")) == {"1.235e+5*x", "3*x**2/2", "2.749*sin(x)", "pi"}
    assert set(str(rounded(expression, 2)).split(" + ")) == {"1.2e+5*x", "3*x**2/2", "2.7*sin(x)", "pi"}
    assert expression.atoms(sympy.Float) == {sympy.Float(FULL), sympy.Float(123456.789)}  # unchanged


@pytest.mark.parametrize("precision", [0, -1, 2.5, True, "4"])
def test_a_precision_that_is_not_a_positive_integer_is_an_error(precision):
    with pytest.raises(ValueError, match="precision must be a positive number of significant digits"):
        rounded(x, precision)


@pytest.fixture
def fitted(tiny_model):
    """A fit whose equation is a known constant with 15 digits (a constant target)."""
    X = np.random.default_rng(0).uniform(1, 5, size=(20, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return NeSymReSRegressor(model=str(tiny_model), refine=None).fit(X, np.full(20, FULL))


def test_equation_rounds_and_expression_keeps_full_precision(fitted):
    assert str(fitted.equation()) == "2.749" and str(fitted.equation(precision=6)) == "2.74893"
    assert float(fitted.expression_) == FULL


def test_the_fitted_repr_shows_the_rounded_equation_and_the_top_of_the_table(fitted):
    text = repr(fitted)
    parameters, equation, header, first_row = text.splitlines()
    assert parameters == f"NeSymReSRegressor(model={fitted.model!r}, refine=None)"
    assert equation == "equation (row 0 of equations_, 4 significant digits): 2.749"
    assert header.split() == ["expression", "loss", "complexity", "origin"]
    assert first_row.split() == ["0", "2.749", "0", "1", "constant"]
    assert "2.74892" not in text


def test_the_unfitted_repr_is_scikit_learns_and_parameters_are_untouched(tiny_model):
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=4)
    assert repr(reg) == f"NeSymReSRegressor(beam_size=4, model={str(tiny_model)!r})"
    assert reg.get_params()["beam_size"] == 4
    with config_context(display="diagram"):
        assert "equation" not in reg._repr_mimebundle_()["text/html"]


def test_the_fitted_html_shows_the_diagram_the_equation_and_the_table(fitted):
    with config_context(display="diagram"):
        pages = [fitted._repr_html_(), fitted._repr_mimebundle_()["text/html"]]  # for every kind of notebook
    for page in pages:
        assert "sk-estimator" in page  # scikit-learn's diagram comes first
        assert re.search(r"significant digits\): <code>2\.749</code>", page)
        assert "<table" in page and "<td>constant</td>" in page


@pytest.mark.slow
def test_the_command_line_prints_the_rounded_and_the_full_equation(tiny_model, capsys):
    assert main(["--example", "--model", str(tiny_model), "--beam-size", "2", "--top", "3"]) == 0
    out = capsys.readouterr().out
    rounded_line = out.split("Equation: ")[1].splitlines()[0]
    full_line = out.split("Full precision: ")[1].splitlines()[0]
    numbers = sorted(float(n) for n in sympy.sympify(rounded_line).atoms(sympy.Float))
    full = sorted(float(f"{float(n):.4g}") for n in sympy.sympify(full_line).atoms(sympy.Float))
    assert numbers == pytest.approx(full)
    digits = [len(number.replace(".", "").lstrip("0")) for number in re.findall(r"\d+\.\d+", rounded_line)]
    assert all(n <= 4 for n in digits)
