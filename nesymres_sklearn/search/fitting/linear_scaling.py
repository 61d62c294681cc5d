"""Outer linear scaling: ``a*f(x) + b`` for the best candidates, solved in closed form.

A skeleton can have the right shape but no room for an outer factor or offset
(``sin(c*x)`` for data ``2*sin(x) + 1``). For the ``n_scaled`` best fitted candidates
of a decoding that are not exact, the weighted least-squares ``a`` and ``b`` for
``a*f(x) + b`` come in closed form from the fitted values of ``f``. Where that
lowers the fraction of variance unexplained by at least ``scaled_min_gain`` (relative, a
:class:`.SearchSettings` field), the
skeleton ``c + c*f`` is fitted by one Levenberg-Marquardt run started from
``(b, a, f's constants)`` and joins the candidates (origin ``"scaled"``); selection's
complexity term decides whether the two extra constants are worth it, and readable
constants drop an ``a`` of 1 or a ``b`` of 0 that the fit did not need.
"""

from __future__ import annotations

import numpy as np

from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT
from ..budget import Deadline
from ..fitted import mse
from ..problem import Problem
from ..settings import SearchSettings
from .candidates import Candidate
from .constants import ConstantFit, StartRunner, run_start


def outer_scaling(f: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float] | None:
    """The (weighted) least-squares ``(a, b)`` of ``y ~ a*f + b``; ``None`` when ``f``
    is not finite or constant on the data."""
    if not np.all(np.isfinite(f)) or np.ptp(f) == 0:
        return None
    root = np.ones(len(y)) if weights is None else np.sqrt(weights)
    design = np.column_stack([f, np.ones(len(y))]) * root[:, None]
    a, b = np.linalg.lstsq(design, y * root, rcond=None)[0]
    return (float(a), float(b)) if np.isfinite(a) and np.isfinite(b) else None


def is_scaled(skeleton: Skeleton) -> bool:
    """Whether the skeleton already starts with ``c + c*...``."""
    tokens = skeleton.tokens
    return tokens[:4] == ("add", CONSTANT, "mul", CONSTANT)


def scaled_candidates(
    candidates: list[Candidate],
    fits: list[ConstantFit],
    problem: Problem,
    seen: set,
    settings: SearchSettings | None = None,
    deadline: Deadline | None = None,
    runner: StartRunner | None = None,
) -> tuple[list[Candidate], list[ConstantFit]]:
    """``c + c*f`` candidates, fitted, for the ``n_scaled`` best (``settings``, default :class:`.SearchSettings`) of
    ``candidates`` where the closed-form outer scaling of their fitted ``f`` helps (see
    the module's docstring), leaving out skeletons whose key is in ``seen`` (which is
    updated); a ``runner`` runs each fit in compiled code first (:func:`.constants.run_start`)."""
    settings = SearchSettings() if settings is None else settings
    X, y, weights = problem.X, problem.y, problem.weights
    order = [i for i in np.argsort([fit.mse for fit in fits], kind="stable") if np.isfinite(fits[i].mse)]
    found: tuple[list[Candidate], list[ConstantFit]] = ([], [])
    for i in order[: settings.n_scaled]:
        candidate, fit = candidates[i], fits[i]
        if problem.is_exact(fit.mse) or is_scaled(candidate.skeleton) or candidate.skeleton.tokens == (CONSTANT,):
            continue
        with np.errstate(all="ignore"):
            f = candidate.skeleton.program(X, fit.constants)
        outer = outer_scaling(f, y, weights)
        if outer is None:
            continue
        a, b = outer
        with np.errstate(all="ignore"):
            closed_form = float(np.average((a * f + b - y) ** 2, weights=weights))
        if not closed_form < (1 - settings.scaled_min_gain) * fit.mse:
            continue
        skeleton = Skeleton(("add", CONSTANT, "mul", CONSTANT, *candidate.skeleton.tokens))
        if skeleton.key in seen:
            continue
        seen.add(skeleton.key)
        start = np.concatenate([[b, a], fit.constants])
        constants, loss = run_start(skeleton.program, X, y, start, deadline, weights, settings.lm_x_scale, runner)
        if constants is None:
            constants, loss = start, mse(skeleton.program, X, y, start, weights)
        found[0].append(Candidate(skeleton, candidate.log_prob, "scaled"))
        found[1].append(ConstantFit(constants, loss, 1))
    return found
