"""The exhaustive search of laws of one variable: every small expression, scaled.

A law with units often reduces to one dimensionless group ``p``: ``y = m*f(p)``. Where
``p`` spans less than 1, ``1/(exp(p) - 1)``, ``tanh(p)`` or ``1/cosh(p)`` are close to
their Taylor polynomials, and the network writes those polynomials instead
(``benchmarks/results/units/one-variable-forms.md``). So when the network reads one
variable, every expression ``g`` of that variable with at most :data:`MAX_NODES` nodes
(the variable, ``1``, :data:`UNARY` and :data:`BINARY` operations) is also tried as
``a * x**k * g(c*x) + b`` for each power ``k`` in :data:`POWERS`, as AI Feynman's
brute force tries its small expressions (Udrescu & Tegmark 2020):

1. the expressions, de-duplicated up to ``a*g + b`` on reference points (the
   :class:`Library`, built once per process);
2. on :data:`N_POINTS` of the data, each expression's best scale ``c`` of a grid, for
   each power ``k``;
3. from there, damped Gauss-Newton steps in ``(a, b, c)``, all expressions and powers
   at once, the best of them taking more steps (:data:`TIERS`);
4. the :data:`N_KEPT` best (the exact ones first: without functions in disguise, then
   the smallest) written as skeletons, their constants fitted on all the data from
   those values (:func:`.variables.assembly.refit`).

Every step is fixed work that a deadline only cuts short.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
import sympy

from ...expression.operators import OPERATORS
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..budget import Deadline
from ..exactness import ROUNDING_FIT
from ..fitted import Fitted
from ..problem import Problem
from ..variables.assembly import refit

MAX_NODES = 5
# Powers of one argument the operator table writes with ``pow``: value, and derivative
# from the argument and the value.
_POWERS = {
    "inv": (lambda a: 1.0 / a, lambda a, v: -v * v),
    "sq": (np.square, lambda a, v: 2.0 * a),
    "rsqrt": (lambda a: 1.0 / np.sqrt(a), lambda a, v: -0.5 * v / a),
}
#: Unary operations, in the order the library is built: value, and derivative from the
#: argument and the value (the operator table's, :mod:`..expression.operators`).
UNARY = {
    name: _POWERS[name] if name in _POWERS else (OPERATORS[name].numpy, OPERATORS[name].derivatives[0])
    for name in ("inv", "sq", "sqrt", "rsqrt", "exp", "ln", "sin", "cos", "tan", "tanh", "cosh")
}
#: Binary operations: value, and derivatives by each argument from both and the value.
BINARY = {
    "add": (OPERATORS["add"].numpy, OPERATORS["add"].derivatives),
    "sub": (np.subtract, (lambda a, b, v: 1.0, lambda a, b, v: -1.0)),
    "mul": (OPERATORS["mul"].numpy, OPERATORS["mul"].derivatives),
    "div": (OPERATORS["div"].numpy, OPERATORS["div"].derivatives),
}
COMMUTATIVE = ("add", "mul")
_LEAVES = ("x", "1")
#: (outer, inner) operations that write a simpler function in disguise: of two exact
#: forms of a law, the one without them is kept (``1/(exp(u) - 1)``, not
#: ``coth(u/2)/2 - 1/2`` or ``(1/sqrt(tanh(u/2)))**2/2 - 1/2``, which SymPy does not
#: read as that law).
DISGUISES = (*((power, "tanh") for power in ("inv", "sq", "sqrt", "rsqrt")), ("tanh", "ln"), ("cosh", "ln"))
OPCODES = (*_LEAVES, *UNARY, *BINARY)
_CODE = {name: code for code, name in enumerate(OPCODES)}
POWERS = np.arange(-3, 4)
#: Points the grid and the Gauss-Newton steps read (spread evenly over the sorted variable).
N_POINTS = 10
#: Scales ``c`` of the grid, times ``1/max|x|``.
GRID = np.geomspace(0.1, 16.0, 15)
#: The Gauss-Newton steps in tiers: (the share of all expressions and powers that take
#: them, the best of the last tier's or of the grid's, and their number of steps).
TIERS = ((0.3, 2), (0.03, 6))
#: Expressions written as skeletons and fitted on all the data.
N_KEPT = 12
# Reference points of the library: both signs, so that domains of one sign are kept apart.
_REFERENCE = np.concatenate([np.geomspace(0.05, 5.0, 16), -np.geomspace(0.07, 4.0, 16)])


@dataclass(frozen=True)
class Library:
    """The de-duplicated expressions, node by node: node ``i`` is ``ops[i]`` applied to
    nodes ``left[i]`` (and ``right[i]``), of ``sizes[i]`` nodes in all; node 0 is the
    variable, node 1 the constant 1, every other node an expression of the variable.
    ``programs[i]`` lists node ``i``'s subtree in postfix order, right-aligned in
    :data:`MAX_NODES` slots (-1 before it). Nodes of equal values are one node;
    ``roots`` marks the first of each class of ``a*g + b``, the expressions tried."""

    ops: np.ndarray
    left: np.ndarray
    right: np.ndarray
    sizes: np.ndarray
    programs: np.ndarray
    roots: np.ndarray

    def __len__(self) -> int:
        return len(self.ops)

    @cached_property
    def disguised(self) -> np.ndarray:
        """Per node, its functions in disguise (:data:`DISGUISES`): powers of ``tanh(u)``
        (``1/tanh(u)`` is an exponential written ``coth``), and ``tanh(log(u))`` or
        ``cosh(log(u))``, rational."""
        child = np.where(self.left >= 0, self.ops[np.maximum(self.left, 0)], -1)
        here = np.zeros(len(self), dtype=int)
        for outer, inner in DISGUISES:
            here += (self.ops == _CODE[outer]) & (child == _CODE[inner])
        return np.where(self.programs >= 0, here[np.maximum(self.programs, 0)], 0).sum(axis=1)

    @cached_property
    def _groups(self) -> list[tuple[str, np.ndarray]]:
        """The nodes of each size from 2 up, by operation: what :meth:`evaluate` computes
        in one step each."""
        groups = []
        for size in range(2, MAX_NODES + 1):
            for code in np.unique(self.ops[self.sizes == size]):
                groups.append((OPCODES[code], np.flatnonzero((self.sizes == size) & (self.ops == code))))
        return groups

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Every node's values at ``x`` (nodes x points), sharing subtrees."""
        values = np.empty((len(self), len(x)))
        values[0], values[1] = x, 1.0
        with np.errstate(all="ignore"):
            for name, nodes in self._groups:
                values[nodes] = _apply(name, values[self.left[nodes]], values[self.right[nodes]])
        return values

    def plan(self, nodes: np.ndarray) -> list[list[tuple[str, np.ndarray, np.ndarray]]]:
        """Per slot of the programs of ``nodes``, the operations there: name, the rows
        that take it and the slot of their first operand."""
        programs = self.programs[nodes]
        plan = []
        for slot in range(MAX_NODES):
            node = programs[:, slot]
            codes = np.where(node >= 0, self.ops[np.maximum(node, 0)], -1)
            steps = []
            for code in np.unique(codes[codes >= 0]):
                rows = np.flatnonzero(codes == code)
                right = self.right[node[rows]]
                first = slot - 1 - np.where(right >= 0, self.sizes[right], 0)
                steps.append((OPCODES[code], rows, first))
            plan.append(steps)
        return plan

    def evaluate_scaled(
        self, nodes: np.ndarray, x: np.ndarray, scales: np.ndarray, plan: list | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each of ``nodes`` at ``scales[i] * x``, and its derivative by the scale (nodes
        x points each); ``plan``: :meth:`plan` of ``nodes``, when the caller keeps it."""
        values = np.zeros((MAX_NODES, len(nodes), len(x)))
        slopes = np.zeros((MAX_NODES, len(nodes), len(x)))
        with np.errstate(all="ignore"):
            for slot, steps in enumerate(self.plan(nodes) if plan is None else plan):
                for name, rows, first in steps:
                    if name == "x":
                        values[slot, rows] = scales[rows, None] * x
                        slopes[slot, rows] = x
                    elif name == "1":
                        values[slot, rows] = 1.0
                    elif name in UNARY:
                        a, da = values[slot - 1, rows], slopes[slot - 1, rows]
                        value = UNARY[name][0](a)
                        values[slot, rows], slopes[slot, rows] = value, UNARY[name][1](a, value) * da
                    else:
                        a, da = values[first, rows], slopes[first, rows]
                        b, db = values[slot - 1, rows], slopes[slot - 1, rows]
                        values[slot, rows], slopes[slot, rows] = _binary_with_slope(name, a, b, da, db)
        return values[-1], slopes[-1]

    def tokens(self, node: int) -> list[str]:
        """Node ``node`` in prefix notation over ``x_1``, each occurrence of the
        variable as ``c*x_1``."""
        name = OPCODES[self.ops[node]]
        if name == "x":
            return ["mul", CONSTANT, "x_1"]
        if name == "1":
            return ["1"]
        a = self.tokens(int(self.left[node]))
        if name in UNARY:
            return {
                "inv": ["pow", *a, "-1"],
                "sq": ["pow", *a, "2"],
                "rsqrt": ["pow", "sqrt", *a, "-1"],
            }.get(name, [name, *a])
        b = self.tokens(int(self.right[node]))
        return ["add", *a, "mul", "-1", *b] if name == "sub" else [name, *a, *b]

    def n_variables(self, node: int) -> int:
        """Occurrences of the variable in node ``node``."""
        return int(np.sum(self.ops[self.programs[node][self.programs[node] >= 0]] == _CODE["x"]))


def _apply(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return UNARY[name][0](a) if name in UNARY else BINARY[name][0](a, b)


def _binary_with_slope(name, a, b, da, db):
    """``name`` of ``a`` and ``b``, and its derivative from theirs (the chain rule)."""
    function, (by_a, by_b) = BINARY[name]
    value = function(a, b)
    return value, by_a(a, b, value) * da + by_b(a, b, value) * db


def _keys(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which rows of ``values`` are expressions worth keeping (finite on a quarter of
    the reference points, not constant); a key per row equal for rows of (nearly) equal
    values; and one equal for rows that are ``a*g + b`` of each other."""
    finite = np.isfinite(values)
    counts = finite.sum(axis=1)
    masked = np.where(finite, values, 0.0)
    with np.errstate(all="ignore"):
        mean = masked.sum(axis=1) / np.maximum(counts, 1)
        centred = np.where(finite, values - mean[:, None], 0.0)
        spread = np.sqrt((centred**2).sum(axis=1) / np.maximum(counts, 1))
        kept = (counts >= len(_REFERENCE) // 4) & (spread > 1e-9 * (1.0 + np.abs(masked).max(axis=1)))
        z = centred / np.where(spread > 0, spread, 1.0)[:, None]
    first = np.argmax(np.abs(z) > 1e-6, axis=1)
    z *= np.sign(z[np.arange(len(z)), first])[:, None]
    equal = np.where(finite & (np.abs(values) < 1e30), values, np.inf).astype(np.float32)
    return kept, equal, np.where(finite, np.round(z, 6), 1e9)


def _unseen(keys: np.ndarray, rows: np.ndarray, seen: set) -> np.ndarray:
    """The ``rows`` whose key is new (the first of each), in order; ``seen`` updated."""
    _, first = np.unique(keys[rows], axis=0, return_index=True)
    new = [row for row in rows[np.sort(first)] if keys[row].tobytes() not in seen]
    seen.update(keys[row].tobytes() for row in new)
    return np.array(new, dtype=int)


@cache
def library() -> Library:
    """The expressions of up to :data:`MAX_NODES` nodes (see :class:`Library`), the
    smallest of each class of ``a*g + b`` kept, the operations in :data:`OPCODES`
    order."""
    rows = [np.array([[_CODE["x"], -1, -1, 1], [_CODE["1"], -1, -1, 1]])]  # op, left, right, size
    values = np.stack([_REFERENCE, np.ones_like(_REFERENCE)])
    _, equal, affine = _keys(_REFERENCE[None])
    seen, seen_affine = {equal[0].tobytes()}, {affine[0].tobytes()}
    roots = [np.array([True, False])]
    by_size = {1: np.array([0])}
    operands = np.array([0, 1])  # a binary node's operands of one node: the variable or the constant
    for size in range(2, MAX_NODES + 1):
        batch_values, batch_rows = [], []
        inner = by_size[size - 1]
        with np.errstate(all="ignore"):
            for name, (function, _) in UNARY.items():
                batch_values.append(function(values[inner]))
                batch_rows.append(np.stack([np.full(len(inner), _CODE[name]), inner, np.full(len(inner), -1)], 1))
            for left_size in range(1, size - 1):
                right_size = size - 1 - left_size
                lefts = by_size[left_size] if left_size > 1 else operands
                rights = by_size[right_size] if right_size > 1 else operands
                i, j = (a.ravel() for a in np.meshgrid(lefts, rights, indexing="ij"))
                for name, (function, _) in BINARY.items():
                    if name in COMMUTATIVE and left_size > right_size:
                        continue
                    pair = (i != 1) | (j != 1)
                    if name in COMMUTATIVE and left_size == right_size:
                        pair &= i <= j
                    batch_values.append(function(values[i[pair]], values[j[pair]]))
                    batch_rows.append(np.stack([np.full(pair.sum(), _CODE[name]), i[pair], j[pair]], 1))
        batch, batch_rows = np.concatenate(batch_values), np.concatenate(batch_rows)
        kept, equal, affine = _keys(batch)
        # The largest expressions are no one's operand: one of each class is enough.
        new = _unseen(equal, np.flatnonzero(kept), seen) if size < MAX_NODES else np.flatnonzero(kept)
        new_roots = np.isin(new, _unseen(affine, new, seen_affine))
        new = new if size < MAX_NODES else new[new_roots]
        new_roots = new_roots if size < MAX_NODES else np.ones(len(new), dtype=bool)
        start = len(values)
        by_size[size] = np.arange(start, start + len(new))
        rows.append(np.column_stack([batch_rows[new], np.full(len(new), size)]))
        roots.append(new_roots)
        values = np.concatenate([values, batch[new]])
    ops, left, right, sizes = np.concatenate(rows).T
    return Library(ops, left, right, sizes, _programs(left, right, sizes), np.concatenate(roots))


def _programs(left: list[int], right: list[int], sizes: np.ndarray) -> np.ndarray:
    """Each node's subtree in postfix order, right-aligned (see :class:`Library`)."""
    programs = np.full((len(sizes), MAX_NODES), -1)
    for node in range(len(sizes)):
        tail = [node]
        if right[node] >= 0:
            tail = [*_subtree(programs, right[node]), *tail]
        if left[node] >= 0:
            tail = [*_subtree(programs, left[node]), *tail]
        programs[node, MAX_NODES - len(tail) :] = tail
    return programs


def _subtree(programs: np.ndarray, node: int) -> np.ndarray:
    row = programs[node]
    return row[row >= 0]


def exhaustive_candidates(problem: Problem, deadline: Deadline | None = None) -> list[Fitted]:
    """The :data:`N_KEPT` best expressions ``a * x**k * g(c*x) + b`` for ``problem`` (of
    one column), fitted on all its data (see the module docstring). Only the first exact
    one (to float64's rounding) when there is one: of the same law written in other ways
    (``1/(exp(x) - 1)``, ``coth(x/2)/2 - 1/2``) the selection would choose the shortest,
    not the one a physicist writes and SymPy reads as the law. Otherwise only those less
    close than the selection's floor (:attr:`..problem.Problem.fvu_floor`): closer approximations
    would tie there with an exact law found elsewhere. Fewer, or none, when the
    ``deadline`` passes first."""
    x, y = problem.X[:, 0], problem.y
    chosen = np.sort(np.argsort(x, kind="stable")[np.linspace(0, len(x) - 1, min(N_POINTS, len(x))).astype(int)])
    few_x, few_y = x[chosen], y[chosen]
    lib = library()
    nodes = np.flatnonzero(lib.roots)
    grid = _grid(lib, nodes, few_x, few_y, deadline)
    if grid is None:
        return []
    scales, losses = grid
    with np.errstate(all="ignore"):
        targets = few_y / few_x ** POWERS[:, None]
    first_share, first_steps = TIERS[0]
    order = np.sort(np.argsort(losses, axis=None, kind="stable")[: max(N_KEPT, int(first_share * losses.size))])
    rows, columns = np.unravel_index(order, losses.shape)
    fits = _Fits(lib, nodes[rows], columns, few_x, targets, scales[rows, columns])
    fits.steps(first_steps, deadline)
    for share, n_steps in TIERS[1:]:
        fits = fits.subset(np.sort(np.argsort(fits.losses, kind="stable")[: max(N_KEPT, int(share * losses.size))]))
        fits.steps(n_steps, deadline)
    found = []
    for node, power, scale, (a, b) in fits.best(N_KEPT):
        if deadline is not None and deadline.passed():
            break
        tokens = ["add", "mul", CONSTANT, *_power_tokens(power), *lib.tokens(node), CONSTANT]
        start = np.array([a, *[scale] * lib.n_variables(node), b])
        found.append(refit(Skeleton(tuple(tokens)), start, problem, deadline))
    exact = [fit for fit in found if problem.is_exact_to_rounding(fit[2])]
    return exact[:1] or [fit for fit in found if fit[2] > problem.fvu_floor * problem.scale]


def simplicity(skeleton: Skeleton) -> tuple[int, int, int]:
    """A key that orders equal forms of a law written by this search, simplest first:
    fewer functions in disguise (:data:`DISGUISES`), fewer tokens, a lower power ``|k|``
    of the variable outside ``g`` (``1/(p**2*sqrt(1 - p**2))`` before
    ``q**3/sqrt(q**2 - 1)``)."""
    tokens = skeleton.tokens  # "add mul c", then "mul x_1" or "mul pow x_1 k" for the power
    if tokens[3:5] == ("mul", "x_1"):
        power = 1
    elif tokens[3:6] == ("mul", "pow", "x_1"):
        power = abs(int(tokens[6]))
    else:
        power = 0
    disguised = sum(
        (part.is_Pow and isinstance(part.base, sympy.tanh))
        or (isinstance(part, (sympy.tanh, sympy.cosh)) and isinstance(part.args[0], sympy.log))
        for part in sympy.preorder_traversal(skeleton.sympy)
    )
    return disguised, len(tokens), power


def _power_tokens(k: int) -> list[str]:
    if k == 0:
        return []
    return ["mul", "x_1"] if k == 1 else ["mul", "pow", "x_1", str(k)]


def _standardised(rows: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        centred = rows - rows.mean(axis=-1, keepdims=True)
        return centred / np.linalg.norm(centred, axis=-1, keepdims=True)


def _grid(lib: Library, nodes: np.ndarray, x: np.ndarray, y: np.ndarray, deadline: Deadline | None):
    """Per node and power of :data:`POWERS`, the scale of :data:`GRID` with which
    ``a * x**k * g(c*x) + b`` fits best and its fraction of variance unexplained
    (nodes x powers each); ``None`` when the deadline passes first."""
    with np.errstate(all="ignore"):
        targets = np.nan_to_num(_standardised(y / x ** POWERS[:, None]))
    grid = GRID / max(float(np.max(np.abs(x))), 1e-300)
    best = np.full((len(nodes), len(POWERS)), np.inf)
    scales = np.ones((len(nodes), len(POWERS)))
    for scale in grid:
        if deadline is not None and deadline.passed():
            return None
        with np.errstate(all="ignore"):
            correlations = _standardised(lib.evaluate(scale * x)[nodes]) @ targets.T
        losses = np.nan_to_num(1.0 - correlations**2, nan=np.inf, posinf=np.inf)
        better = losses < best
        best[better], scales[better] = losses[better], scale
    return scales, best


class _Fits:
    """``a*g(c*x) + b`` fitted to ``y/x**k``, one row per expression ``g`` (a node)
    and power ``k`` (an index into :data:`POWERS`): damped Gauss-Newton steps in
    ``(a, b, c)``, all rows at once."""

    def __init__(self, lib, nodes, powers, x, targets, scales, damping=None):
        self.lib, self.nodes, self.powers, self.x, self.all_targets = lib, nodes, powers, x, targets
        self.plan = lib.plan(nodes)  # the same for every step
        self.targets = targets[powers]
        self.variances = self.targets.var(axis=1)
        self.damping = np.full(len(nodes), 1e-3) if damping is None else damping
        self.scales = scales
        self.losses, self.residuals, self.values, self.slopes, self.outer = self._at(scales)

    def subset(self, rows: np.ndarray) -> _Fits:
        """These fits' ``rows`` as they stand."""
        return _Fits(
            self.lib, self.nodes[rows], self.powers[rows], self.x, self.all_targets, self.scales[rows],
            self.damping[rows],
        )  # fmt: skip

    def _at(self, scales):
        values, slopes = self.lib.evaluate_scaled(self.nodes, self.x, scales, self.plan)
        with np.errstate(all="ignore"):
            centred = values - values.mean(axis=1, keepdims=True)
            spread = (centred**2).sum(axis=1)
            a = (centred * self.targets).sum(axis=1) / spread
            b = (self.targets - a[:, None] * values).mean(axis=1)
            residuals = self.targets - a[:, None] * values - b[:, None]
            losses = (residuals**2).mean(axis=1) / self.variances
            flat = spread <= 1e-12 * (values**2).sum(axis=1)  # g constant on the points: no fit
        losses[~np.isfinite(losses) | flat] = np.inf
        return losses, residuals, values, slopes, np.stack([a, b], axis=1)

    def steps(self, n_steps: int, deadline: Deadline | None) -> None:
        for _ in range(n_steps):
            if deadline is not None and deadline.passed():
                return
            with np.errstate(all="ignore"):
                step = _damped_steps(self.values, self.outer[:, :1] * self.slopes, self.residuals, self.damping)
            trial = self._at(self.scales + step)
            better = trial[0] < self.losses
            self.scales = np.where(better, self.scales + step, self.scales)
            self.damping = np.where(better, self.damping / 10, self.damping * 10)
            self.losses = np.where(better, trial[0], self.losses)
            for kept, new in zip((self.residuals, self.values, self.slopes, self.outer), trial[1:]):
                kept[better] = new[better]

    def best(self, n: int) -> list[tuple[int, int, float, np.ndarray]]:
        """The ``n`` best fits, as (node, power, scale, (a, b)): those exact on the
        points first (those with the fewest functions in disguise, then the smallest,
        first), then the others by loss."""
        exact = self.losses <= ROUNDING_FIT
        sizes = np.where(exact, self.lib.sizes[self.nodes] + (POWERS[self.powers] != 0), 0)
        disguised = np.where(exact, self.lib.disguised[self.nodes], 0)
        order = np.lexsort((np.arange(len(self.losses)), self.losses, sizes, disguised, ~exact))
        order = order[np.isfinite(self.losses[order])][:n]
        return [(int(self.nodes[i]), int(POWERS[self.powers[i]]), float(self.scales[i]), self.outer[i]) for i in order]


def _damped_steps(values, slopes, residuals, damping):
    """The damped Gauss-Newton step in ``c`` of ``a*g + b`` (with ``a`` and ``b``),
    per fit (all axes but the last), from ``g``'s ``values`` and the model's ``slopes``
    by ``c``; zero where it is not finite."""
    columns = (values, np.ones_like(values), slopes)
    normal = np.empty((*values.shape[:-1], 3, 3))
    for i in range(3):
        for j in range(i, 3):
            normal[..., i, j] = normal[..., j, i] = (columns[i] * columns[j]).sum(axis=-1)
    gradient = np.stack([(column * residuals).sum(axis=-1) for column in columns], axis=-1)
    normal[..., range(3), range(3)] *= 1.0 + damping[..., None]
    solvable = np.all(np.isfinite(normal), axis=(-2, -1)) & np.all(np.isfinite(gradient), axis=-1)
    normal[~solvable], gradient[~solvable] = np.eye(3), 0.0
    determinants = np.linalg.det(normal)
    solvable &= np.isfinite(determinants) & (np.abs(determinants) > 0)
    normal[~solvable], gradient[~solvable] = np.eye(3), 0.0
    return np.linalg.solve(normal, gradient[..., None])[..., 2, 0]
