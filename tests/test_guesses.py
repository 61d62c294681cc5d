"""``guesses=``: parsed over the feature names, fitted like any candidate (in the
search's units), competing in the selection with origin ``guess``, seeding Operon as
fixed work; a guess that does not parse or names no feature is a clear error."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor, pipeline
from nesymres_sklearn.guesses import Guesses
from nesymres_sklearn.search.fitted import CandidateRows
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.writing.export import feature_symbols

NAMES = ["x0", "x1"]
SYMBOLS = feature_symbols(NAMES)


def data(n=64, seed=0):
    X = np.random.default_rng(seed).uniform(1, 5, size=(n, 2))
    return X, 2.5 * X[:, 0] * np.sin(X[:, 1]) + 0.3


def regressor(tiny_model, **params):
    """The network and the guesses without the identities, which find ``data``'s law exactly themselves."""
    settings = SearchSettings(identities=False)
    defaults = {"model": str(tiny_model), "beam_size": 2, "n_restarts": 1, "refine": None, "search_settings": settings}
    return NeSymReSRegressor(**{**defaults, **params})


def test_a_guess_is_read_over_the_features_by_position():
    (expression,) = Guesses.parse(["2.5*x1*sin(x0)"], NAMES, SYMBOLS).expressions
    x_1, x_2 = sympy.symbols("x_1 x_2")
    assert sympy.simplify(expression - 2.5 * x_2 * sympy.sin(x_1)) == 0


@pytest.mark.parametrize(
    ("guess", "message"),
    [
        (
            "2.5*x0*sin(",
            r"The guess '2\.5\*x0\*sin\(' does not parse \(.*\)\. Write it .* over the feature names \(x0, x1\)",
        ),
        ("x0 + mass", r"The guess 'x0 \+ mass' names mass, which is not a feature; the features are x0, x1\."),
        ("a*b", r"names a, b, which are not a feature; the features are x0, x1"),
        ("floor(x0)", r"The guess 'floor\(x0\)' cannot be written with the operator table: .*floor"),
        ("x0 > 1", r"The guess 'x0 > 1' is not an expression of the features"),
        (3, r"guesses must hold strings or SymPy expressions, got 3 \(int\)"),
    ],
)
def test_a_bad_guess_is_an_error_that_names_it(guess, message):
    with pytest.raises(ValueError, match=message):
        Guesses.parse([guess], NAMES, SYMBOLS)


def test_the_estimator_rejects_a_bad_guess_before_fitting(tiny_model):
    X, y = data()
    with pytest.raises(ValueError, match="names z, which is not a feature"):
        regressor(tiny_model, guesses=["x0*z"]).fit(X, y)
    with pytest.raises(ValueError, match="'guesses' parameter .* must be a list"):
        regressor(tiny_model, guesses="x0").fit(X, y)


@pytest.mark.parametrize(("x_factor", "y_factor"), [(1.0, 1.0), (1e3, 1e6)])
def test_a_right_guess_with_wrong_numbers_is_fitted_and_selected(tiny_model, x_factor, y_factor):
    X, y = data()
    X, y = X * x_factor, y * y_factor  # the search's units differ from the data's: the guess is mapped
    guess = f"1.0*x0*sin(x1/{x_factor!r}) + 1.0"  # 1 and 1 where the law has other numbers
    reg = regressor(tiny_model, guesses=[guess]).fit(X, y)
    assert reg.equations_.loc[reg.best_index_, "origin"] == "guess"
    assert reg.score(X, y) > 1 - 1e-10
    truth = sympy.sympify(f"{y_factor!r}*(2.5*x0/{x_factor!r}*sin(x1/{x_factor!r}) + 0.3)")
    grid = np.random.default_rng(1).uniform(1, 5, size=(20, 2)) * x_factor
    np.testing.assert_allclose(reg.predict(grid), sympy.lambdify(sympy.symbols("x0 x1"), truth)(*grid.T), rtol=1e-8)


def test_guesses_over_named_columns_as_strings_or_sympy(tiny_model):
    X, y = data()
    frame = pd.DataFrame(X, columns=["mass kg", "angle"])
    guess = 2.0 * sympy.Symbol("mass kg") * sympy.sin(sympy.Symbol("angle")) + 1.0
    reg = regressor(tiny_model, guesses=[guess, "angle**2"]).fit(frame, y)
    guessed = reg.equations_[reg.equations_["origin"] == "guess"]
    assert len(guessed) == 3  # the second guess also with constants attached
    assert reg.equations_.loc[reg.best_index_, "origin"] == "guess" and reg.score(frame, y) > 1 - 1e-10
    assert {s.name for s in reg.expression_.free_symbols} == {"`mass kg`", "angle"}


def test_without_guesses_no_row_is_a_guess(tiny_model):
    X, y = data()
    assert "guess" not in set(regressor(tiny_model).fit(X, y).equations_["origin"])


def test_guesses_seed_operon(tiny_model, monkeypatch):
    seeds = []

    def recording_stage(required):
        def stage(rows, problem, settings, seed, budget, operators, calibration):
            seeds.extend(str(skeleton) for skeleton, _ in rows.best_first())
            return CandidateRows(), None

        return stage

    monkeypatch.setattr(pipeline, "operon_stage", recording_stage)
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        regressor(tiny_model, guesses=["1.0*x0*sin(x1) + 1.0"], refine="operon").fit(X, y)
    assert "add mul c mul x_1 sin x_2 c" in seeds or "add c mul c mul x_1 sin x_2" in seeds
