"""The candidate table and model selection (a pure function over that table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["expression", "skeleton", "loss", "complexity", "score", "log_prob", "origin"]


def candidate_table(rows: list[dict], complexity_penalty: float) -> pd.DataFrame:
    """Candidates sorted by ``score = loss + complexity_penalty * complexity``.

    ``rows`` hold every column of :data:`COLUMNS` except ``score``. ``loss`` is the
    in-sample mean squared error (inf when the candidate is undefined on the data);
    ``complexity`` is the number of prefix tokens of the skeleton.
    """
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "score"])
    table["loss"] = table["loss"].astype(float)
    table["score"] = table["loss"] + complexity_penalty * table["complexity"].astype(float)
    table = table.sort_values(["score", "complexity"], kind="stable", ignore_index=True)
    return table[COLUMNS]


def best_index(table: pd.DataFrame) -> int:
    """Row of the selected equation: the lowest finite score."""
    finite = np.isfinite(table["score"].to_numpy())
    if not finite.any():
        raise ValueError("No candidate equation is finite on the training data.")
    return int(np.flatnonzero(finite)[np.argmin(table["score"].to_numpy()[finite])])
