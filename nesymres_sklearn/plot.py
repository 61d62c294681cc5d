"""The Pareto front of a fit: each candidate's loss against its complexity, the front
joined, the selected equation marked. Needs matplotlib (``pip install
"nesymres-sklearn[plot]"``), imported when a plot is asked for.

The loss is drawn as the table's ``log_fvu`` (the log of the mean squared error divided
by the variance of ``y``, floored at 1e-12 so that exact fits show): it does not depend
on the units of ``y`` and spans the many orders of magnitude between candidates.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted


def pareto(estimator, target: int | None = None, ax=None):
    """Plot ``estimator.equations_`` (of column ``target`` with several targets) on
    ``ax`` (default: a new figure's) and return the axes. An unfitted ``estimator``
    raises scikit-learn's ``NotFittedError``."""
    check_is_fitted(estimator, "expression_")
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("matplotlib"):
            raise
        raise ImportError('pareto() needs matplotlib: pip install "nesymres-sklearn[plot]" (or matplotlib).') from None
    equations, best = estimator.equations_, estimator.best_index_
    if isinstance(equations, list):
        if target is None:
            raise ValueError(f"The estimator has {len(equations)} targets: pass target=0 to {len(equations) - 1}.")
        equations, best = equations[target], best[target]
    if ax is None:
        ax = plt.figure(figsize=(6, 4)).add_subplot()
    finite = equations[np.isfinite(equations["log_fvu"])]
    front = finite[finite["pareto"]].sort_values("complexity")
    ax.scatter(finite["complexity"], finite["log_fvu"], s=12, color="0.6", label="candidates")
    ax.step(front["complexity"], front["log_fvu"], where="post", color="C0", marker="o", ms=4, label="Pareto front")
    selected = equations.loc[best]
    ax.scatter(
        [selected["complexity"]], [selected["log_fvu"]], s=120, marker="*", color="C3", zorder=3, label="selected"
    )
    ax.set_xlabel("complexity (prefix tokens)")
    ax.set_ylabel("loss: log(MSE / var(y))")
    ax.legend(loc="upper right")
    return ax
