"""``operators=`` and ``max_complexity=``: candidates outside them are set aside, Operon
searches with the allowed operators only, and an unknown operator is an error that
lists the known ones."""

import numpy as np
import pytest
import sympy

import nesymres_sklearn.operon.refine as operon_refine
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.operators import OPERATORS
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.operon.settings import OperonSettings
from nesymres_sklearn.operon.trees import OPERON_SYMBOLS, operon_symbols
from nesymres_sklearn.restrictions import Restrictions
from nesymres_sklearn.search.selection.table import CandidateRows

SINE = Skeleton(("mul", "c", "sin", "x_1"))  # 4 tokens
POWER = Skeleton(("add", "pow", "x_1", "2", "c"))  # 5 tokens


def data():
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 2))
    return X, X[:, 0] * np.sin(X[:, 1]) + X[:, 1] ** 2


def uses_only(skeleton: sympy.Expr, functions: set) -> bool:
    """Whether a skeleton of ``equations_`` uses sums, products and ``functions`` only
    (a power or a quotient is a ``Pow``)."""
    return not skeleton.atoms(sympy.Pow) and {f.func for f in skeleton.atoms(sympy.Function)} <= functions


def test_skeletons_are_allowed_by_their_operators_and_length():
    restricted = Restrictions.parse(["add", "mul", "sin"], None)
    assert restricted.allows(SINE) and not restricted.allows(POWER)
    assert Restrictions.parse(None, 4).allows(SINE) and not Restrictions.parse(None, 4).allows(POWER)
    rows = CandidateRows()
    for skeleton in (SINE, POWER):
        rows.add(skeleton, np.ones(skeleton.n_constants), 1.0, 0.0, "beam")
    assert Restrictions().kept(rows) is rows
    assert Restrictions.parse(["mul", "sin"], None).kept(rows).skeletons == [SINE]


def test_an_unknown_operator_is_an_error_that_lists_the_known_ones():
    with pytest.raises(
        ValueError, match="operators holds 'log', 'max', which the operator table does not know"
    ) as error:
        Restrictions.parse(["sin", "log", "max"], None)
    assert ", ".join(sorted(OPERATORS)) in str(error.value)


def test_operons_function_set_follows_the_allowed_operators():
    assert operon_symbols(None) == OPERON_SYMBOLS
    assert operon_symbols(frozenset({"add", "mul", "sin", "pow"})) == "constant,variable,add,mul,sin,sub"
    assert operon_symbols(frozenset({"mul", "ln"})) == "constant,variable,mul,log"


@pytest.mark.parametrize("params", [{"operators": ["add", "mul"]}, {"max_complexity": 5}])
def test_the_table_holds_allowed_candidates_only(tiny_model, params):
    X, y = data()
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=16, refine=None, random_state=0, **params).fit(X, y)
    unrestricted = NeSymReSRegressor(model=str(tiny_model), beam_size=16, refine=None, random_state=0).fit(X, y)
    for table, restricted in ((reg.equations_, True), (unrestricted.equations_, False)):
        allowed = [
            row.complexity <= params.get("max_complexity", row.complexity) and uses_only(row.skeleton, set())
            if "operators" in params
            else row.complexity <= params["max_complexity"]
            for row in table.itertuples()
        ]
        assert all(allowed) if restricted else not all(allowed)  # without the option, something is outside


def test_operon_searches_with_the_allowed_operators(tiny_model, monkeypatch):
    symbols = []
    regressor = operon_refine._regressor
    monkeypatch.setattr(operon_refine, "_regressor", lambda *args: symbols.append(args[2]) or regressor(*args))
    X, y = data()
    settings = OperonSettings(population_size=50, generations=2)
    reg = NeSymReSRegressor(
        model=str(tiny_model), beam_size=4, refine="operon", operon_settings=settings, operators=["add", "mul", "sin"]
    ).fit(X, y)
    assert symbols == ["constant,variable,add,mul,sin,sub"]
    assert all(uses_only(skeleton, {sympy.sin}) for skeleton in reg.equations_["skeleton"])


def test_bad_restrictions_are_rejected_by_the_estimator(tiny_model):
    X, y = data()
    with pytest.raises(ValueError, match="which the operator table does not know"):
        NeSymReSRegressor(model=str(tiny_model), operators=["sine"]).fit(X, y)
    with pytest.raises(ValueError, match="'max_complexity' parameter .* must be an int in the range \\[1, inf\\)"):
        NeSymReSRegressor(model=str(tiny_model), max_complexity=0).fit(X, y)
