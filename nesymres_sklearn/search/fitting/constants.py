"""Fitting the constants of a skeleton: Levenberg-Marquardt on the residuals.

The residuals are divided by ``sqrt(n * var(y))``, so their sum of squares is the MSE
divided by the variance of ``y`` and tolerances do not depend on the scale of the data.
With sample weights (normalised to mean 1) residuals are multiplied by their square
roots, and MSE and variance are the weighted ones.
The Jacobian is exact, from :meth:`PrefixProgram.value_and_jacobian`. The first start
sets every constant to 1; further starts draw from U(-5, 5), and restarts stop once a
fit is exact. Non-finite residuals count as large ones, so the optimiser steps back
into the skeleton's domain. The constants kept are the best ones the optimiser
evaluated, re-evaluated. MINPACK gets one more constant that changes nothing, which
keeps a read past the Jacobian in SciPy's MINPACK from making fits irreproducible
(see :func:`least_squares_run`).

On the bundled model's beam-32 candidates for 20 AI-Feynman equations, MINPACK's
Levenberg-Marquardt took 5.7 ms per candidate against 8.7 ms for BFGS with the same
gradients, with the same exact fits (91 against 92); see ``docs/usage.md``. MINPACK is
called through SciPy's ``leastsq`` (``least_squares`` wraps the same routine in checks
that cost more than the residuals), and the residuals and the Jacobian come from the
program's compiled code (:attr:`PrefixProgram.compiled`), with the inputs checked once
per run: together 3x faster than the interpreted program through ``least_squares``
(1.74 to 0.52 s of constant fitting for ``exp(-x0)*x1**2 + cos(x0*x1)``, beam 32).

Faster still, a *runner* in compiled code (:class:`.operon.fitting.OperonConstantFitter`,
Operon's Levenberg-Marquardt in C++) takes each start first (:func:`run_start`); its
float32 fits that are near exact are polished by Gauss-Newton steps in float64
(:func:`polish`); from a start outside the skeleton's domain MINPACK steps into it
and the runner goes on from there. On the 52 AI-Feynman
equations (beam 32, 128 points) that cut the median constant fitting from 0.19-0.20 to
0.09 s (``benchmarks/results/fit-speed/fit-benchmark-aifeynman*.md``).
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import numpy as np
from scipy.optimize import least_squares, leastsq

from ...expression.program import PrefixProgram, evaluate
from ..budget import Deadline
from ..exactness import EXACT_FIT, is_exact, is_near_exact, typical_share
from ..fitted import mse
from ..problem import variance
from ..settings import SearchSettings

# Residual given to points where the skeleton is undefined (in units of std(y)).
UNDEFINED_RESIDUAL = 1e3
# Evaluations per start: skeletons that do not fit by then rarely win.
MAX_EVALUATIONS = 100
TOLERANCE = 1e-10
# A compiled run's near-exact fit is polished in float64 in at most this many Gauss-Newton steps.
POLISH_STEPS = 4
# An evaluation of a program with its Jacobian costs about its tokens times its free
# constants and one: up to this much (32 tokens and 3 constants, beyond the network's
# longest skeletons) it counts as one of the shared Evaluations, beyond in proportion
# (Operon writes equations of 70 tokens and 15 constants, which count 9). With 64, a
# fit on x scaled by 1e-4 ran out of evaluations at another step of its pruning than
# the fit on x (tests/test_estimator.py::test_units_of_x_do_not_change_the_skeletons).
EVALUATION_WORK = 128


@dataclass(frozen=True)
class ConstantFit:
    """Result of fitting one skeleton."""

    constants: np.ndarray
    mse: float
    n_restarts_run: int


class _Stopped(Exception):
    pass


class Evaluations:
    """A number of residual evaluations that the least-squares runs of one task share:
    a bound on its work that, unlike a :class:`.budget.Deadline`, does not depend on
    the clock (the selection's refits, so that the selected equation does not either).
    An evaluation of a program larger than :data:`EVALUATION_WORK` counts as more than
    one, in proportion to its cost. With ``max_time`` a ``deadline`` ends them too:
    once it passed, none is left."""

    def __init__(self, limit: int, deadline=None):
        self.left = limit
        self.deadline = deadline

    def take(self, count: float = 1.0) -> bool:
        """Spend ``count`` evaluations; ``False`` when they were not left."""
        self.left -= count
        return self.left >= 0 and not self.late

    @property
    def spent(self) -> bool:
        return self.left <= 0 or self.late

    @property
    def late(self) -> bool:
        """Whether the deadline has passed (never without one)."""
        return self.deadline is not None and self.deadline.passed()


def least_squares_run(
    program: PrefixProgram,
    X: np.ndarray,
    y: np.ndarray,
    start: np.ndarray,
    *,
    fixed: np.ndarray | None = None,
    free: list[int] | None = None,
    deadline: Deadline | None = None,
    evaluations: Evaluations | None = None,
    weights: np.ndarray | None = None,
    x_scale: float | str = "jac",
    until_defined: bool = False,
) -> np.ndarray | None:
    """One Levenberg-Marquardt run from ``start`` over the constants at positions
    ``free`` (default: all of them), the others held at their values in ``fixed``;
    ``weights`` (mean 1) weight the squared residuals; ``x_scale`` is MINPACK's scaling
    of the constants (SciPy's: ``"jac"`` rescales by the Jacobian's column norms, as
    MINPACK itself does; 1.0 leaves them unscaled).

    Returns the full constant vector with the lowest cost it evaluated, or ``None``
    when the ``deadline`` passed, or the shared ``evaluations`` were spent, before the
    first evaluation. With ``until_defined`` the run stops at the first constants at
    which the program is defined at every point and returns them (``None`` when it
    evaluated none): a start outside the skeleton's domain stepped back into it.
    """
    scale = np.sqrt(len(y) * (variance(y, weights) or 1.0))
    if weights is not None:
        scale = scale / np.sqrt(weights)
    column_scale = np.reshape(scale, (-1, 1))
    free = list(range(program.n_constants)) if free is None else list(free)
    base = np.ones(program.n_constants) if fixed is None else np.array(fixed, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    code = program.compiled
    # MINPACK's Levenberg-Marquardt gets one more constant that changes nothing (a zero
    # Jacobian column, which ``full`` ignores). SciPy's C translation of MINPACK (1.15 to
    # 1.17 at least) reads one number too many when ``qrfac`` recomputes a column norm,
    # which happens on rank-deficient Jacobians (``c*exp((c*x)**3*(c*y)**3)``); for the
    # last column that number lay past the Jacobian's memory, and the same inputs gave
    # different constants from call to call. A zero column is never pivoted away from the
    # end and its norm is never recomputed, so the extra read lands inside the Jacobian.
    # It needs at least as many residuals as constants; with fewer, the trust-region
    # method runs (on the constants alone).
    padded = len(y) > len(free)
    charge = max(1.0, len(program.tokens) * (len(free) + 1) / EVALUATION_WORK)
    best_seen = {"cost": np.inf, "constants": None}

    every = free == list(range(program.n_constants))  # all constants free: no gather or scatter

    def full(values):
        if every:
            return values[: len(free)].copy()
        constants = base.copy()
        constants[free] = values[: len(free)]
        return constants

    def residuals(values):
        if (deadline is not None and deadline.passed()) or (evaluations is not None and not evaluations.take(charge)):
            raise _Stopped
        constants = full(values)
        r = (code.values(X, constants) - y) / scale
        defined = np.isfinite(r)
        if until_defined and defined.all():  # inside the domain: that point is the result
            best_seen["constants"] = constants
            raise _Stopped
        r = np.where(defined, r, UNDEFINED_RESIDUAL)
        cost = float(r @ r)
        if not until_defined and cost < best_seen["cost"]:
            best_seen["cost"], best_seen["constants"] = cost, constants
        return r

    def jacobian(values):
        J = np.zeros((len(y), len(free) + padded))
        jacobian_of_all = code.values_and_jacobian(X, full(values))[1]
        J[:, : len(free)] = (jacobian_of_all if every else jacobian_of_all[:, free]) / column_scale
        J[~np.isfinite(J)] = 0.0
        return J

    start = np.asarray(start, dtype=np.float64)
    with np.errstate(all="ignore"), _quiet(), contextlib.suppress(_Stopped):
        if padded:
            diag = None if isinstance(x_scale, str) else np.full(len(free) + 1, 1.0 / x_scale)
            leastsq(
                residuals, np.append(start, 0.0), Dfun=jacobian, maxfev=MAX_EVALUATIONS,
                xtol=TOLERANCE, ftol=TOLERANCE, gtol=TOLERANCE, diag=diag,
            )  # fmt: skip
        else:
            least_squares(
                residuals, start, jac=jacobian, method="trf", x_scale=x_scale,
                max_nfev=MAX_EVALUATIONS, xtol=TOLERANCE, ftol=TOLERANCE, gtol=TOLERANCE,
            )  # fmt: skip
    return best_seen["constants"]


#: True in a thread whose caller silenced warnings for the whole process (the threads of
#: ``n_jobs``): their fits leave the process-wide warning filters alone, which
#: ``warnings.catch_warnings`` in several threads at once would leave wrong.
_CALLER_SILENCED = contextvars.ContextVar("caller_silenced_warnings", default=False)


@contextlib.contextmanager
def warnings_silenced_by_caller():
    """Within it, this thread's fits do not touch the warning filters (the caller's
    ``warnings.catch_warnings`` covers them)."""
    token = _CALLER_SILENCED.set(True)
    try:
        yield
    finally:
        _CALLER_SILENCED.reset(token)


@contextlib.contextmanager
def ignoring_warnings():
    """Every warning ignored within it, in every thread (the filters are the process's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _quiet():
    return contextlib.nullcontext() if _CALLER_SILENCED.get() else ignoring_warnings()


class StartRunner(Protocol):
    """One optimiser run from a start, in compiled code (:class:`.operon.fitting.OperonConstantFitter`):
    the constants it ended at, or ``None`` when it could not run or did not end at
    finite constants."""

    def run(self, tokens: Sequence[str], start: np.ndarray) -> np.ndarray | None: ...


def fit_constants(
    program: PrefixProgram,
    X: np.ndarray,
    y: np.ndarray,
    n_restarts: int,
    rng: np.random.Generator,
    deadline: Deadline | None = None,
    weights: np.ndarray | None = None,
    x_scale: float | str = "jac",
    previous: ConstantFit | None = None,
    runner: StartRunner | None = None,
    start_range: float = SearchSettings.start_range,
    share: float | None = None,
) -> ConstantFit:
    """Fit the constants of ``program`` to ``(X, y)`` from up to ``n_restarts`` starts
    (``weights``, mean 1, weight the squared errors; ``x_scale``: see
    :func:`least_squares_run`): all ones, then uniform in ``[-start_range, start_range]``.

    ``previous`` continues an earlier call's fit of the same program: its starts are not
    run again, and ``rng`` must be the generator that drew them, as they left it (so a
    fit run in two calls equals one run in one). After the ``deadline`` no new start
    begins and a running optimisation stops at the best point it has evaluated.

    With a ``runner`` (unweighted data only), each start runs in its compiled code
    first (:func:`run_start`). A fit is exact, and no further start runs, at the
    problem's tolerance (``share``: :attr:`..problem.Problem.typical_share`, computed
    from ``y`` when not given).
    """
    k = program.n_constants
    values = program if runner is None else _interpreted(program)
    if k == 0:
        return ConstantFit(np.empty(0), mse(values, X, y, (), weights), 0)
    scale = variance(y, weights) or 1.0
    share = typical_share(y, scale, weights) if share is None else share
    best = ConstantFit(np.ones(k), mse(values, X, y, np.ones(k), weights), 0) if previous is None else previous
    for restart in range(best.n_restarts_run, max(1, n_restarts)):
        if is_exact(best.mse / (scale * share)) or (restart and deadline is not None and deadline.passed()):
            break
        start = np.ones(k) if restart == 0 else rng.uniform(-start_range, start_range, size=k)
        found, loss = run_start(program, X, y, start, deadline, weights, x_scale, runner, scale, share)
        if loss < best.mse or not np.isfinite(best.mse):
            best = ConstantFit(found if found is not None else best.constants, loss, restart + 1)
        else:
            best = ConstantFit(best.constants, best.mse, restart + 1)
    return best


def _interpreted(program: PrefixProgram) -> Callable:
    """``program``'s values computed node by node (:func:`.program.evaluate`, the same
    values): a program that a compiled runner fits is evaluated a few times only, fewer
    than would pay for compiling it."""
    return partial(evaluate, program.tokens)


def polish(
    program: PrefixProgram, X: np.ndarray, y: np.ndarray, constants: np.ndarray, loss: float, target: float = 0.0
):
    """Gauss-Newton steps in float64 from near-exact ``constants`` (MSE ``loss``), at most
    :data:`POLISH_STEPS`, while each lowers the MSE and it is above ``target``: the
    constants and MSE kept. From float32's optimum (relative error ~1e-7) the steps
    converge quadratically, so two or three reach float64's."""
    code = program.compiled
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(all="ignore"):
        for _ in range(POLISH_STEPS):
            if loss <= target:
                break
            values, jacobian = code.values_and_jacobian(X, constants)
            residuals = np.broadcast_to(values, y.shape) - y
            if not (np.all(np.isfinite(residuals)) and np.all(np.isfinite(jacobian))):
                break
            stepped = constants - np.linalg.lstsq(jacobian, residuals, rcond=None)[0]
            stepped_loss = mse(program, X, y, stepped)
            if not stepped_loss < loss:
                break
            constants, loss = stepped, stepped_loss
    return constants, loss


def run_start(
    program: PrefixProgram,
    X: np.ndarray,
    y: np.ndarray,
    start: np.ndarray,
    deadline: Deadline | None = None,
    weights: np.ndarray | None = None,
    x_scale: float | str = "jac",
    runner: StartRunner | None = None,
    scale: float | None = None,
    share: float | None = None,
) -> tuple[np.ndarray | None, float]:
    """The constants and MSE of one start: ``(None, inf)`` when nothing finite came out
    (``scale``: the variance of ``y``, or 1 when it is 0; ``share``:
    :func:`..exactness.typical_share` of ``y``; each computed when not given).

    With a ``runner`` the start runs in its compiled code first, and a fit within
    near exact (:func:`..exactness.is_near_exact`) is polished in float64 until it is exact
    (:func:`polish`; the runner may compute in float32, which stops at a normalised MSE
    near 1e-14; the selected equation is polished further, see
    :func:`.selection.final.polished`). Where the runner ends nowhere finite (a start
    outside the skeleton's domain, where its cost is not finite), the float64 run, which
    counts undefined points as large residuals, steps from the same start back into the
    domain, and the runner goes on from the first point it reaches there (where the
    runner fails inside the domain, the float64 run from the start decides).
    """
    if runner is not None and weights is None:
        found, loss = _run_compiled(program, X, y, start, runner)
        if not np.isfinite(loss):
            inside = least_squares_run(program, X, y, start, deadline=deadline, x_scale=x_scale, until_defined=True)
            if inside is None:
                return None, np.inf  # it never reached the domain
            if not np.array_equal(inside, start):
                found, loss = _run_compiled(program, X, y, inside, runner)
        if np.isfinite(loss):
            scale = (variance(y) or 1.0) if scale is None else scale
            if is_near_exact(loss / scale):
                share = typical_share(y, scale) if share is None else share  # unweighted here
                target = EXACT_FIT * scale * share
                found, loss = polish(program, X, y, found, loss, target=target)
            return found, loss
    found = least_squares_run(program, X, y, start, deadline=deadline, weights=weights, x_scale=x_scale)
    if found is None or not np.all(np.isfinite(found)):
        return None, np.inf  # the optimiser stepped to NaN or inf constants: nothing to keep
    return found, mse(program, X, y, found, weights)


def _run_compiled(program: PrefixProgram, X: np.ndarray, y: np.ndarray, start: np.ndarray, runner: StartRunner):
    """The ``runner``'s constants from ``start`` and their MSE (inf when not finite)."""
    found = runner.run(program.tokens, start)
    return found, (np.inf if found is None else mse(_interpreted(program), X, y, found))
