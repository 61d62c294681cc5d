"""Selection for prediction when no candidate is exact: held-out folds decide among the
rows of the Pareto front.

The points are split into ``SearchSettings.held_out_folds`` folds (seeded); each row of
the front has its constants refitted on all folds but one and its squared errors read
on the fold left out. The refit is one Gauss-Newton step from the row's fitted
constants (exact for a row linear in its constants, such as the plain models): one
Jacobian per row and a small least-squares solve per fold, so it costs milliseconds and
reads no clock. The row with the lowest held-out mean squared error leads; the simplest
row whose held-out error exceeds it by at most ``SearchSettings.held_out_standard_errors``
standard errors of the paired differences is chosen (1: the one-standard-error rule;
among equally long rows, the one with fewer constants):
a row whose extra terms or columns only fitted the training points loses. The plain
models compete too, on the front or not. With the estimated noise level (``noise_std_``,
:mod:`..noise`), the simplest row whose held-out error is consistent with the noise
(within ``SearchSettings.held_out_noise_errors`` standard errors of a mean of squared
Gaussian noise, ``sqrt(2/n)`` of it, above the noise variance or above the lowest
held-out error where that is lower) is chosen first: it explains the points down to
the noise, and a longer row would fit the noise. That rule looks for a law: it reads the
estimate times ``SearchSettings.held_out_noise_scale`` (the estimate runs low on laws
that the points resolve), and the plain models are not among its rows (on data with no
law, a short line within that band would win over a better line of all the features).
But a searched row's structure was chosen on all the points, so its held-out error runs
low, where a plain model's does not (``SearchSettings.held_out_plain_first``): the plain
models pass the information gate whatever their training error, and where a plain line
is consistent with the noise too, the best such line wins unless the simplest consistent
searched row's held-out error is lower by more than the margin; where no searched row
is consistent, the same holds between the best line within the margin of the lowest
error and the simplest row within it, where that is a searched row with variables (a
constant's structure read nothing of the points).

A miss must still be a sane model, so only rows whose held-out error is below that of
the mean of the other folds compete (:func:`sane_rows`): a row worse than the mean on
points it was not fitted on, or whose errors are not finite, is never chosen (its
errors' spread would also widen the margin it is judged by). Then every variable of the
chosen row must beat copies of its column in shuffled order on held-out points
(:func:`unsupported_on_held_out`, the held-out form of :mod:`.variable_support`'s test,
which reads the training error); the rows that use a variable that does not are left
out and the choice is made again. The plain models stay (each is tested where it is
chosen): a variable that one row uses too little to need is not left out of the linear
model that needs it. The line whose features were eliminated backward on the same
folds (origin ``"backward"``, :func:`..variables.plain.backward_linear_candidate`) is
left out only where none of its features passes: removing any of them erred more on
held-out points, and correlated measurements (each weak where the others stand in)
fail the shuffled copies one by one. Where no variable of the chosen row passes, only that
row is left out: a few extreme values that hold the variance (``y`` over decades) let
no column of a row beat its shuffled copies, which rules out the row as a whole, not
each of its columns in every other row (the constant would then win whatever the others
explain on held-out points)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...expression.skeleton import Skeleton
from ...expression.tokens import variable_index
from ..budget import Deadline
from ..fitted import mse
from ..fitting.constants import Evaluations
from ..problem import Problem
from ..settings import SearchSettings
from .pruning import variables_of
from .table import FOLD_CHOSEN_ORIGINS, LINE_ORIGINS, PLAIN_ORIGINS, CandidateTable
from .variable_support import SHUFFLES


def held_out_folds(n: int, n_folds: int, seed: int) -> np.ndarray:
    """The fold of each of ``n`` points: a permutation seeded with ``seed``, modulo ``n_folds``."""
    return np.random.default_rng(seed).permutation(n) % n_folds


def held_out_errors(skeleton: Skeleton, constants: np.ndarray, problem: Problem, folds: np.ndarray) -> np.ndarray:
    """Each point's (weighted) squared error when its fold is left out of the fit of
    ``constants`` (one Gauss-Newton step); inf where it is not finite."""
    root = np.ones(len(problem.y)) if problem.weights is None else np.sqrt(problem.weights)
    with np.errstate(all="ignore"):
        values, jacobian = skeleton.program.value_and_jacobian(problem.X, constants)
        residuals = problem.y - values
        errors = np.full(len(problem.y), np.inf)
        if not (np.all(np.isfinite(values)) and np.all(np.isfinite(jacobian))):
            return errors
        for fold in np.unique(folds):
            train, test = folds != fold, folds == fold
            step = np.zeros(skeleton.n_constants)
            if skeleton.n_constants:
                weighted = jacobian[train] * root[train, None]
                step = np.linalg.lstsq(weighted, residuals[train] * root[train], rcond=None)[0]
            errors[test] = ((residuals[test] - jacobian[test] @ step) * root[test]) ** 2
    return np.where(np.isfinite(errors), errors, np.inf)


def _fewer_constants(table: CandidateTable, front: list[int]) -> list[int]:
    """For each row of ``front``, the rows as long with fewer constants, the lowest
    training loss of each number of constants (the front keeps only the lowest loss of
    each length: ``c - x`` hides behind ``c*x + c``)."""
    losses = table.equations["loss"].to_numpy()
    complexity = table.equations["complexity"].to_numpy()
    constants = [skeleton.n_constants for skeleton, *_ in table.fitted]
    most = {}
    for i in front:
        most[complexity[i]] = max(most.get(complexity[i], -1), constants[i])
    best: dict[tuple[int, int], int] = {}
    for i in np.flatnonzero(np.isin(complexity, list(most)) & np.isfinite(losses)):
        key = (complexity[i], constants[i])
        if i not in front and constants[i] < most[complexity[i]] and (key not in best or losses[i] < losses[best[key]]):
            best[key] = int(i)
    return list(best.values())


def mean_held_out_errors(problem: Problem, folds: np.ndarray) -> np.ndarray:
    """Each point's (weighted) squared error when its fold is predicted by the mean of the others."""
    weights = np.ones(len(problem.y)) if problem.weights is None else problem.weights
    errors = np.empty(len(problem.y))
    for fold in np.unique(folds):
        test = folds == fold
        errors[test] = weights[test] * (problem.y[test] - np.average(problem.y[~test], weights=weights[~test])) ** 2
    return errors


def sane_rows(table: CandidateTable, errors: dict, problem: Problem, folds: np.ndarray) -> list[int]:
    """The rows of ``errors`` (their held-out errors) without variables, and those whose
    mean held-out error is below the mean's (:func:`mean_held_out_errors`)."""
    ceiling = float(np.mean(mean_held_out_errors(problem, folds)))
    return [
        i for i in sorted(errors) if not variables_of(list(table.fitted[i][0].tokens)) or np.mean(errors[i]) < ceiling
    ]


def unsupported_on_held_out(
    skeleton: Skeleton,
    constants: np.ndarray,
    problem: Problem,
    folds: np.ndarray,
    settings: SearchSettings,
    seed: int,
    evaluations: Evaluations | None = None,
) -> list[str]:
    """The variables of the row whose mean held-out error is not below that of the best of
    :data:`.variable_support.SHUFFLES` copies with the variable's column shuffled (each
    refitted as the folds are: one Gauss-Newton step from ``constants``) by more than
    ``SearchSettings.held_out_standard_errors`` standard errors of their paired
    differences: what the variable adds on points it was not fitted on, a column of
    noise adds as well. A variable without whose order the row is nowhere finite (each
    copy's error is not: a root of a difference of columns) is supported. Each copy
    takes one of ``evaluations``; variables not tested before they are spent count as
    supported."""
    errors = held_out_errors(skeleton, constants, problem, folds)
    rng = np.random.default_rng(seed)
    unsupported = []
    for variable in variables_of(list(skeleton.tokens)):
        column, best = variable_index(variable), None
        for _ in range(SHUFFLES):
            if evaluations is not None and not evaluations.take():
                return unsupported
            X = problem.X.copy()
            X[:, column] = rng.permutation(X[:, column])
            copy = held_out_errors(skeleton, constants, dataclasses.replace(problem, X=X), folds)
            if best is None or np.mean(copy) < np.mean(best):
                best = copy
        if np.all(np.isfinite(errors)) and not np.isfinite(np.mean(best)):
            continue  # without the column's order the row is not even finite (a root of a difference)
        with np.errstate(all="ignore"):
            gain = float(np.mean(best) - np.mean(errors))
            margin = settings.held_out_standard_errors * float(np.std(best - errors)) / np.sqrt(len(errors))
        if not gain > margin:
            unsupported.append(variable)
    return unsupported


def _margin(errors: np.ndarray, reference: np.ndarray, settings: SearchSettings) -> float:
    """``SearchSettings.held_out_standard_errors`` standard errors of the paired
    differences of ``errors`` from the ``reference`` row's."""
    with np.errstate(all="ignore"):
        return settings.held_out_standard_errors * float(np.std(errors - reference)) / np.sqrt(len(errors))


def _choice(
    errors: dict,
    complexity: np.ndarray,
    table: CandidateTable,
    n: int,
    settings,
    noise: float,
    plain: set[int],
    lines: set[int],
) -> int:
    """Among the rows with ``errors``: the simplest consistent with the noise (not one of
    the ``plain`` models; one of the plain ``lines`` where it does as well), else the
    simplest within the margin of the lowest (with ``held_out_plain_first``, one of the
    ``lines`` where it does as well and that row is a searched one with variables; see
    the module docstring)."""
    means = {i: float(np.mean(e)) for i, e in errors.items()}
    leader = min(means, key=lambda i: (means[i], complexity[i]))
    noise = noise * settings.held_out_noise_scale  # the estimate runs low where the points resolve a law
    # the noise variance, or the lowest held-out error where that is lower (a law that varies
    # faster than the points resolve inflates the estimate); nan without an estimate
    bound = min(noise**2, means[leader]) * (1 + settings.held_out_noise_errors * np.sqrt(2 / n))
    consistent = [i for i in errors if means[i] <= bound and i not in plain]

    def simplest(rows: list[int]) -> int:
        """The shortest of ``rows``, then the one with fewer constants, then the lower error."""
        return min(rows, key=lambda i: (complexity[i], table.fitted[i][0].n_constants, means[i]))

    def or_line(row: int, candidates: list[int]) -> int:
        """The best plain line among ``candidates`` where it errs at most the margin more
        than ``row`` (with ``held_out_plain_first``), else ``row``."""
        candidate_lines = [i for i in candidates if i in lines]
        if not (settings.held_out_plain_first and candidate_lines):
            return row
        line = min(candidate_lines, key=lambda i: (means[i], complexity[i]))
        return line if means[line] - means[row] <= _margin(errors[line], errors[row], settings) else row

    if consistent:  # a law explained down to the noise: the simplest such row, unless a plain line does as well
        return or_line(simplest(consistent), [i for i in errors if means[i] <= bound])
    within = [
        i
        for i, e in errors.items()
        if np.isfinite(means[i]) and means[i] - means[leader] <= _margin(e, errors[leader], settings)
    ]
    row = simplest(within)
    if row in plain or not variables_of(list(table.fitted[row][0].tokens)):
        return row  # a plain model, or a constant: its structure read nothing of the points
    return or_line(row, within)  # a searched row's structure read the points: its held-out error reads low


def held_out_choice(
    table: CandidateTable,
    problem: Problem,
    settings: SearchSettings,
    seed: int,
    noise: float = float("nan"),
    evaluations: Evaluations | None = None,
    deadline: Deadline | None = None,
) -> int:
    """The row of ``table`` that the held-out folds choose among the sane rows
    (:func:`sane_rows`) of its Pareto front, the plain models (:data:`PLAIN_ORIGINS`) and
    the front's lengths with fewer constants that pass the information gate
    (:func:`information_gate`, ``SearchSettings.information_criterion``), without the variables that do not beat
    their shuffled copies on held-out points (:func:`unsupported_on_held_out`, refits
    sharing ``evaluations``; a chosen row none of whose variables do is left out alone);
    ``table.best_index`` with fewer than two folds or rows to compare, or none sane, or
    when the ``deadline`` (with ``max_time``) passes before every row's held-out errors
    are read; ``noise``: the estimated noise level in the units of
    ``problem.y`` (NaN: none)."""
    losses, origins = table.equations["loss"].to_numpy(), table.equations["origin"]
    is_plain = origins.isin(PLAIN_ORIGINS).to_numpy()
    front = [int(i) for i in np.flatnonzero(table.equations["pareto"].to_numpy() | is_plain) if np.isfinite(losses[i])]
    front += _fewer_constants(table, front)
    n_folds = min(settings.held_out_folds, len(problem.y))
    if n_folds < 2:
        return table.best_index
    plain = set(np.flatnonzero(is_plain).tolist())
    lines = set(np.flatnonzero(origins.isin(LINE_ORIGINS).to_numpy()).tolist())
    if settings.information_criterion is not None:
        per_constant = np.log(len(problem.y)) if settings.information_criterion == "bic" else 2.0
        gated = information_gate(table, problem, front, per_constant, settings.information_per_token)
        # the plain models' structure reads no training error to gate: the folds judge them
        front = gated + [i for i in front if i in plain and i not in gated] if settings.held_out_plain_first else gated
    if len(front) < 2:
        return front[0] if front else table.best_index
    folds = held_out_folds(len(problem.y), n_folds, seed)
    complexity = table.equations["complexity"].to_numpy()
    errors = {}
    for i in front:
        if deadline is not None and deadline.passed():
            return table.best_index  # not every row read in time
        errors[i] = held_out_errors(*table.fitted[i][:2], problem, folds)
    errors = {i: errors[i] for i in sane_rows(table, errors, problem, folds)}
    chosen, left_out = table.best_index, set()
    while errors:
        chosen = _choice(errors, complexity, table, len(problem.y), settings, noise, plain, lines)
        skeleton, constants = table.fitted[chosen][:2]
        unsupported = unsupported_on_held_out(skeleton, constants, problem, folds, settings, seed, evaluations)
        every_one = set(unsupported) == set(variables_of(list(skeleton.tokens)))
        if not unsupported or (table.equations["origin"].iloc[chosen] in FOLD_CHOSEN_ORIGINS and not every_one):
            return chosen  # the backward line: each feature's removal already erred more on these folds
        errors.pop(chosen)
        if every_one:
            continue
        left_out.update(unsupported)
        errors = {i: e for i, e in errors.items() if i in plain or not left_out & set(table.fitted[i][0].tokens)}
    return chosen


def information_gate(
    table: CandidateTable, problem: Problem, rows: list[int], per_constant: float, per_token: float
) -> list[int]:
    """The ``rows`` that no shorter row beats on the information criterion
    ``n log(mse) + per_constant * k + per_token * complexity`` (training points, ``k``
    the row's constants): a longer row stays only where its closer fit pays for what
    it adds."""
    n = len(problem.y)
    complexity = table.equations["complexity"].to_numpy()
    criterion = {}
    for i in rows:
        skeleton, constants, _ = table.fitted[i]
        loss = mse(skeleton.program, problem.X, problem.y, constants, problem.weights)
        criterion[i] = n * np.log(max(loss, np.finfo(float).tiny)) + per_constant * skeleton.n_constants
        criterion[i] += per_token * complexity[i]
    kept, best = [], np.inf
    for i in sorted(rows, key=lambda i: (complexity[i], criterion[i])):
        if np.isfinite(criterion[i]) and criterion[i] < best:
            kept.append(i)
            best = criterion[i]
    return kept
