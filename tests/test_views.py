"""Every view of ``search/views.py``'s protocol: a law on the viewed problem, mapped
back, predicts on the original problem what the law predicts on the viewed one."""

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.expression.tokens import variable_index, variable_token
from nesymres_sklearn.search.fitted import CandidateRows, Fitted, mse
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.search.variables.power_factor import PowerFactor
from nesymres_sklearn.search.variables.reduction import Reduction
from nesymres_sklearn.search.variables.routing import Route
from nesymres_sklearn.search.views import Chain, Identity, View, back_rows
from nesymres_sklearn.units.stage import Dimensionless, Units

SYMBOLS = sympy.symbols("x0:4", positive=True)
# One term per variable of the viewed problem: c*x, x*x or c/(c + x*x) (no sine: a
# combination of features of 1e6 reaches it as an angle whose rounding is the answer).
TERMS = (("mul", "c", "{x}"), ("mul", "{x}", "{x}"), ("div", "c", "add", "c", "mul", "{x}", "{x}"))


def scaling(whole: Problem, rng) -> Scaling:
    return Scaling.for_data(whole.X, whole.y, offset_ratio=10.0)


def groups(whole: Problem, rng) -> Dimensionless:
    # speed, time, length, a mass: y in metres is x2 * f(x0*x1/x2), the mass takes no part
    return Units.parse(["m/s", "s", "m", "kg"], "m", 4).dimensionless(whole)


def split(whole: Problem, rng) -> Route:
    factor = PowerFactor({0: 1.0, 2: -0.5}, np.array([1, 3]), 10.0)
    seen = Problem(whole.X[:, factor.rest], factor.target(whole.X, whole.y), whole.weights)
    return Route(seen, factor.rest, 4, split=factor)


def combined(whole: Problem, rng) -> Route:
    logarithmic = bool(rng.integers(2))
    coefficients = np.array(
        [[1.0, 0.5, 0.0, 0.0], [0.0, 0.0, 2.0, -1.0]] if logarithmic else [[1, 1, 0, 0], [0, 0, 2, -1]]
    )
    reduction = Reduction(coefficients, logarithmic, np.array([2.0, 0.1]), 1.0)
    seen = Problem(reduction.features(whole.X), whole.y, whole.weights)
    return Route(seen, reduction.columns, 4, combined=reduction)


def subset(whole: Problem, rng) -> Route:
    columns = rng.permutation(4)[: int(rng.integers(1, 4))]
    return Route(Problem(whole.X[:, columns], whole.y, whole.weights), columns, 4)


def identity(whole: Problem, rng) -> Identity:
    return Identity()


def chain(whole: Problem, rng) -> Chain:
    """The fit's order: the powers of ten, the groups, the route."""
    views = Chain.of(whole).then(scaling(whole, rng))
    views = views.then(groups(views.problem, rng))
    seen = views.problem
    return views.then(Route(seen, np.arange(seen.X.shape[1]), seen.X.shape[1]))


VIEWS = [scaling, groups, split, combined, subset, identity, chain]


def problem(rng) -> Problem:
    """Four positive features of magnitudes far from 1, a target with an offset, weights or none."""
    X = rng.uniform(0.5, 5.0, size=(30, 4)) * 10.0 ** rng.integers(-4, 7, size=4)
    y = rng.normal(size=30) * 10.0 ** rng.integers(-3, 5) + rng.choice([0.0, 1e6])
    weights = rng.uniform(0.5, 1.5, size=30) if rng.integers(2) else None
    return Problem(X, y, None if weights is None else weights / weights.mean())


def law(n_variables: int, rng) -> tuple[Skeleton, np.ndarray]:
    """A sum of one random term of each variable, constants in [-2, 2]."""
    terms = [
        [token.format(x=variable_token(k)) for token in TERMS[rng.integers(len(TERMS))]] for k in range(n_variables)
    ]
    tokens = [token for term in terms[:-1] for token in ("add", *term)] + terms[-1]
    skeleton = Skeleton(tuple(tokens))
    return skeleton, rng.uniform(0.5, 2, size=tokens.count("c"))


def read(skeleton: Skeleton) -> set[int]:
    return {index for token in skeleton.tokens if (index := variable_index(token)) is not None}


@pytest.mark.parametrize("make", VIEWS, ids=lambda make: make.__name__)
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_law_mapped_back_predicts_what_it_predicts_on_the_viewed_problem(make, seed):
    rng = np.random.default_rng(seed)
    whole = problem(rng)
    view = make(whole, rng)
    assert isinstance(view, View)
    viewed = view.forward(whole)
    skeleton, constants = law(viewed.X.shape[1], rng)
    loss = mse(skeleton.program, viewed.X, viewed.y, constants, viewed.weights)
    back = view.back(Fitted(skeleton, constants, loss), whole)
    with np.errstate(all="ignore"):
        expected = view.back_values(skeleton.program(viewed.X, constants), whole)
        predicted = back.skeleton.program(whole.X, back.constants)
    assert np.allclose(predicted, expected, rtol=1e-9, atol=1e-12 * np.max(np.abs(expected)))
    assert back.loss == pytest.approx(mse(lambda X, c: predicted, whole.X, whole.y, (), whole.weights), rel=1e-6)
    # the columns a law reads come back as columns of the whole problem that its law reads
    assert set(view.back_columns(np.array(sorted(read(skeleton)), dtype=int)).tolist()) <= read(back.skeleton)
    assert len(view.symbols(SYMBOLS)) == viewed.X.shape[1]


def test_back_rows_keeps_each_rows_origin_and_score():
    rng = np.random.default_rng(0)
    whole = problem(rng)
    view = subset(whole, rng)
    skeleton, constants = law(view.problem.X.shape[1], rng)
    rows = CandidateRows()
    rows.add(Fitted(skeleton, constants, 0.5), origin="beam", log_prob=-1.0)
    back = back_rows(view, rows, whole)
    assert back.origins == ["beam"] and back.log_probs == [-1.0] and back.losses == [0.5]
    assert back.skeletons == [view.back(Fitted(skeleton, constants, 0.5), whole).skeleton]


def test_a_chain_writes_the_networks_variables_and_columns_with_the_features():
    rng = np.random.default_rng(1)
    whole = problem(rng)
    views = chain(whole, rng)
    assert [str(symbol) for symbol in views.symbols(SYMBOLS)] == ["x0*x1/x2"]  # the one group; x3 takes no part
    assert views.back_columns(np.arange(1)).tolist() == [0, 1, 2]
    assert views.problems[0] is whole and len(views.problems) == len(views.views) + 1
