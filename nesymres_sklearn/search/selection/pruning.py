"""Pruning the best equation: parts that do not pay for their tokens are dropped.

A fitted constant can make a part of an equation numerically neutral: in
``K*x0*sin(x1)/(x2 + K)`` with ``|K| >> |x2|`` the divisor is ``K`` up to rounding, and
``x2`` only seems to be used. Each part (subtree) of the best row is tried as one
constant, its mean on the data, so is each variable wherever it occurs, and each
constant that multiplies, divides or is added is tried away (``c*A -> A``,
``A/c -> A``, ``A + c -> A``), the other constants refitted; parts without variables
are folded into one constant. A part of more than ``LINE`` tokens in one variable is
tried as its least-squares line in it, refitted with the rest: over the data's range
``c*log(c*x + c)`` can be a line in disguise, and ``sin(52.7*log(0.02*x + 0.998))`` is
``sin(x)`` once the line is refitted.
A change is kept when the row's selection score (:mod:`.scores`) does not get worse,
so neutral parts always go, and a small term of an approximate fit goes when its
tokens cost more than the error it removes. Parts and variables whose replacement
alone raises the score by more than ``max_score_rise``
(:attr:`.SearchSettings.pruning_score_rise`) are not refitted.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ...expression.program import PrefixProgram, evaluate
from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT, token_arity, variable_index
from ..exactness import fvu_floor, keeps_every_point, worst_relative_error
from ..fitted import Fitted, mse
from ..fitting.constants import Evaluations, least_squares_run
from ..problem import variance
from ..settings import SearchSettings
from .scores import log_fvu, lowest, scores

# Refits tried per pruned row, at most.
MAX_REFITS = 24
# Tokens of a line, ``c*x + c``: longer parts in one variable are tried as one.
LINE = ("add", "mul", CONSTANT, "x", CONSTANT)


def _ends(tokens: list[str]) -> list[int]:
    """``ends[i]``: one past the last token of the subtree that starts at ``i``."""
    ends = [0] * len(tokens)
    stack: list[list[int]] = []  # [start, open slots]
    for i, token in enumerate(tokens):
        stack.append([i, token_arity(token)])
        while stack and stack[-1][1] == 0:
            start, _ = stack.pop()
            ends[start] = i + 1
            if stack:
                stack[-1][1] -= 1
    return ends


def _constants_before(tokens: list[str], position: int) -> int:
    return sum(token == CONSTANT for token in tokens[:position])


def _replaced(tokens, constants, start, end, value):
    """Tokens and constants with the subtree ``tokens[start:end]`` replaced by one constant ``value``."""
    first, inside = _constants_before(tokens, start), sum(t == CONSTANT for t in tokens[start:end])
    values = np.concatenate([constants[:first], [value], constants[first + inside :]])
    return [*tokens[:start], CONSTANT, *tokens[end:]], values


def _folded(tokens, constants, X):
    """Every subtree without variables that holds a constant, as one constant (``c*c -> c``)."""
    ends = _ends(tokens)
    n_constants = np.cumsum([0, *(token == CONSTANT for token in tokens)])
    n_variables = np.cumsum([0, *(variable_index(token) is not None for token in tokens)])
    folded_tokens, values, start = [], [], 0
    while start < len(tokens):  # left to right: the outermost such subtree is met first
        end = ends[start]
        first, last = n_constants[start], n_constants[end]
        if end - start > 1 and last > first and n_variables[end] == n_variables[start]:
            folded_tokens.append(CONSTANT)
            values.append(float(evaluate(tokens[start:end], X[:1], constants[first:last])[0]))
            start = end
            continue
        folded_tokens.append(tokens[start])
        if tokens[start] == CONSTANT:
            values.append(constants[first])
        start += 1
    return folded_tokens, np.asarray(values, dtype=np.float64)


def _subtree_replacements(tokens, constants, X, weights):
    """Each subtree of more than one token that holds a variable (not the whole row),
    as one constant: the subtree's mean on ``X``."""
    ends = _ends(tokens)
    found = []
    for start in range(1, len(tokens)):
        end = ends[start]
        part = tokens[start:end]
        if end - start < 2 or not any(variable_index(t) is not None for t in part):
            continue
        first = _constants_before(tokens, start)
        with np.errstate(all="ignore"):
            values = evaluate(part, X, constants[first : first + sum(t == CONSTANT for t in part)])
            mean = float(np.average(values, weights=weights))
        if np.isfinite(mean):
            found.append(_replaced(tokens, constants, start, end, mean))
    return found


def _lines(tokens, constants, X, weights):
    """Each part of more than ``len(LINE)`` tokens (not the whole row) whose variables
    are one column, as the (``weights``-weighted) least-squares line of its values on
    ``X`` in that column."""
    ends = _ends(tokens)
    found = []
    for start in range(1, len(tokens)):
        end = ends[start]
        part = tokens[start:end]
        variables = {t for t in part if variable_index(t) is not None}
        if end - start <= len(LINE) or len(variables) != 1:
            continue
        (variable,) = variables
        column = X[:, variable_index(variable)]
        first, inside = _constants_before(tokens, start), sum(t == CONSTANT for t in part)
        with np.errstate(all="ignore"):
            values = evaluate(part, X, constants[first : first + inside])
        if np.ptp(column) == 0 or not np.all(np.isfinite(values)):
            continue
        slope, intercept = np.polyfit(column, values, 1, w=None if weights is None else np.sqrt(weights))
        line = [token if token != "x" else variable for token in LINE]
        found.append(
            (
                [*tokens[:start], *line, *tokens[end:]],
                np.concatenate([constants[:first], [slope, intercept], constants[first + inside :]]),
            )
        )
    return found


def variables_of(tokens) -> list[str]:
    """The variable tokens of ``tokens``, each once, sorted."""
    return sorted({t for t in tokens if variable_index(t) is not None})


def column_mean(variable: str, X: np.ndarray, weights=None) -> float:
    """The (``weights``-weighted) mean of ``variable``'s column of ``X``."""
    return float(np.average(X[:, variable_index(variable)], weights=weights))


def variable_replaced(
    tokens, constants, variable: str, X: np.ndarray, weights=None, value: float | None = None
) -> tuple[list[str], np.ndarray]:
    """Tokens and constants with ``variable`` replaced wherever it occurs by a constant:
    ``value``, by default its mean on ``X`` (:func:`column_mean`)."""
    if value is None:
        value = column_mean(variable, X, weights)
    new_tokens, values, taken = [], [], iter(constants)
    for token in tokens:
        if token == variable:
            new_tokens.append(CONSTANT)
            values.append(value)
        else:
            new_tokens.append(token)
            if token == CONSTANT:
                values.append(next(taken))
    return new_tokens, np.array(values, dtype=np.float64)


def _variable_removals(tokens, constants, X, weights):
    """Each variable of the row replaced, wherever it occurs, by its mean on ``X``."""
    return [variable_replaced(tokens, constants, variable, X, weights) for variable in variables_of(tokens)]


def _constant_removals(tokens, constants):
    """Each constant that is a factor, a divisor or a term, removed (``c*A -> A``,
    ``A/c -> A``, ``A + c -> A``)."""
    ends = _ends(tokens)
    found = []
    for parent, operator in enumerate(tokens):
        if operator not in ("add", "mul", "div"):
            continue
        left, right = parent + 1, ends[parent + 1]
        for position, other in ((left, right), (right, left)):
            if tokens[position] != CONSTANT or (operator == "div" and position == left):
                continue
            kept = tokens[other : ends[other]]
            values = np.delete(constants, _constants_before(tokens, position))  # the others keep their order
            found.append(([*tokens[:parent], *kept, *tokens[ends[parent] :]], values))
    return found


def prune(
    skeleton: Skeleton,
    constants: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    complexity_penalty: float,
    weights: np.ndarray | None = None,
    evaluations: Evaluations | None = None,
    max_score_rise: float = SearchSettings.pruning_score_rise,
) -> Fitted:
    """``skeleton`` and ``constants`` with the parts that do not pay for their tokens
    removed, and the MSE on ``(X, y)`` (``weights``, mean 1, weight the errors); stops
    trying once the refits have spent the shared ``evaluations``; a replacement that
    raises the score by more than ``max_score_rise`` alone is not refitted, and none is
    taken that loses a point of an accurate fit (:func:`..exactness.keeps_every_point`:
    on data over decades the score reads only the largest values)."""
    scale = variance(y, weights) or 1.0
    floor = fvu_floor(y, scale, weights)

    def score(tokens, values):  # trials are scored once: evaluated, not compiled
        loss = mse(partial(evaluate, tokens), X, y, values, weights)
        return float(scores(log_fvu([loss], scale, floor), [len(tokens)], complexity_penalty)[0]), loss

    def worst(tokens, values) -> float:
        with np.errstate(all="ignore"):
            return worst_relative_error(evaluate(tokens, X, values), y)

    tokens, values = _folded(list(skeleton.tokens), np.asarray(constants, dtype=np.float64), X)
    best, loss = score(tokens, values)
    original = worst(tokens, values)
    refits = 0
    changed = True
    while changed and (evaluations is None or not evaluations.spent):
        changed = False
        # judged after a refit: the others compensate
        removals = [*_constant_removals(tokens, values), *_lines(tokens, values, X, weights)]
        trials = [
            *removals,
            *_subtree_replacements(tokens, values, X, weights),
            *_variable_removals(tokens, values, X, weights),
        ]
        trials = [_folded(*trial, X) for trial in trials]
        judged = []
        for i, trial in enumerate(trials):
            if evaluations is not None and evaluations.late:
                break  # with max_time: none judged after the deadline (the loop below then stops)
            judged.append((score(*trial)[0], len(trial[0]), i))
        judged.sort()
        for trial_score, _, i in judged:
            if evaluations is not None and evaluations.spent:
                break
            trial_tokens, trial_values = trials[i]
            if trial_score > best:
                if refits >= MAX_REFITS or not len(trial_values):
                    continue
                if trial_score > best + max_score_rise and i >= len(removals):
                    continue
                refits += 1
                refitted = least_squares_run(
                    PrefixProgram(trial_tokens), X, y, trial_values, weights=weights, evaluations=evaluations
                )
                trial_values = trial_values if refitted is None else refitted
                trial_score = score(trial_tokens, trial_values)[0]
            if trial_score <= best and keeps_every_point(worst(trial_tokens, trial_values), original):
                tokens, values = trial_tokens, trial_values
                best, loss = score(tokens, values)
                changed = True
                break
    return Fitted(Skeleton(tokens), values, loss)


def prune_best(
    skeletons: list[Skeleton],
    constants: list[np.ndarray],
    losses: list[float],
    X: np.ndarray,
    y: np.ndarray,
    complexity_penalty: float,
    weights: np.ndarray | None = None,
    evaluations: Evaluations | None = None,
    max_score_rise: float = SearchSettings.pruning_score_rise,
) -> tuple[int, Fitted] | None:
    """The row with the lowest selection score, pruned (:func:`prune`): its index and
    its pruned fit; ``None`` when nothing could be removed."""
    variances = variance(y, weights) or 1.0
    complexity = [len(skeleton) for skeleton in skeletons]
    fvus = log_fvu(np.asarray(losses, dtype=np.float64), variances, fvu_floor(y, variances, weights))
    row = lowest(scores(fvus, complexity, complexity_penalty))
    pruned = prune(skeletons[row], constants[row], X, y, complexity_penalty, weights, evaluations, max_score_rise)
    return None if len(pruned.skeleton) == len(skeletons[row]) else (row, pruned)
