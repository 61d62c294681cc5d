"""
Recovery against the time budget on FastSRB
===========================================

With ``max_time``, a fit runs its plan and then goes on searching until the budget
ends (Operon's islands, the network's samples and its looks at residuals take turns,
``docs/cluster.md``). This example reads the committed result file of one run on this
project's 2-core CPU (``benchmarks/results/fastsrb/fastsrb-budget.csv``: ours at 0.1, 1, 10 and
60 s and Operon alone at 0.1, 1 and 10 s, one problem per law, noise 0, ``docs/benchmarks.md``)
and draws the share of FastSRB's 120 laws recovered against the budget, with the points that the ``srbf``
leaderboard published for Flash-ANSR and PySR (2026-09 release, 16 cores and a GPU)
drawn beside them and labelled as published. FastSRB has been this project's
development set since issue 52: the figure shows what time buys, not that a mechanism
generalises.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

try:
    ROOT = Path(__file__).resolve().parent.parent
except NameError:  # run cell by cell
    ROOT = Path.cwd().parent
fits = pd.read_csv(ROOT / "benchmarks" / "results" / "fastsrb" / "fastsrb-budget.csv")
curve = (
    fits.groupby(["method", "max_time"])
    .agg(recovered=("numeric_recovery", "mean"), fits=("numeric_recovery", "size"), median_s=("fit_time", "median"))
    .reset_index()
)
curve["recovered"] *= 100
print(curve.to_string(index=False, float_format="%.1f"))

# %%
# Published points (seconds, percent of FastSRB), as the leaderboard gives them.
PUBLISHED = {
    "Flash-ANSR 120M (published, GPU)": [(1.0, 49.6), (6.9, 64.2), (53.0, 72.1)],
    "PySR (published)": [(13.0, 51.3), (49.0, 55.4)],
}
labels = {"ours": "NeSymReS + Operon, this package (measured)", "operon": "Operon alone, one thread (measured)"}
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for method, line in curve.groupby("method"):
    line = line.sort_values("max_time")
    ax.plot(line["max_time"], line["recovered"], marker="o", label=labels.get(method, method))
for name, points in PUBLISHED.items():
    seconds, recovered = zip(*points)
    ax.plot(seconds, recovered, marker="s", linestyle="--", alpha=0.7, label=name)
ax.set_xscale("log")
ax.set_xlim(0.05, 100)
ax.set_ylim(0, 100)
ax.set_xlabel("time budget per fit (s, log scale)")
ax.set_ylabel("FastSRB laws recovered (%)")
ax.set_title("FastSRB (a development set), noise 0")
ax.legend(fontsize=7, loc="lower right")
fig.tight_layout()
