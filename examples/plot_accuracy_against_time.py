"""
Accuracy against time, beside Operon
====================================

The default estimator with a time budget (the network, then Operon seeded with its
fits) against Operon alone with the same budget, on the 52 AI-Feynman and 12 Nguyen
equations, seeds 0-2 (``docs/benchmarks.md``). This example does not rerun the benchmark:
it reads the committed result CSVs of the runner, one row per fit, and plots the share
of equations recovered outside the training support (A1 ood) against the median fit
time at each budget.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

try:
    ROOT = Path(__file__).resolve().parent.parent
except NameError:  # run cell by cell
    ROOT = Path.cwd().parent
RESULTS = ROOT / "benchmarks" / "results" / "time-contract"
fits = pd.concat(
    [pd.read_csv(RESULTS / name) for name in ("curve-warm-operon-fitting.csv", "curve-warm-operon-fitting-3-10s.csv")]
)
fits = fits[fits["method"].isin(["nesymres-operon", "operon-timed"])]
curve = (
    fits.groupby(["dataset", "method", "value"])
    .agg(a1_ood=("a1_ood", "mean"), fit_time=("fit_time", "median"), fits=("a1_ood", "size"))
    .reset_index()
)
curve["a1_ood"] *= 100
print(curve.to_string(index=False, float_format="%.2f"))

# %%
labels = {"nesymres-operon": "NeSymReS + Operon (this package)", "operon-timed": "Operon alone"}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
for ax, (dataset, rows) in zip(axes, curve.groupby("dataset")):
    for method, line in rows.groupby("method"):
        line = line.sort_values("value")
        ax.plot(line["fit_time"], line["a1_ood"], marker="o", label=labels[method])
        for _, point in line.iterrows():
            ax.annotate(f"{point['value']:g} s", (point["fit_time"], point["a1_ood"]), fontsize=7,
                        xytext=(3, -9), textcoords="offset points")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("median fit time (s), budget annotated")
    ax.set_title(dataset)
axes[0].set_ylabel("A1 ood (% of fits)")
axes[0].legend(loc="lower right", fontsize=8)
fig.tight_layout()
