"""Choose the bundled model's size from short training runs (a script, not a test).

Reads the ``log.csv`` of runs that trained concurrently on the same bank with the same
batches (so each had the same share of the CPU), and reports for each: parameters,
throughput, equations seen and validation loss / token accuracy at the last common
wall time, and a projection to a longer budget: the power law
``L(D) = a + b * D**-c`` in equations seen ``D``, fitted to all validation points, at
the number of equations the run's throughput gives in that budget (NaN with fewer than
4 points). Writes a Markdown table and a plot.

Usage::

    python -m benchmarks.studies.size_selection tiny=runs/tiny small=runs/small medium=runs/medium \\
        --budget-hours 2.5 --out benchmarks/results/pretraining/size-selection.md \\
        --plot docs/figures/size-selection.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

from nesymres_sklearn.network.model import NeSymReSModel, config_for_size
from pretraining.config import load_train_config
from pretraining.curves import plot_comparison


def power_law(t, a, b, c):
    return a + b * np.power(t, -c)


def extrapolate(equations: np.ndarray, loss: np.ndarray, at_equations: float) -> float:
    """Validation loss after ``at_equations`` equations from ``a + b D^-c`` fitted to the
    curve (NaN with fewer than 4 points)."""
    if len(equations) < 4:  # three parameters: too few points to fit
        return float("nan")
    try:
        params, _ = curve_fit(
            power_law,
            equations,
            loss,
            p0=(loss[-1] * 0.8, 10.0, 0.3),
            bounds=([0.0, 0.0, 0.0], [np.inf, np.inf, 3.0]),
            maxfev=50000,
        )
    except RuntimeError:
        return float("nan")
    return float(power_law(at_equations, *params))


def summarise(runs: dict[str, Path], budget_seconds: float) -> pd.DataFrame:
    full_logs = {name: pd.read_csv(folder / "log.csv") for name, folder in runs.items()}
    logs = {name: log.dropna(subset=["val_loss"]) for name, log in full_logs.items()}
    common = min(log["elapsed_seconds"].iloc[-1] for log in logs.values())
    rows = []
    for name, log in logs.items():
        speed = full_logs[name]["equations"].iloc[-1] / full_logs[name]["elapsed_seconds"].iloc[-1]
        config = load_train_config(runs[name] / "train_config.json").flat()
        model = NeSymReSModel(config_for_size(config["model_size"], **config["model_overrides"]))
        at = log[log["elapsed_seconds"] <= common].iloc[-1]
        rows.append(
            dict(
                run=name,
                model_size=config["model_size"],
                parameters=sum(p.numel() for p in model.parameters()),
                equations_per_second=speed,
                seconds=at["elapsed_seconds"],
                equations=int(at["equations"]),
                val_loss=at["val_loss"],
                val_accuracy=at["val_accuracy"],
                n_points=len(log),
                budget_equations=speed * budget_seconds,
                extrapolated_loss=extrapolate(
                    log["equations"].to_numpy(), log["val_loss"].to_numpy(), speed * budget_seconds
                ),
            )
        )
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="label=run_folder")
    parser.add_argument("--budget-hours", type=float, default=2.5)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--plot", type=Path, required=True)
    args = parser.parse_args(argv)
    runs = {item.split("=", 1)[0]: Path(item.split("=", 1)[1]) for item in args.runs}
    table = summarise(runs, args.budget_hours * 3600)
    plot_comparison(
        {name: folder / "log.csv" for name, folder in runs.items()},
        args.plot,
        x="elapsed_seconds",
        title="Model sizes trained concurrently on the same CPU",
    )
    budget = f"{args.budget_hours:g} h"
    lines = [
        f"| run | parameters | equations/s | wall time (s) | equations seen | val loss | val token accuracy | "
        f"validation points | equations in {budget} | val loss projected to {budget} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in table.itertuples():
        lines.append(
            f"| {row.run} | {row.parameters:,} | {row.equations_per_second:.0f} | {row.seconds:.0f} | "
            f"{row.equations:,} | {row.val_loss:.3f} | {row.val_accuracy:.3f} | {row.n_points} | "
            f"{row.budget_equations:,.0f} | {row.extrapolated_loss:.3f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
