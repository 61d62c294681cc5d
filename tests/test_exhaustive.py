"""The exhaustive search of one-variable laws (``search/exhaustive.py``)."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.exactness import ROUNDING_FIT
from nesymres_sklearn.search.looks.exhaustive import N_KEPT, OPCODES, exhaustive_candidates, library
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings

LAWS = {
    "planck": (lambda p: 1 / (np.exp(p / (2 * np.pi)) - 1), (0.02, 0.97)),
    "planck_cubed": (lambda p: p**3 / (np.exp(p) - 1), (0.02, 0.97)),
    "tanh": (np.tanh, (0.02, 0.97)),
    "sech": (lambda p: 1 / np.cosh(p), (0.02, 0.97)),
    "lorentz": (lambda p: 1 / np.sqrt(1 - p**2), (0.1, 0.9)),
    "gauss": (lambda p: np.exp(-(p**2) / 2), (1.0, 3.0)),
    "rational": (lambda p: 1 + p / (1 - p / 3), (0.2, 2.0)),
}


def _text(lib, node: int) -> str:
    name = OPCODES[lib.ops[node]]
    if name in ("x", "1"):
        return name
    if lib.right[node] < 0:
        return f"{name}({_text(lib, lib.left[node])})"
    return f"{name}({_text(lib, lib.left[node])}, {_text(lib, lib.right[node])})"


@pytest.fixture(scope="module")
def texts():
    lib = library()
    return {_text(lib, node): node for node in range(len(lib))}


def test_the_library_keeps_one_expression_of_each_affine_class_and_every_operand(texts):
    lib = library()
    roots = {text for text, node in texts.items() if lib.roots[node]}
    assert {"x", "exp(x)", "tanh(x)", "inv(cosh(x))", "rsqrt(sub(1, sq(x)))", "inv(sub(1, exp(x)))"} <= roots
    # a*g + b of a smaller expression: not tried again, but kept as an operand
    assert "sub(exp(x), 1)" in texts and "sub(exp(x), 1)" not in roots
    assert "add(x, 1)" not in roots
    assert lib.sizes.max() == 5
    assert lib.roots.sum() > 10_000


def test_scaled_values_agree_with_the_shared_ones_and_their_slopes_with_finite_differences():
    lib = library()
    nodes = np.flatnonzero(lib.roots)
    x = np.linspace(0.3, 1.7, 9)
    shared = lib.evaluate(0.8 * x)[nodes]
    values, slopes = lib.evaluate_scaled(nodes, x, np.full(len(nodes), 0.8))
    np.testing.assert_allclose(values, shared, rtol=1e-12, equal_nan=True)

    def central_difference(step):
        ahead, _ = lib.evaluate_scaled(nodes, x, np.full(len(nodes), 0.8 + step))
        behind, _ = lib.evaluate_scaled(nodes, x, np.full(len(nodes), 0.8 - step))
        with np.errstate(all="ignore"):
            return (ahead - behind) / (2 * step)

    fine, coarse = central_difference(1e-6), central_difference(1e-5)
    with np.errstate(all="ignore"):  # where the two steps agree, the function is smooth there
        smooth = np.abs(fine - coarse) <= 1e-4 * (1 + np.abs(fine))
    assert smooth.mean() > 0.9
    np.testing.assert_allclose(slopes[smooth], fine[smooth], rtol=1e-4, atol=1e-4)


def test_a_node_written_as_tokens_has_the_library_s_values():
    lib = library()
    x = np.linspace(0.3, 1.7, 9)
    rng = np.random.default_rng(0)
    nodes = rng.choice(np.flatnonzero(lib.roots), size=200, replace=False)
    values, _ = lib.evaluate_scaled(nodes, x, np.full(len(nodes), 1.3))
    for node, expected in zip(nodes, values):
        skeleton = Skeleton(tuple(lib.tokens(int(node))))
        with np.errstate(all="ignore"):
            written = skeleton.program(x[:, None], np.full(skeleton.n_constants, 1.3))
        np.testing.assert_allclose(written, expected, rtol=1e-10, equal_nan=True)


@pytest.mark.parametrize("law", sorted(LAWS))
def test_laws_of_one_variable_that_the_network_misses_come_back_exact(law):
    function, (low, high) = LAWS[law]
    rng = np.random.default_rng(1)
    p = rng.uniform(low, high, 128)
    problem = Problem(p[:, None], function(p))
    found = exhaustive_candidates(problem)
    assert len(found) == 1  # the first exact one only
    skeleton, constants, loss = found[0]
    assert problem.is_exact_to_rounding(loss)
    fresh = rng.uniform(low, high, 50)
    np.testing.assert_allclose(skeleton.program(fresh[:, None], constants), function(fresh), rtol=1e-9)


def test_of_equal_forms_of_a_law_the_one_without_a_function_in_disguise_is_kept():
    rng = np.random.default_rng(2)
    p = rng.uniform(0.1, 3.0, 128)  # 1/(exp(p) - 1) is also coth(p/2)/2 - 1/2
    (skeleton, _, _), *_ = exhaustive_candidates(Problem(p[:, None], 1 / (np.exp(p) - 1)))
    assert not skeleton.sympy.has(sympy.tanh, sympy.coth)
    assert skeleton.sympy.has(sympy.exp)
    (skeleton, _, _), *_ = exhaustive_candidates(Problem(p[:, None], np.tanh(p)))  # not 1 - 2/(exp(2p) + 1)
    assert skeleton.sympy.has(sympy.tanh) and not skeleton.sympy.has(sympy.exp)


def test_without_an_exact_law_the_best_fits_are_all_kept():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.5, 3.0, 128)
    y = np.sin(p) + 0.05 * rng.normal(size=p.size)
    problem = Problem(p[:, None], y)
    found = exhaustive_candidates(problem)
    assert len(found) == N_KEPT
    losses = np.array([loss for _, _, loss in found])
    assert np.all(np.isfinite(losses)) and np.all(losses > ROUNDING_FIT * problem.scale)
    assert losses.min() < 0.005  # the noise's variance is 0.0025


def test_after_its_deadline_the_search_fits_nothing():
    rng = np.random.default_rng(4)
    p = rng.uniform(0.1, 1.0, 64)
    passed = Deadline(at=0.0, clock=lambda: 1.0)
    assert exhaustive_candidates(Problem(p[:, None], np.tanh(p)), passed) == []


def test_a_deadline_that_passes_during_the_steps_stops_them_and_the_refits():
    rng = np.random.default_rng(5)
    p = rng.uniform(0.1, 1.0, 64)
    calls = []

    def clock():  # passes after the grid's 15 checks and two steps
        calls.append(None)
        return float(len(calls) > 17)

    problem = Problem(p[:, None], np.tanh(p))
    found = exhaustive_candidates(problem, Deadline(at=0.5, clock=clock))
    assert found == []  # the deadline passed before the first refit
    assert 17 < len(calls) < 25  # without it: 15 grid scales, 8 steps and 12 refits


def _tiny_regressor(model, **settings):
    from nesymres_sklearn import NeSymReSRegressor

    return NeSymReSRegressor(
        model=str(model), beam_size=4, random_state=0, refine=None, search_settings=SearchSettings(**settings)
    )


@pytest.mark.slow
@pytest.mark.parametrize("exhaustive", [True, False])
def test_the_estimator_takes_the_exhaustive_look_when_the_network_reads_one_variable(tiny_model, exhaustive):
    rng = np.random.default_rng(6)
    X = rng.uniform(0.02, 0.97, (128, 1))
    y = 1 / (np.exp(X[:, 0] / (2 * np.pi)) - 1)
    reg = _tiny_regressor(tiny_model, exhaustive=exhaustive).fit(X, y)
    assert ("exhaustive" in set(reg.equations_["origin"])) == exhaustive
    if exhaustive:
        x0 = sorted(reg.expression_.free_symbols, key=str)[0]
        assert sympy.simplify(reg.expression_ - 1 / (sympy.exp(x0 / (2 * sympy.pi)) - 1)) == 0  # 1/(2*pi) read exactly
        assert reg.equations_.loc[reg.best_index_, "origin"] == "exhaustive"
        assert reg.timings_["exhaustive"] > 0
    else:
        assert reg.timings_["exhaustive"] == 0


@pytest.mark.slow
def test_the_exhaustive_look_is_not_taken_after_a_look_that_is_exact(tiny_model):
    rng = np.random.default_rng(7)
    X = rng.uniform(-2, 2, (128, 1))
    y = 1 / (1 + X[:, 0] ** 2)  # 1/y is the exact polynomial of the reciprocal look (and y an identity)
    reg = _tiny_regressor(tiny_model, exhaustive=True, reciprocal=True, identities=False).fit(X, y)
    assert reg.equations_.loc[reg.best_index_, "origin"] == "reciprocal"
    assert reg.timings_["exhaustive"] == 0 and "exhaustive" not in set(reg.equations_["origin"])


def test_an_approximation_passes_as_exact_but_not_as_exact_to_rounding():
    x = np.linspace(0.0, 0.15, 128)
    problem = Problem(x[:, None], np.exp(x) - 1)
    approximation = np.polyval(np.polyfit(x, problem.y, 4), x)  # a Taylor-like polynomial
    loss = float(np.mean((approximation - problem.y) ** 2))
    assert problem.is_exact(loss) and not problem.is_exact_to_rounding(loss)
    assert problem.is_exact_to_rounding(float(np.mean((np.expm1(x) - problem.y) ** 2)))


@pytest.mark.parametrize("columns, taken", [(1, True), (2, False)])
def test_the_exhaustive_look_needs_one_variable(columns, taken):
    """One plan: the look applies to what the network reads, whatever the budget."""
    from types import SimpleNamespace

    from nesymres_sklearn.search.looks import SECOND_LOOKS
    from nesymres_sklearn.search.settings import SearchRequest

    route = SimpleNamespace(problem=Problem(np.ones((8, columns)), np.arange(8.0)))
    (look,) = [look for look in SECOND_LOOKS if look.name == "exhaustive"]
    assert look.applies(route, SearchRequest()) == taken
    assert not look.applies(route, SearchRequest(settings=SearchSettings(exhaustive=False)))
    assert not look.decodes  # not the network's: the time left need not hold a decoding


def test_equal_forms_are_ordered_by_functions_in_disguise_then_tokens_then_the_power_outside():
    from nesymres_sklearn.search.looks.exhaustive import _power_tokens, simplicity

    def written(k, *inner):
        return Skeleton(("add", "mul", "c", *_power_tokens(k), *inner, "c"))

    lorentz = ("pow", "sqrt", "add", "1", "mul", "-1", "pow", "mul", "c", "x_1", "2", "-1")
    flipped = ("pow", "sqrt", "add", "pow", "mul", "c", "x_1", "2", "mul", "-1", "1", "-1")
    assert simplicity(written(-2, *lorentz)) == (0, 20, 2)
    assert simplicity(written(-2, *lorentz)) < simplicity(written(3, *flipped))  # 1/(p**2*sqrt(1 - p**2)) first
    assert simplicity(written(1, "exp", "mul", "c", "x_1")) == (0, 10, 1)
    assert simplicity(written(0, "pow", "tanh", "mul", "c", "x_1", "-1")) > simplicity(
        written(0, "pow", "add", "exp", "mul", "c", "x_1", "mul", "-1", "1", "-1")
    )  # coth(x) after 1/(exp(x) - 1), though longer
