"""Token-level removal of neutral placeholders (nesymres_sklearn.skeleton.remove_placeholders)."""

import numpy as np
import pytest

from nesymres_sklearn.expression.placeholders import (
    EXISTING,
    attach_constants,
    count_constants,
    neutral_constants,
    remove_placeholders,
)
from nesymres_sklearn.expression.prefix import is_valid_prefix
from nesymres_sklearn.expression.program import PrefixProgram

SKELETONS = [
    ["x_1"],
    ["add", "sin", "x_1", "x_2"],
    ["mul", "c", "exp", "mul", "x_1", "x_2"],
    ["div", "ln", "x_1", "add", "x_3", "pow", "x_2", "2"],
    ["sqrt", "add", "x_1", "c"],
]


def test_drop_all_gives_the_skeleton_back():
    tokens, kinds = attach_constants(["add", "sin", "x_1", "x_2"])
    assert remove_placeholders(tokens, kinds, [False] * len(kinds)) == ["add", "sin", "x_1", "x_2"]
    assert remove_placeholders(tokens, kinds, [True] * len(kinds)) == tokens


def test_partial_removal_patterns():
    tokens, kinds = attach_constants(["sin", "x_1"])  # mul c sin add mul c x_1 c
    assert remove_placeholders(tokens, kinds, [True, False, False]) == ["mul", "c", "sin", "x_1"]
    assert remove_placeholders(tokens, kinds, [False, True, False]) == ["sin", "mul", "c", "x_1"]
    assert remove_placeholders(tokens, kinds, [False, False, True]) == ["sin", "add", "x_1", "c"]


def test_existing_placeholders_are_kept():
    tokens, kinds = attach_constants(["mul", "c", "x_1"])
    assert kinds[0] == EXISTING
    assert remove_placeholders(tokens, kinds, [False] * len(kinds)) == ["mul", "c", "x_1"]


@pytest.mark.parametrize("skeleton", SKELETONS)
def test_removal_equals_neutral_values(skeleton):
    rng = np.random.default_rng(0)
    tokens, kinds = attach_constants(skeleton)
    X = rng.uniform(0.5, 3.0, size=(50, 3))
    for _ in range(10):
        keep = rng.random(len(kinds)) < 0.5
        keep |= np.array([k == EXISTING for k in kinds])
        values = neutral_constants(kinds)
        values[keep] = rng.uniform(1, 5, size=keep.sum())
        reduced = remove_placeholders(tokens, kinds, keep)
        assert is_valid_prefix(reduced)
        assert count_constants(reduced) == keep.sum()
        full = PrefixProgram(tokens)(X, values)
        np.testing.assert_allclose(PrefixProgram(reduced)(X, values[keep]), full, rtol=1e-12)


def test_wrong_lengths_raise():
    tokens, kinds = attach_constants(["x_1"])
    with pytest.raises(ValueError):
        remove_placeholders(tokens, kinds, [True])
