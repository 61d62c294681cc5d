"""The candidate table and model selection (a pure function over that table).

Candidates are judged by a score that does not depend on the units of ``y`` and does
not reward fitting noise: the log of the fraction of variance unexplained (FVU, the
MSE divided by the variance of ``y``), floored at :data:`.exactness.FVU_FLOOR` (scaled for
data over decades, :attr:`.problem.Problem.fvu_floor`) so that exact fits tie,
plus ``complexity_penalty`` per prefix token. Lower is better, as the column name
``score_lower_is_better`` says. ``pareto`` marks the candidates that no other beats in
both complexity and loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..exactness import FVU_FLOOR

COLUMNS = [
    "expression",
    "skeleton",
    "loss",
    "log_fvu",
    "complexity",
    "score_lower_is_better",
    "pareto",
    "log_prob",
    "origin",
]


def log_fvu(loss: np.ndarray, variance: float, floor: float = FVU_FLOOR) -> np.ndarray:
    """``log(max(loss / variance, floor))``; inf where the loss is not finite."""
    with np.errstate(all="ignore"):
        fvu = np.asarray(loss, dtype=np.float64) / (variance or 1.0)
        return np.where(np.isfinite(fvu), np.log(np.maximum(fvu, floor)), np.inf)


def pareto_front(loss: np.ndarray, complexity: np.ndarray) -> np.ndarray:
    """Whether each candidate is on the front: no other has a complexity at most as
    high and a lower loss, or a lower complexity and a loss at most as high."""
    loss, complexity = np.asarray(loss, dtype=np.float64), np.asarray(complexity)
    front = np.zeros(len(loss), dtype=bool)
    best, best_complexity = np.inf, None
    for i in np.lexsort((loss, complexity)):  # by complexity, then loss
        if loss[i] < best or (loss[i] == best and complexity[i] == best_complexity):  # exact ties share a place
            front[i], best, best_complexity = True, loss[i], complexity[i]
    return front


def candidate_table(
    rows: list[dict], complexity_penalty: float, variance: float, floor: float = FVU_FLOOR
) -> tuple[pd.DataFrame, np.ndarray]:
    """Candidates sorted by score, then by complexity (ties keep the order of ``rows``).

    ``rows`` hold ``expression``, ``skeleton``, ``loss`` (the in-sample mean squared
    error, inf when the candidate is undefined on the data), ``complexity`` (prefix
    tokens of the skeleton), ``log_prob`` and ``origin``; ``variance`` is that of the
    training ``y``, ``floor`` the fraction of variance unexplained at which fits tie.

    Returns
    -------
    table : pandas.DataFrame
        Columns :data:`COLUMNS`, best first.
    order : ndarray of int
        ``order[i]`` is the position in ``rows`` of the table's row ``i``.
    """
    table = pd.DataFrame(rows, columns=["expression", "skeleton", "loss", "complexity", "log_prob", "origin"])
    table["loss"] = table["loss"].astype(float)
    table["log_fvu"] = log_fvu(table["loss"].to_numpy(), variance, floor)
    table["score_lower_is_better"] = scores(
        table["log_fvu"].to_numpy(), table["complexity"].to_numpy(), complexity_penalty
    )
    table["pareto"] = pareto_front(table["loss"].to_numpy(), table["complexity"].to_numpy())
    order = np.lexsort((table["complexity"].to_numpy(), table["score_lower_is_better"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)[COLUMNS], order


def scores(log_fvus: np.ndarray, complexity: np.ndarray, complexity_penalty: float) -> np.ndarray:
    """``score_lower_is_better`` of candidates with these ``log_fvu`` and complexities."""
    return np.asarray(log_fvus, dtype=np.float64) + complexity_penalty * np.asarray(complexity, dtype=np.float64)


def lowest(values: np.ndarray) -> int:
    """Position of the lowest finite score."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.any():
        raise ValueError("No candidate equation is finite on the training data.")
    return int(np.flatnonzero(finite)[np.argmin(values[finite])])


def best_index(table: pd.DataFrame) -> int:
    """Row of the selected equation: the lowest finite score."""
    return lowest(table["score_lower_is_better"].to_numpy())
