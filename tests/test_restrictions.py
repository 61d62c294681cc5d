"""``operators=`` and ``max_complexity=``: candidates outside them are set aside, Operon
searches with the allowed operators only (the network alone, with a warning, when it
has none of them), PySR's and Operon's names are aliases, and an unknown operator is an
error that lists the known ones."""

import numpy as np
import pytest
import sympy

import nesymres_sklearn.operon.plan as operon_plan
import nesymres_sklearn.operon.refine as operon_refine
from nesymres_sklearn import NeSymReSRegressor, pipeline
from nesymres_sklearn.expression.operators import OPERATORS, function_tokens
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.operon.plan import without_operon
from nesymres_sklearn.operon.settings import OPERON_FUNCTIONS, OperonSettings
from nesymres_sklearn.operon.trees import _DIRECT, OPERON_SYMBOLS, operon_symbols
from nesymres_sklearn.restrictions import ALIASES, Restrictions
from nesymres_sklearn.search.fitted import CandidateRows, Fitted
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.writing.writer import Writer

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
        rows.add(Fitted(skeleton, np.ones(skeleton.n_constants), 1.0), log_prob=0.0, origin="beam")
    assert Restrictions().kept(rows) is rows
    assert Restrictions.parse(["mul", "sin"], None).kept(rows).skeletons == [SINE]


def test_an_unknown_operator_is_an_error_that_lists_the_known_ones():
    with pytest.raises(
        ValueError, match="operators holds 'logarithm', 'max', which the operator table does not know"
    ) as error:
        Restrictions.parse(["sin", "logarithm", "max"], None)
    assert ", ".join(sorted(OPERATORS)) in str(error.value)
    assert "aliases + - sub * / ^ square log" in str(error.value)


@pytest.mark.parametrize(
    ("alias", "tokens"),
    [
        ("+", {"add"}),
        ("-", {"add", "mul"}),
        ("sub", {"add", "mul"}),
        ("*", {"mul"}),
        ("/", {"div", "pow"}),
        ("^", {"pow"}),
        ("square", {"pow"}),
        ("log", {"ln"}),
    ],
)
def test_pysr_and_operon_names_are_aliases_of_the_tables(alias, tokens):
    assert Restrictions.parse([alias], None).operators == tokens
    assert Restrictions.parse([alias, "sin"], 9) == Restrictions(frozenset({*tokens, "sin"}), 9)


def test_aliases_allow_what_they_name():
    arithmetic = Restrictions.parse(["+", "-", "*", "/"], None)
    difference = Skeleton(("add", "x_1", "mul", "-1", "x_2"))  # x0 - x1
    quotient = Skeleton(("mul", "x_1", "pow", "x_2", "-1"))  # the network's x0/x1
    assert arithmetic.allows(difference) and arithmetic.allows(quotient) and not arithmetic.allows(SINE)
    assert Restrictions.parse(["sub"], None).allows(difference)
    assert Restrictions.parse(["*", "square"], None).allows(Skeleton(("mul", "c", "pow", "x_1", "2")))
    assert Restrictions.parse(["*", "log"], None).allows(Skeleton(("mul", "c", "ln", "x_1")))
    assert set(ALIASES) == {"+", "-", "sub", "*", "/", "^", "square", "log"}
    assert all(set(tokens) <= set(OPERATORS) for tokens in ALIASES.values())


def test_the_estimator_fits_with_aliases(tiny_model):
    X, y = data()
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=8, refine=None, random_state=0, operators=["+", "*"])
    reg.fit(X, y)
    assert all(uses_only(skeleton, set()) for skeleton in reg.equations_["skeleton"])


def test_operons_function_set_follows_the_allowed_operators():
    assert operon_symbols(None) == OPERON_SYMBOLS
    assert operon_symbols(frozenset({"add", "mul", "sin", "pow"})) == "constant,variable,add,mul,sin,sub"
    assert operon_symbols(frozenset({"mul", "ln"})) == "constant,variable,mul,log"


def test_operons_functions_are_those_of_its_trees():
    assert {token: node.name.lower() for token, node in _DIRECT.items()} == OPERON_FUNCTIONS
    assert set(operon_symbols(None).split(",")) == {"constant", "variable", "sub", *OPERON_FUNCTIONS.values()}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operon_searches_with_any_one_operator_it_has_and_none_it_lacks(name):
    """Each of the 18 names alone: Operon runs with its function when it has one, and
    says it cannot when it has none (a function set of constants and variables alone
    crashed inside pyoperon: ``ParameterizeDistribution(): incompatible function arguments``)."""
    message = without_operon(frozenset({name}))
    assert (message is None) == (name in OPERON_FUNCTIONS)
    if message is not None:
        assert f"Operon has none of the operators {name!r}" in message and "the network works alone" in message
        return
    X, y = data()
    seeds = [(Skeleton(("mul", "c", "x_1")), np.array([2.0]))]
    settings = OperonSettings(population_size=20, generations=1)
    refined = operon_refine.refine(X[:16], y[:16], seeds, settings, 0, symbols=operon_symbols(frozenset({name})))
    assert refined.evaluations > 0 and refined.skeletons
    allowed = {*OPERATORS} - {"add", "mul", name}  # Operon's weights and sub use add and mul
    assert all(not set(skeleton.tokens) & allowed for skeleton in refined.skeletons)


@pytest.mark.parametrize("refine", ["auto", "operon"])
def test_operators_operon_lacks_leave_the_network_alone_with_a_warning(tiny_model, monkeypatch, refine):
    calls = []
    stage = operon_plan.operon_stage
    monkeypatch.setattr(pipeline, "operon_stage", lambda required: calls.append(required) or stage(required))
    X, y = data()
    settings = OperonSettings(population_size=20, generations=1)
    reg = NeSymReSRegressor(
        model=str(tiny_model), beam_size=4, refine=refine, operon_settings=settings, operators=["tan"], random_state=0
    )
    with pytest.warns(UserWarning, match="Operon has none of the operators 'tan'.*the network works alone"):
        reg.fit(X, y)
    assert calls == [refine == "operon"] and reg.refinement_ is None
    assert all(uses_only(skeleton, {sympy.tan}) for skeleton in reg.equations_["skeleton"])


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


def test_the_rescaling_needs_no_operator_the_user_excluded():
    """operators=["ln"] on log(x0): the search's units divide x0 by 10 and its law
    log(x0/10) needs mul; it once gave a constant (issue 53)."""
    X = np.random.default_rng(0).uniform(1, 50, size=(64, 2))
    assert Restrictions.parse(["ln"], None).rescales is False
    assert Restrictions.parse(["ln", "*"], None).rescales and Restrictions.parse(None, None).rescales
    reg = NeSymReSRegressor(beam_size=4, refine=None, random_state=0, operators=["ln"]).fit(X, np.log(X[:, 0]))
    assert reg.expression_ == sympy.log(sympy.Symbol("x0", real=True))


def test_a_law_that_explains_nothing_of_structured_data_is_a_warning(tiny_model):
    X, y = data()
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=2, refine=None, random_state=0, operators=["exp"])
    with pytest.warns(UserWarning, match=r"explains only R² = .*the operators allowed \(exp\) may not write the law"):
        reg.fit(X, y)
    assert reg.score(X, y) < 0.1


def test_noise_explained_by_a_constant_is_no_warning(tiny_model):
    import warnings

    rng = np.random.default_rng(0)
    X, y = rng.uniform(1, 5, size=(64, 2)), rng.normal(size=64)
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=2, refine=None, random_state=0, operators=["exp"])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="The selected equation explains")
        reg.fit(X, y)


def test_no_operator_at_all_is_refused_with_the_fix(tiny_model):
    """``operators=[]`` used to run and warn "Operon has none of the operators :"."""
    X, y = data()
    with pytest.raises(ValueError, match=r"operators is empty: .*operators=None for all"):
        NeSymReSRegressor(model=str(tiny_model), operators=[]).fit(X, y)


@pytest.mark.parametrize(
    "law, written", [(lambda x: x**3, "x0**3"), (lambda x: x**2, "x0**2"), (lambda x: 1 / x, "1/x0")]
)
def test_pow_alone_writes_integer_powers_of_a_feature(tiny_model, law, written):
    """``operators=["pow"]`` leaves no room for the network's constants (``c*x**3`` needs
    ``mul``): the plain rows hold each feature to each integer of the vocabulary."""
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 2))
    reg = NeSymReSRegressor(model=str(tiny_model), beam_size=2, refine=None, random_state=0, operators=["pow"])
    reg.fit(X, law(X[:, 0]))
    assert str(reg.expression_) == written


def test_the_printed_law_uses_only_the_allowed_functions():
    """``2.5*x0*sin(x1 + pi/2) + 1``, its constants exact, used to print as
    ``5*x0*cos(x1)/2 + 1`` under ``operators=["add", "mul", "sin"]``: SymPy's evaluation."""
    skeleton = Skeleton(("add", "c", "mul", "mul", "c", "x_1", "sin", "add", "x_2", "c"))
    exact = [sympy.Integer(1), sympy.Rational(5, 2), sympy.pi / 2]
    values = np.array([1.0, 2.5, np.pi / 2])
    symbols = sympy.symbols("x0 x1", real=True)
    free = Writer(Scaling.identity(2), symbols)(skeleton, values, exact)
    assert function_tokens(free) == {"cos"}  # without restrictions, the shortest form
    restricted = Writer(Scaling.identity(2), symbols, (), frozenset({"add", "mul", "sin"}))(skeleton, values, exact)
    assert function_tokens(restricted) == {"sin"}
    points = np.random.default_rng(0).uniform(-20, 20, size=(50, 2))  # far outside any training box
    f = sympy.lambdify(symbols, restricted)
    np.testing.assert_allclose(f(points[:, 0], points[:, 1]), 2.5 * points[:, 0] * np.cos(points[:, 1]) + 1, atol=1e-9)
