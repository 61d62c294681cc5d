"""The printed law is the law (issue 53, deliverable 1): every rewrite between a fitted
program and the equation the ``Writer`` prints (scaling back, SymPy's evaluation,
folding, roots, absolute values, exact and named constants, shared scales, rounding)
gives an expression equal to the program wherever the program is defined, far outside
any training box too: the property is checked on random skeletons, constants, exact
spellings and scalings, at points over wide ranges of both signs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.fitted import Fitted
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.writing.export import evaluate
from nesymres_sklearn.writing.readable import simple_numbers
from nesymres_sklearn.writing.signs import signed
from nesymres_sklearn.writing.writer import Writer

x0, x1 = SYMBOLS = sympy.symbols("x0 x1", real=True)
UNARY = ("sin", "cos", "exp", "ln", "sqrt", "abs", "tanh")
BINARY = ("add", "mul", "div")
LEAVES = ("x_1", "x_2", "c", "c", "2", "-1", "3")
# Numbers that a fit lands near and the readable constants re-spell.
SPECIAL = (0.5, 2.0, 1 / 3, np.pi, np.pi / 2, 1 / np.pi, 1 / (2 * np.pi), np.e, np.sqrt(2), 0.3989422804014327)
SCALES = (1.0, 1.0, 1e-3, 1e3, 1e-8, 1e8)
# Where the two agree: rounding of up to a few dozen operations, and far from overflow.
RTOL, LARGEST, NUDGE = 1e-7, 1e100, 1e-10
# Values that cancel to zero agree with rounding's leftovers to this (times y's scale).
ATOL = 1e-6
# Beyond this magnitude, a raw-feature power such as x**31 at 1e10 may overflow float64.
OVERFLOW_RISK = 1e30


def trees(depth: int) -> st.SearchStrategy:
    leaf = st.sampled_from(LEAVES).map(lambda token: (token,))
    if depth == 0:
        return leaf
    smaller = trees(depth - 1)
    unary = st.tuples(st.sampled_from(UNARY), smaller).map(lambda t: (t[0], *t[1]))
    binary = st.tuples(st.sampled_from(BINARY), smaller, smaller).map(lambda t: (t[0], *t[1], *t[2]))
    power = st.tuples(smaller, st.sampled_from(("2", "3", "-1", "-2", "c"))).map(lambda t: ("pow", *t[0], t[1]))
    return st.one_of(leaf, unary, binary, power)


constant = st.one_of(
    st.floats(-20, 20, allow_nan=False).filter(lambda v: abs(v) > 1e-3),
    st.tuples(st.sampled_from(SPECIAL), st.sampled_from((1, -1, 2, -3)), st.floats(-1e-10, 1e-10)).map(
        lambda t: t[0] * t[1] * (1 + t[2])
    ),
)


@st.composite
def fitted_rows(draw):
    tokens = draw(trees(3))
    skeleton = Skeleton(tokens)
    values = np.array([draw(constant) for _ in range(skeleton.n_constants)], dtype=np.float64)
    exact = []  # as exact_constants re-spells them: a simple number close enough, or the float
    for i, value in enumerate(values):
        numbers = simple_numbers(float(value))[2:]
        if numbers and draw(st.booleans()):
            exact.append(draw(st.sampled_from(numbers)))
            values[i] = float(exact[-1])
        else:
            exact.append(float(value))
    scaling = Scaling(tuple(draw(st.sampled_from(SCALES)) for _ in SYMBOLS), draw(st.sampled_from(SCALES)))
    signs = tuple(draw(st.sampled_from((-1.0, 1.0, 0.0))) for _ in SYMBOLS)  # of a training box (0: both)
    return skeleton, values, exact, scaling, signs


def points(scaling: Scaling, seed: int) -> np.ndarray:
    """Points of both signs over wide ranges (a training box would be a small part)."""
    rng = np.random.default_rng(seed)
    magnitudes = 10.0 ** rng.uniform(-2, 2, size=(64, 2))
    return rng.choice([-1.0, 1.0], size=(64, 2)) * magnitudes * np.asarray(scaling.x_scales)


def training_box(scaling: Scaling, signs: tuple[float, ...], seed: int) -> np.ndarray:
    """Training points in the search's units: each feature of one sign (or both, for 0) in [0.5, 5]."""
    rng = np.random.default_rng(seed + 1)
    X = rng.uniform(0.5, 5, size=(32, 2)) * np.where(np.array(signs) == 0, rng.choice([-1.0, 1.0], (32, 2)), signs)
    return X


def assert_same_law(written: sympy.Expr, skeleton: Skeleton, values: np.ndarray, scaling: Scaling, X: np.ndarray):
    """``written`` equals the program wherever the program is defined (finite and below
    ``LARGEST``), to rounding: the tolerance grows with how much the program moves when
    its inputs and constants move by ``NUDGE`` (``sin(1e15*x**5)`` has no digits to spare)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        program = scaling.unscale_y(evaluate(skeleton, values, scaling.scale_X(X)))
        defined = np.isfinite(program) & (np.abs(program) < LARGEST)
        if not defined.any():  # nowhere defined: nothing to compare
            return
        moved = [
            scaling.unscale_y(evaluate(skeleton, values * (1 + NUDGE), scaling.scale_X(X))),
            scaling.unscale_y(evaluate(skeleton, values, scaling.scale_X(X * (1 + NUDGE)))),
        ]
        sensitivity = np.nan_to_num(np.fmax(*(np.abs(m - program) for m in moved)), nan=0.0, posinf=np.inf)
        law = np.broadcast_to(sympy.lambdify(SYMBOLS, written, "numpy")(X[:, 0], X[:, 1]), program.shape)
        law = np.real_if_close(law)
        if np.iscomplexobj(law):
            law = np.where(np.abs(law.imag) > 0, np.nan, law.real)
        near = np.abs(law - program) <= RTOL * (np.abs(program) + ATOL * scaling.y_scale) + 1e3 * sensitivity
        # the written law over the raw features may overflow in a power that the scaled program keeps in range
        overflow = np.isinf(law) & (np.abs(program) > OVERFLOW_RISK)
    wrong = defined & ~near & ~overflow
    assert not wrong.any(), (
        f"{written} differs from {skeleton} {list(values)} (scaling {scaling}) at {X[wrong][:3].tolist()}: "
        f"{law[wrong][:3]} instead of {program[wrong][:3]}"
    )


@settings(max_examples=500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(fitted_rows(), st.integers(0, 2**16))
def test_the_written_law_is_the_fitted_program(row, seed):
    skeleton, values, exact, scaling, signs = row
    writer = Writer(scaling, tuple(SYMBOLS))
    X = points(scaling, seed)
    assert_same_law(writer(skeleton, values), skeleton, values, scaling, X)  # every row as fitted
    # the selected row: its |f| written f or -f where f has one sign on the training box,
    # the same program there; then written as is, the same law everywhere
    box = training_box(scaling, signs, seed)
    signed_skeleton, signed_values, signed_exact = signed(skeleton, values, exact, box)
    with np.errstate(all="ignore"):
        on_box = evaluate(skeleton, values, box), evaluate(signed_skeleton, signed_values, box)
    np.testing.assert_allclose(on_box[1], on_box[0], rtol=1e-12, equal_nan=True)
    assert_same_law(writer(signed_skeleton, signed_values, signed_exact), signed_skeleton, signed_values, scaling, X)


@pytest.mark.parametrize(
    "tokens, expected",
    [
        (("sin", "sqrt", "pow", "x_1", "2"), ("sin", "x_1")),
        (("mul", "abs", "x_1", "abs", "x_2"), ("mul", "x_1", "mul", "-1", "x_2")),
        (("sqrt", "pow", "add", "x_2", "2", "2"), ("sqrt", "pow", "add", "x_2", "2", "2")),  # both signs
    ],
)
def test_an_absolute_value_of_one_sign_on_the_data_is_written_signed(tokens, expected):
    box = np.column_stack([np.linspace(1, 3, 9), -np.linspace(1, 4, 9)])  # x_1 > 0, x_2 < 0
    assert signed(Skeleton(tokens), np.array([]), [], box)[0].tokens == expected


def test_the_exponent_one_half_of_a_square_goes_with_it():
    box = np.column_stack([np.linspace(1, 3, 9), np.linspace(1, 4, 9)])
    skeleton = Skeleton(("mul", "c", "pow", "pow", "add", "x_1", "c", "2", "c"))
    found = signed(skeleton, np.array([2.0, 0.5, 0.5]), [2.0, 0.5, sympy.Rational(1, 2)], box)
    assert found[0].tokens == ("mul", "c", "add", "x_1", "c")
    assert list(found[1]) == [2.0, 0.5] and found[2] == [2.0, 0.5]
    unsure = signed(skeleton, np.array([2.0, 0.5, 0.5]), [2.0, 0.5, 0.5], box)  # 0.5 a float: a fitted power
    assert unsure[0] == skeleton


@pytest.mark.parametrize(
    "tokens, values",
    [
        (("mul", "x_1", "sqrt", "add", "c", "x_2"), [1.0]),
        (("div", "x_1", "pow", "x_2", "-1"), []),
        (("mul", "abs", "x_1", "abs", "x_2"), []),
    ],
)
def test_forms_that_the_features_signs_would_change(tokens, values):
    """Before issue 53, features positive on the data had |x| written x and odd powers
    moved into roots, in print only: a different law where a feature is negative."""
    scaling, skeleton = Scaling.identity(2), Skeleton(tokens)
    written = Writer(scaling, tuple(SYMBOLS))(skeleton, np.array(values), list(values))
    assert_same_law(written, skeleton, np.array(values), scaling, points(scaling, 0))


def test_predict_follows_the_printed_law_outside_the_data(monkeypatch):
    """sqrt(x0**2) (SymPy's |x0|) of a feature positive on the data, as the network
    proposes it: printed x0, and predicted x0 (before issue 53, printed x0 and predicted
    |x0|, so the two differed wherever x0 < 0)."""
    from nesymres_sklearn import NeSymReSRegressor, neural_search
    from nesymres_sklearn.search.fitted import CandidateRows

    skeleton = Skeleton(("mul", "sqrt", "pow", "x_1", "2", "cos", "x_2"))

    def network_rows(network, problem, route, request, budget):
        rows = CandidateRows()
        rows.add(Fitted(skeleton, np.array([]), 0.0), log_prob=0.0, origin="beam")
        return neural_search.NetworkRows(rows, {})

    monkeypatch.setattr(neural_search, "network_rows", network_rows)
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(40, 2))
    reg = NeSymReSRegressor(beam_size=1, refine=None, random_state=0).fit(X, X[:, 0] * np.cos(X[:, 1]))
    assert reg.expression_ == x0 * sympy.cos(x1)
    wide = points(Scaling.identity(2), 1)
    np.testing.assert_allclose(reg.predict(wide), wide[:, 0] * np.cos(wide[:, 1]), rtol=1e-12)
