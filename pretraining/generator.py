"""Random equation skeletons as in section 4.2 and appendix B of the paper.

A skeleton is sampled in four steps:

1. a unary-binary tree with 1..``max_operators`` operators, each drawn from the
   appendix table of unnormalised weights and placed on a uniformly chosen open slot
   of the growing tree; leaves are a variable (probability 0.8) or an integer (0.2);
2. the variables are renamed so that ``x_2`` only occurs with ``x_1`` and ``x_3`` only
   with ``x_1`` and ``x_2`` (the k-th smallest variable index used becomes ``x_k``);
3. the tree, written in the vocabulary's prefix notation, is simplified with
   :func:`sympy.simplify` under a per-equation time limit (``simplification="full"``,
   the paper's choice) or only by SymPy's automatic evaluation on construction
   (``"automatic"``: like terms, powers of equal bases, numbers folded; about 25x
   faster and the same skeleton for 95% of trees, see ``docs/pretraining.md``);
4. numbers the vocabulary cannot write become the placeholder ``c`` and placeholders
   are attached with
   :func:`nesymres_sklearn.expression.placeholders.attach_constants`, the rule
   inference uses.

The generator's ``sub`` is written ``add a mul -1 b``. The table's *Pow* is a unary
operator raising its argument to an integer exponent drawn from ``pow_exponents``
(default 2 or 3), written ``pow a k``: this keeps every exponent a vocabulary integer
after simplification (nested powers that simplify to an unwritable exponent are
rejected with reason ``"exponent"``).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np
import sympy

from nesymres_sklearn.expression.operators import OPERATORS, PAPER_OPERATORS
from nesymres_sklearn.expression.placeholders import attach_constants
from nesymres_sklearn.expression.prefix import prefix_to_sympy, skeletonize
from nesymres_sklearn.expression.tokens import INTEGERS, variable_index, variable_token

from .time_limit import TimeLimitExceeded, call_with_time_limit

logger = logging.getLogger(__name__)

#: Where the generator's operators differ from the table's
#: (:data:`~nesymres_sklearn.expression.operators.OPERATORS`): its ``pow`` is unary, the
#: exponent being drawn from ``GeneratorConfig.pow_exponents`` rather than generated, and
#: ``sub`` is a generator-only composite, written ``add a mul -1 b``.
GENERATOR_ARITY = {"pow": 1, "sub": 2}
#: Weights of the generator-only operators (the table holds the others').
_GENERATOR_ONLY_WEIGHTS = {"sub": 5}
# The order of the appendix table. ``sample_tree`` indexes this order with the drawn
# numbers, so it fixes the generated data: reordering it changes every bank. Operators
# given a weight in the table later are appended after these.
_SAMPLING_ORDER = ("add", "mul", "sub", "div", "sqrt", "pow", "ln", "exp", "sin", "cos", "tan", "asin")


def _paper_operator_weights() -> dict:
    weights = {token: op.generator_weight for token, op in OPERATORS.items() if op.generator_weight}
    weights.update(_GENERATOR_ONLY_WEIGHTS)
    ordered = {token: weights[token] for token in _SAMPLING_ORDER if token in weights}
    ordered.update((token, weight) for token, weight in weights.items() if token not in ordered)
    return ordered


#: Unnormalised probabilities of the appendix table (operator -> weight): the table's
#: ``generator_weight`` of each operator, and ``sub``.
PAPER_OPERATOR_WEIGHTS = _paper_operator_weights()
#: Operators ``GeneratorConfig.operator_weights`` may name: the paper's tokens and ``sub``.
GENERATOR_OPERATORS = PAPER_OPERATORS + tuple(_GENERATOR_ONLY_WEIGHTS)

#: Values of ``GeneratorConfig.simplification``.
SIMPLIFICATIONS = ("full", "automatic")

#: Why a sampled tree did not become a skeleton.
REJECTION_REASONS = ("timeout", "no_variable", "unwritable", "exponent", "too_long")

# The longest target of a skeleton with ``n`` tokens is ``n + 12`` (three sampled
# placeholders, at most 4 extra tokens each) plus start and end tokens.
TARGET_OVERHEAD = 3 * 4 + 2

#: Trees drawn at most for a law of ``k`` variables to have ``k`` leaves (then fewer variables).
MAX_SHAPE_DRAWS = 100


@dataclass
class GeneratorConfig:
    """Settings of the skeleton generator (defaults: the paper's).

    Parameters
    ----------
    n_variables : int, default=3
        Number of input variables ``x_1..x_n``.
    max_operators : int, default=5
        Trees have between ``min_operators`` and ``max_operators`` operators, the count
        drawn uniformly.
    min_operators : int, default=1
    operator_weights : dict, default=PAPER_OPERATOR_WEIGHTS
        Unnormalised probability of each operator being sampled as a parent node.
    p_variable : float, default=0.8
        Probability that a leaf is a variable; otherwise it is an integer.
    integer_leaves : tuple of int, default=(1, 2, 3, 4, 5)
        Integers a leaf can be, drawn uniformly.
    pow_exponents : tuple of int, default=(2, 3)
        Exponents of the unary ``pow`` operator, drawn uniformly.
    simplification : {"full", "automatic"}, default="full"
        "full" runs :func:`sympy.simplify` (the paper); "automatic" keeps SymPy's
        evaluation on construction only.
    simplify_timeout : float, default=1.0
        Seconds allowed per equation to build and simplify the SymPy expression.
    max_length : int, default=60
        Model sequence length; skeletons whose longest possible target (with start,
        end and three sampled placeholders) would not fit are rejected.
    width_weights : tuple of float or None, default=None
        ``None`` (the paper's): each variable leaf draws its variable uniformly, so wide
        laws are rare. Otherwise the unnormalised probability of a law of ``1..n_variables``
        variables: a tree draws its width ``k`` first (and is redrawn until it has ``k``
        leaves), ``k`` of its leaves get one variable each, and its other variable leaves
        draw among those ``k``; it has up to ``max_operators + k - 1`` operators.
    """

    n_variables: int = 3
    max_operators: int = 5
    min_operators: int = 1
    operator_weights: dict = field(default_factory=lambda: dict(PAPER_OPERATOR_WEIGHTS))
    p_variable: float = 0.8
    integer_leaves: tuple = (1, 2, 3, 4, 5)
    pow_exponents: tuple = (2, 3)
    simplification: str = "full"
    simplify_timeout: float = 1.0
    max_length: int = 60
    width_weights: tuple | None = None

    def __post_init__(self):
        self.operator_weights = dict(self.operator_weights)
        self.integer_leaves = tuple(int(i) for i in self.integer_leaves)
        self.pow_exponents = tuple(int(i) for i in self.pow_exponents)
        unknown = set(self.operator_weights) - set(GENERATOR_OPERATORS)
        if unknown:
            raise ValueError(f"Unknown operators {sorted(unknown)}.")
        if self.simplification not in SIMPLIFICATIONS:
            raise ValueError(f"Unknown simplification {self.simplification!r}; choose from {SIMPLIFICATIONS}.")
        if not 1 <= self.min_operators <= self.max_operators:
            raise ValueError("Need 1 <= min_operators <= max_operators.")
        if not 0.0 < self.p_variable <= 1.0:
            raise ValueError("p_variable must be in (0, 1].")
        bad = [k for k in self.integer_leaves + self.pow_exponents if k not in INTEGERS]
        if bad:
            raise ValueError(f"Integers {bad} are not vocabulary tokens {INTEGERS}.")
        if self.width_weights is not None:
            self.width_weights = tuple(float(w) for w in self.width_weights)
            weights = self.width_weights
            if len(weights) != self.n_variables or min(weights) < 0 or not any(weights):
                raise ValueError(
                    f"width_weights needs {self.n_variables} non-negative weights (laws of 1..{self.n_variables} "
                    f"variables), not all zero; got {self.width_weights}."
                )

    def to_dict(self) -> dict:
        """The settings; ``width_weights`` only when set, so banks of the paper's draw keep their settings."""
        settings = asdict(self)
        if self.width_weights is None:
            del settings["width_weights"]
        return settings

    @property
    def operators(self) -> list[str]:
        return list(self.operator_weights)

    @property
    def probabilities(self) -> np.ndarray:
        weights = np.array(list(self.operator_weights.values()), dtype=np.float64)
        return weights / weights.sum()


def arity(token: str) -> int:
    """Arity of a generator token (0 for leaves): the table's, except :data:`GENERATOR_ARITY`."""
    if token in GENERATOR_ARITY:
        return GENERATOR_ARITY[token]
    operator = OPERATORS.get(token)
    return operator.arity if operator is not None else 0


def sample_tree(rng: np.random.Generator, config: GeneratorConfig) -> list[str]:
    """A random tree in the generator's prefix notation (before variable renaming).

    Operators are the keys of ``config.operator_weights``; a ``pow`` token is followed
    by its argument only (its exponent is chosen in :func:`tree_to_prefix`). Leaves
    are variable tokens ``x_i`` or integer strings; ``config.width_weights`` draws the
    law's number of variables first.
    """
    if config.width_weights is None:
        labels, children, leaves = _sample_shape(rng, config, config.max_operators)
        for slot in leaves:
            labels[slot] = _leaf(rng, config, config.n_variables)
    else:
        weights = np.asarray(config.width_weights)
        width = int(rng.choice(len(weights), p=weights / weights.sum())) + 1
        most = config.max_operators + width - 1
        labels, children, leaves = _sample_shape(rng, config, most)
        for _ in range(MAX_SHAPE_DRAWS):
            if len(leaves) >= width:
                break
            labels, children, leaves = _sample_shape(rng, config, most)
        width = min(width, len(leaves))
        chosen = set(rng.choice(len(leaves), size=width, replace=False).tolist())
        order = iter(rng.permutation(width).tolist())
        for position, slot in enumerate(leaves):
            labels[slot] = variable_token(next(order)) if position in chosen else _leaf(rng, config, width)
    out, pending = [], [0]
    while pending:
        node = pending.pop()
        out.append(labels[node])
        pending.extend(reversed(children[node]))
    return out


def _sample_shape(rng: np.random.Generator, config: GeneratorConfig, most: int) -> tuple[list, list, list[int]]:
    """A tree of ``min_operators..most`` operators: labels (``None`` at leaves), children and
    the leaf slots in order."""
    operators = config.operators
    n_operators = int(rng.integers(config.min_operators, most + 1))
    labels: list[str | None] = [None]
    children: list[list[int]] = [[]]
    open_slots = [0]
    for choice in rng.choice(len(operators), size=n_operators, p=config.probabilities):
        slot = open_slots.pop(int(rng.integers(len(open_slots))))
        operator = operators[choice]
        labels[slot] = operator
        for _ in range(arity(operator)):
            children[slot].append(len(labels))
            open_slots.append(len(labels))
            labels.append(None)
            children.append([])
    return labels, children, sorted(open_slots)


def _leaf(rng: np.random.Generator, config: GeneratorConfig, n_variables: int) -> str:
    """A variable among the first ``n_variables`` with probability ``p_variable``, else an integer."""
    if rng.random() < config.p_variable:
        return variable_token(int(rng.integers(n_variables)))
    return str(config.integer_leaves[int(rng.integers(len(config.integer_leaves)))])


def compact_variables(tokens: list[str]) -> list[str]:
    """Rename variables so that the used ones are ``x_1..x_k`` (order preserved)."""
    used = sorted({i for t in tokens if (i := variable_index(t)) is not None})
    mapping = {variable_token(old): variable_token(new) for new, old in enumerate(used)}
    return [mapping.get(t, t) for t in tokens]


def satisfies_variable_order(tokens) -> bool:
    """True when ``x_k`` only appears together with ``x_1..x_{k-1}``."""
    used = {i for t in tokens if (i := variable_index(t)) is not None}
    return used == set(range(len(used)))


def tree_to_prefix(tree: list[str], rng: np.random.Generator, config: GeneratorConfig) -> list[str]:
    """Generator tokens -> vocabulary prefix tokens.

    ``sub a b`` becomes ``add a mul -1 b`` and ``pow a`` becomes ``pow a k`` with ``k``
    drawn from ``config.pow_exponents``.
    """
    position = 0

    def emit() -> list[str]:
        nonlocal position
        token = tree[position]
        position += 1
        if token == "pow":
            exponent = str(config.pow_exponents[int(rng.integers(len(config.pow_exponents)))])
            return ["pow"] + emit() + [exponent]
        if token == "sub":
            first = emit()
            return ["add"] + first + ["mul", "-1"] + emit()
        if arity(token) == 2:
            first = emit()
            return [token] + first + emit()
        if arity(token) == 1:
            return [token] + emit()
        return [token]

    return emit()


_BAD_ATOMS = (sympy.zoo, sympy.nan, sympy.oo, -sympy.oo, sympy.I)


def _has_unwritable_exponent(expr: sympy.Expr) -> bool:
    for power in expr.atoms(sympy.Pow):
        exponent = power.exp
        if exponent.is_Number and not (exponent.is_Rational and exponent.p in INTEGERS and exponent.q in INTEGERS):
            return True
    return False


@dataclass
class GeneratedSkeleton:
    """A generated skeleton: simplified prefix tokens and the attached version (the
    package's own :class:`nesymres_sklearn.expression.skeleton.Skeleton` is a checked,
    compiled skeleton; this is the generator's record)."""

    tokens: list[str]
    attached: list[str]
    kinds: list[str]


def simplify_to_skeleton(prefix: list[str], config: GeneratorConfig) -> GeneratedSkeleton | str:
    """Simplify a vocabulary prefix expression; a :class:`GeneratedSkeleton` or a rejection reason
    (``"timeout"`` after ``config.simplify_timeout`` seconds, which cover SymPy's
    construction too: its evaluation of numbers can hang; see :mod:`.time_limit`)."""
    try:
        return call_with_time_limit(config.simplify_timeout, _skeleton, prefix, config)
    except TimeLimitExceeded:
        return "timeout"


def _skeleton(prefix: list[str], config: GeneratorConfig) -> GeneratedSkeleton | str:
    """:func:`simplify_to_skeleton` without a time limit."""
    # Symbols without assumptions: sympy keeps sqrt(x**2) instead of writing Abs(x).
    symbols = [sympy.Symbol(variable_token(i)) for i in range(config.n_variables)]
    try:
        expr = prefix_to_sympy(prefix, symbols)
        if config.simplification == "full":
            expr = sympy.simplify(expr)
    except (RecursionError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return "unwritable"
    if any(expr.has(atom) for atom in _BAD_ATOMS):
        return "unwritable"
    if not expr.free_symbols:
        return "no_variable"
    if _has_unwritable_exponent(expr):
        return "exponent"
    try:
        tokens = skeletonize(expr)
    except (ValueError, RecursionError):
        return "unwritable"
    tokens = compact_variables(tokens)
    if len(tokens) + TARGET_OVERHEAD > config.max_length:
        return "too_long"
    attached, kinds = attach_constants(tokens)
    return GeneratedSkeleton(tokens, attached, kinds)


# Small trees recur (about 45% of the trees of a large bank repeat an earlier one), so
# each process remembers its latest results; timeouts depend on the load and are not kept.
_MEMO: dict = {}
_MEMO_SIZE = 300_000


def memoised_skeleton(prefix: list[str], config: GeneratorConfig) -> GeneratedSkeleton | str:
    """:func:`simplify_to_skeleton`, remembered per process (the result is a pure function
    of the prefix and the settings it reads, except for timeouts)."""
    key = (tuple(prefix), config.n_variables, config.simplification, config.simplify_timeout, config.max_length)
    result = _MEMO.get(key)
    if result is None:
        result = simplify_to_skeleton(prefix, config)
        if result != "timeout":
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.clear()
            _MEMO[key] = result
    return result


def generate_skeletons(n_attempts: int, seed, config: GeneratorConfig) -> tuple[list[GeneratedSkeleton], Counter]:
    """Sample ``n_attempts`` trees and return the skeletons and the rejection counts.

    ``seed`` is anything :func:`numpy.random.default_rng` accepts; the result is a
    pure function of ``seed`` and ``config``.
    """
    rng = np.random.default_rng(seed)
    skeletons: list[GeneratedSkeleton] = []
    rejected: Counter = Counter()
    for _ in range(n_attempts):
        tree = compact_variables(sample_tree(rng, config))
        result = memoised_skeleton(tree_to_prefix(tree, rng, config), config)
        if isinstance(result, str):
            rejected[result] += 1
        else:
            skeletons.append(result)
    return skeletons, rejected
