"""Whether Operon runs in a fit: pyoperon is installed, the allowed operators hold a
function of its search, and its share of the budget holds its first generation; and
whether it fits the network's constants. Importable without pyoperon."""

from __future__ import annotations

import logging

from ..search.budget import Budget, Calibration
from ..search.fitting.constants import MAX_EVALUATIONS, StartRunner
from ..search.problem import Problem
from .settings import OPERON_FUNCTIONS, OperonSettings, minimum_seconds, operon_functions

logger = logging.getLogger(__name__)


def _pyoperon_missing(error: ModuleNotFoundError) -> bool:
    return error.name is not None and error.name.startswith("pyoperon")


def constant_runner(problem: Problem, optimizer: str) -> StartRunner | None:
    """Operon's Levenberg-Marquardt on the problem's data for the constant fitting
    (:class:`.fitting.OperonConstantFitter`) when ``optimizer`` is ``"operon"``,
    pyoperon is installed and the data are unweighted; else ``None`` (MINPACK alone)."""
    if optimizer != "operon" or problem.weights is not None:
        return None
    try:
        from .fitting import OperonConstantFitter
    except ModuleNotFoundError as error:
        if not _pyoperon_missing(error):
            raise
        return None
    return OperonConstantFitter(problem, MAX_EVALUATIONS)


def operon_stage(required: bool):
    """The Operon stage (:func:`.operon.stage.refine_candidates`); without pyoperon, an
    error that says how to install it when ``required``, else ``None``."""
    try:
        from .stage import refine_candidates
    except ModuleNotFoundError as error:
        if not _pyoperon_missing(error):
            raise
        if not required:
            return None
        raise ImportError(
            'refine="operon" needs pyoperon, which is not installed: pip install "nesymres-sklearn[operon]" '
            "(or pip install pyoperon)."
        ) from None
    return refine_candidates


def holds_operon(budget: Budget, settings: OperonSettings, n_points: int, calibration: Calibration) -> bool:
    """Whether Operon's share of the ``budget`` holds its first generation on
    ``n_points`` at the ``calibration``'s pace (:func:`.settings.minimum_seconds`); with
    a smaller budget the network has all of it."""
    if budget.max_time is None:
        return True
    window = budget.refinement_end.at - budget.network_end.at
    if window >= minimum_seconds(settings, n_points, calibration):
        return True
    logger.info(
        "Operon's share of max_time (%.3fs) is too short for its first generation: the network has all.", window
    )
    return False


def without_operon(operators: frozenset[str] | None) -> str | None:
    """Why Operon cannot search under the allowed ``operators``: none of them is a
    function of its search (:data:`.settings.OPERON_FUNCTIONS`), and a genetic programming
    without functions has only constants and variables to build with; ``None`` when it can."""
    if operon_functions(operators):
        return None
    return (
        f"Operon has none of the operators {', '.join(map(repr, sorted(operators)))}: its search knows "
        f"{', '.join(map(repr, OPERON_FUNCTIONS))} only, so the network works alone (refine=None does so "
        "without this warning)."
    )


def operon_islands(problem: Problem, settings: OperonSettings, seed: int, operators, n_workers: int, calibration):
    """Operon's islands, a source of the continuation (:class:`.islands.OperonIslands`),
    with the allowed ``operators``; call it once :func:`operon_stage` found pyoperon."""
    from .islands import OperonIslands
    from .trees import operon_symbols

    return OperonIslands(problem, settings, seed, operon_symbols(operators), n_workers, calibration)
