import pickle

import numpy as np
import pytest
import sympy

from nesymres_sklearn.expression.prefix import InvalidPrefixError
from nesymres_sklearn.expression.skeleton import Skeleton


def test_invalid_tokens_are_rejected_when_made():
    with pytest.raises(InvalidPrefixError):
        Skeleton(("add", "x_1"))
    with pytest.raises(InvalidPrefixError):
        Skeleton(("x_1", "x_2"))


def test_key_is_equal_up_to_operand_order():
    a = Skeleton(("add", "mul", "c", "x_1", "sin", "x_2"))
    b = Skeleton(("add", "sin", "x_2", "mul", "x_1", "c"))
    assert a.key == b.key and a != b
    assert a.key != Skeleton(("add", "mul", "c", "x_1", "cos", "x_2")).key


def test_derived_forms_are_built_once():
    skeleton = Skeleton(("mul", "c", "sin", "x_1"))
    assert skeleton.program is skeleton.program
    assert skeleton.sympy is skeleton.sympy
    assert skeleton.n_constants == 1 and len(skeleton) == 4


def test_values_and_expression_agree():
    skeleton = Skeleton(("mul", "c", "sin", "x_2"))
    X = np.random.default_rng(0).uniform(-2, 2, size=(20, 2))
    np.testing.assert_allclose(skeleton.program(X, [2.5]), 2.5 * np.sin(X[:, 1]))
    a, b = sympy.symbols("a b", real=True)
    assert skeleton.expression([2.5], [a, b]) == 2.5 * sympy.sin(b)


def test_attached_constants_follow_the_paper_rule():
    attached = Skeleton(("sin", "x_1")).with_constants_attached()
    assert attached.tokens == ("mul", "c", "sin", "add", "mul", "c", "x_1", "c")
    assert attached.n_constants == 3


def test_pickles_with_its_compiled_program():
    skeleton = Skeleton(("add", "x_1", "c"))
    skeleton.program  # noqa: B018 (builds the cached program)
    restored = pickle.loads(pickle.dumps(skeleton))
    assert restored == skeleton
    np.testing.assert_allclose(restored.program(np.ones((3, 1)), [2.0]), 3.0)


@pytest.mark.parametrize(
    "name, printed",
    [("x0", "x0"), ("mass", "mass"), ("sin", "`sin`"), ("E", "`E`"), ("lambda", "`lambda`"), ("x-1", "`x-1`"),
     ("a b", "`a b`"), ("2", "`2`"), ("it`s", "`it``s`"), (3, "`3`")],
)  # fmt: skip
def test_feature_names_print_as_themselves_or_quoted(name, printed):
    from nesymres_sklearn.writing.export import feature_symbols, symbol_name

    assert symbol_name(name) == printed
    assert feature_symbols([name])[0].name == printed
