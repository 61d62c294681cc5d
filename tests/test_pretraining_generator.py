"""The equation generator: frequencies, variable order, simplification, determinism."""

from collections import Counter

import numpy as np
import pytest

from nesymres_sklearn.expression.placeholders import attach_constants
from nesymres_sklearn.expression.prefix import is_valid_prefix, prefix_to_sympy
from nesymres_sklearn.expression.tokens import variable_index
from nesymres_sklearn.network.vocabulary import Vocabulary
from pretraining import generator
from pretraining.generator import (
    GENERATOR_ARITY,
    PAPER_OPERATOR_WEIGHTS,
    GeneratorConfig,
    arity,
    compact_variables,
    generate_skeletons,
    sample_tree,
    satisfies_variable_order,
    simplify_to_skeleton,
    tree_to_prefix,
)


def _chi_square_ok(observed: dict, expected_probabilities: dict, n: int, critical: float) -> float:
    statistic = sum((observed.get(k, 0) - n * p) ** 2 / (n * p) for k, p in expected_probabilities.items())
    assert statistic < critical, (statistic, observed)
    return statistic


@pytest.fixture(scope="module")
def trees():
    rng = np.random.default_rng(123)
    config = GeneratorConfig()
    return [sample_tree(rng, config) for _ in range(6000)]


def test_operator_frequencies_match_weights(trees):
    counts = Counter(t for tree in trees for t in tree if arity(t))
    total = sum(PAPER_OPERATOR_WEIGHTS.values())
    expected = {op: w / total for op, w in PAPER_OPERATOR_WEIGHTS.items()}
    # 11 degrees of freedom; 31.26 is the 0.999 quantile.
    _chi_square_ok(counts, expected, sum(counts.values()), 31.26)


def test_weights_are_the_appendix_table_in_its_order():
    # sample_tree indexes this order with its draws: the order fixes the generated data.
    assert list(PAPER_OPERATOR_WEIGHTS.items()) == [
        ("add", 10),
        ("mul", 10),
        ("sub", 5),
        ("div", 5),
        ("sqrt", 4),
        ("pow", 4),
        ("ln", 4),
        ("exp", 4),
        ("sin", 4),
        ("cos", 4),
        ("tan", 4),
        ("asin", 1),
    ]
    assert list(GeneratorConfig().operator_weights) == list(PAPER_OPERATOR_WEIGHTS)


def test_arities_are_the_tables_except_unary_pow_and_sub():
    assert GENERATOR_ARITY == {"pow": 1, "sub": 2}
    assert [arity(t) for t in ("add", "mul", "sub", "div", "pow", "sqrt", "asin", "x_1", "3")] == [
        2,
        2,
        2,
        2,
        1,
        1,
        1,
        0,
        0,
    ]
    with pytest.raises(ValueError, match="Unknown operators"):
        GeneratorConfig(operator_weights={"add": 1, "gamma": 1})


def test_same_seed_gives_the_same_trees_as_before():
    """Trees of a fixed seed, recorded before the weights came from the operator table."""
    rng = np.random.default_rng(2024)
    config = GeneratorConfig()
    trees = [sample_tree(rng, config) for _ in range(3)]
    assert trees == [
        ["mul", "x_3", "mul", "x_3", "x_1"],
        ["sub", "x_2", "x_2"],
        ["sqrt", "add", "div", "tan", "x_1", "sin", "x_3", "x_1"],
    ]
    prefix = tree_to_prefix(compact_variables(sample_tree(rng, config)), rng, config)
    assert prefix == ["mul", "mul", "x_1", "mul", "x_1", "2", "sin", "mul", "x_2", "x_1"]


def test_leaf_frequencies_match_p_variable(trees):
    leaves = [t for tree in trees for t in tree if not arity(t)]
    share = np.mean([variable_index(t) is not None for t in leaves])
    n = len(leaves)
    assert abs(share - 0.8) < 4 * np.sqrt(0.8 * 0.2 / n)
    integers = Counter(t for t in leaves if variable_index(t) is None)
    assert set(integers) == {"1", "2", "3", "4", "5"}


def test_trees_have_at_most_five_operators(trees):
    n_operators = Counter(sum(1 for t in tree if arity(t)) for tree in trees)
    assert set(n_operators) == {1, 2, 3, 4, 5}


def test_tree_prefix_is_valid_and_rewrites_sub_and_pow():
    rng = np.random.default_rng(0)
    config = GeneratorConfig()
    prefix = tree_to_prefix(["sub", "x_1", "pow", "x_2"], rng, config)
    assert prefix[:5] == ["add", "x_1", "mul", "-1", "pow"]
    assert prefix[5] == "x_2" and prefix[6] in ("2", "3")
    for _ in range(200):
        assert is_valid_prefix(tree_to_prefix(sample_tree(rng, config), rng, config))


def test_compact_variables_enforces_order():
    assert compact_variables(["add", "x_2", "x_3"]) == ["add", "x_1", "x_2"]
    assert compact_variables(["mul", "x_3", "x_1"]) == ["mul", "x_2", "x_1"]
    assert satisfies_variable_order(["add", "x_1", "x_2"])
    assert not satisfies_variable_order(["add", "x_1", "x_3"])


@pytest.fixture(scope="module")
def generated():
    # A generous time limit: a wall-clock timeout would make the result load-dependent.
    # 60 trees: their full simplification is most of this module's time.
    return generate_skeletons(60, 7, GeneratorConfig(simplify_timeout=60))


@pytest.mark.slow
def test_skeletons_respect_variable_order_and_vocabulary(generated):
    skeletons, rejected = generated
    vocab = Vocabulary.default(3)
    assert len(skeletons) > 40
    for skeleton in skeletons:
        assert satisfies_variable_order(skeleton.tokens)
        assert is_valid_prefix(skeleton.attached)
        vocab.encode(skeleton.attached)
        assert (skeleton.attached, skeleton.kinds) == tuple(attach_constants(skeleton.tokens))
    assert set(rejected) <= {"timeout", "no_variable", "unwritable", "exponent", "too_long"}


def test_generation_is_deterministic(generated):
    again = generate_skeletons(60, 7, GeneratorConfig(simplify_timeout=60))
    assert [s.attached for s in again[0]] == [s.attached for s in generated[0]]
    assert again[1] == generated[1]


def test_simplification_and_rejections():
    config = GeneratorConfig()
    skeleton = simplify_to_skeleton(["add", "x_1", "x_1"], config)
    assert skeleton.tokens == ["mul", "2", "x_1"]
    assert simplify_to_skeleton(["add", "x_1", "mul", "-1", "x_1"], config) == "no_variable"
    assert simplify_to_skeleton(["div", "x_1", "0"], config) == "unwritable"
    assert simplify_to_skeleton(["pow", "pow", "x_1", "3", "3"], config) == "exponent"
    # A number without a token becomes a placeholder.
    skeleton = simplify_to_skeleton(["add", "x_1", "add", "5", "4"], config)
    assert skeleton.tokens == ["add", "c", "x_1"] and skeleton.kinds[0] == "existing"
    expr = prefix_to_sympy(skeleton.tokens)
    assert len(expr.free_symbols) == 2


def test_a_simplification_past_its_time_limit_is_a_timeout():
    config = GeneratorConfig(simplification="full", simplify_timeout=1e-4)
    assert simplify_to_skeleton(["add", "pow", "sin", "x_1", "2", "pow", "cos", "x_1", "2"], config) == "timeout"


def test_too_long_is_rejected():
    config = GeneratorConfig(max_length=20, simplify_timeout=60)  # its simplification takes 1 s on a busy machine
    prefix = ["add", "x_1", "add", "x_2", "add", "x_3", "sin", "x_1"]
    assert simplify_to_skeleton(prefix, config) == "too_long"


def test_automatic_simplification_keeps_construction_rules_only():
    full, automatic = GeneratorConfig(), GeneratorConfig(simplification="automatic")
    # Rules SymPy applies on construction hold in both modes.
    for config in (full, automatic):
        assert simplify_to_skeleton(["add", "x_1", "x_1"], config).tokens == ["mul", "2", "x_1"]
        assert simplify_to_skeleton(["add", "x_1", "mul", "-1", "x_1"], config) == "no_variable"
    # A trigonometric identity needs sympy.simplify.
    identity = ["add", "pow", "sin", "x_1", "2", "pow", "cos", "x_1", "2"]
    assert simplify_to_skeleton(identity, full) == "no_variable"
    kept = simplify_to_skeleton(identity, automatic).tokens  # in SymPy's canonical order
    assert sorted(kept) == sorted(identity) and kept.count("pow") == 2


def test_unknown_simplification_is_refused():
    with pytest.raises(ValueError, match="Unknown simplification 'fast'"):
        GeneratorConfig(simplification="fast")


def test_memoised_skeleton_equals_a_fresh_simplification_and_skips_timeouts(monkeypatch):
    # Banks built in this process (n_jobs=1) by other tests fill the memo: start empty.
    monkeypatch.setattr(generator, "_MEMO", {})
    config = GeneratorConfig(simplification="automatic")
    prefix = ["add", "x_1", "mul", "x_2", "sin", "x_1"]
    first = generator.memoised_skeleton(prefix, config)
    assert first == simplify_to_skeleton(prefix, config)
    calls = []
    monkeypatch.setattr(generator, "simplify_to_skeleton", lambda p, c: calls.append(p) or "timeout")
    assert generator.memoised_skeleton(prefix, config) is first and calls == []
    other = ["add", "x_1", "x_2"]
    assert generator.memoised_skeleton(other, config) == "timeout"
    assert generator.memoised_skeleton(other, config) == "timeout" and len(calls) == 2
    # Other settings are another entry.
    assert generator.memoised_skeleton(prefix, GeneratorConfig(simplification="full")) == "timeout"


def _width(tree) -> int:
    return len({i for t in tree if (i := variable_index(t)) is not None})


def test_width_weights_draw_the_laws_number_of_variables_first():
    config = GeneratorConfig(n_variables=8, width_weights=(2, 2, 2, 1, 1, 1, 1, 1))
    rng = np.random.default_rng(5)
    widths = Counter(_width(sample_tree(rng, config)) for _ in range(3000))
    expected = {k: w / 11 for k, w in enumerate(config.width_weights, start=1)}
    # 7 degrees of freedom; 24.32 is the 0.999 quantile.
    _chi_square_ok(widths, expected, 3000, 24.32)


def test_a_law_of_k_variables_uses_each_of_the_first_k_and_no_other():
    config = GeneratorConfig(n_variables=8, width_weights=(0,) * 7 + (1,))
    rng = np.random.default_rng(6)
    for _ in range(200):
        tree = sample_tree(rng, config)
        assert {variable_index(t) for t in tree if variable_index(t) is not None} == set(range(8))
        assert sum(arity(t) for t in tree) + 1 == len(tree)  # a whole tree


def test_without_width_weights_the_paper_draw_and_settings_are_unchanged():
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    paper, widths = GeneratorConfig(), GeneratorConfig(width_weights=(1, 1, 1))
    assert "width_weights" not in paper.to_dict()
    assert widths.to_dict()["width_weights"] == (1.0, 1.0, 1.0)
    trees = [sample_tree(rng_a, paper) for _ in range(300)]
    assert Counter(map(_width, trees))[3] < 0.25 * len(trees)
    assert Counter(_width(sample_tree(rng_b, widths)) for _ in range(300))[3] > 0.25 * 300


@pytest.mark.parametrize("weights", [(1, 1), (1, -1, 1), (0, 0, 0)])
def test_width_weights_are_one_non_negative_weight_per_number_of_variables(weights):
    with pytest.raises(ValueError, match="width_weights"):
        GeneratorConfig(width_weights=weights)
