"""The candidate table and model selection (a pure function over that table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["expression", "skeleton", "loss", "complexity", "score", "log_prob", "origin"]


def candidate_table(rows: list[dict], complexity_penalty: float) -> tuple[pd.DataFrame, np.ndarray]:
    """Candidates sorted by ``score = loss + complexity_penalty * complexity``, then by
    complexity (ties keep the order of ``rows``).

    ``rows`` hold every column of :data:`COLUMNS` except ``score``. ``loss`` is the
    in-sample mean squared error (inf when the candidate is undefined on the data);
    ``complexity`` is the number of prefix tokens of the skeleton.

    Returns
    -------
    table : pandas.DataFrame
        Columns :data:`COLUMNS`, best first.
    order : ndarray of int
        ``order[i]`` is the position in ``rows`` of the table's row ``i``.
    """
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "score"])
    table["loss"] = table["loss"].astype(float)
    table["score"] = table["loss"] + complexity_penalty * table["complexity"].astype(float)
    order = np.lexsort((table["complexity"].to_numpy(), table["score"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)[COLUMNS], order


def best_index(table: pd.DataFrame) -> int:
    """Row of the selected equation: the lowest finite score."""
    finite = np.isfinite(table["score"].to_numpy())
    if not finite.any():
        raise ValueError("No candidate equation is finite on the training data.")
    return int(np.flatnonzero(finite)[np.argmin(table["score"].to_numpy()[finite])])
