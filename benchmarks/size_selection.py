"""Choose the bundled model's size from short training runs (a script, not a test).

Reads the ``log.csv`` of runs that trained concurrently on the same bank with the same
batches (so each had the same share of the CPU), and reports for each: parameters,
equations seen and validation loss / token accuracy at the last common wall time, and
the validation loss extrapolated to a longer budget with a fitted power law
``L(t) = a + b * t**-c`` over the second half of each curve. Writes a Markdown table
and a plot.

Usage::

    python benchmarks/size_selection.py tiny=runs/tiny small=runs/small medium=runs/medium \\
        --budget-hours 2.5 --out benchmarks/results/size_selection.md \\
        --plot docs/figures/size-selection.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

from nesymres_sklearn.model import NeSymReSModel, config_for_size
from pretraining.curves import plot_comparison


def power_law(t, a, b, c):
    return a + b * np.power(t, -c)


def extrapolate(elapsed: np.ndarray, loss: np.ndarray, at_seconds: float) -> float:
    """Validation loss at ``at_seconds`` from ``a + b t^-c`` fitted to the second half of the
    curve (NaN with fewer than 4 points there)."""
    half = len(elapsed) // 2
    t, y = elapsed[half:], loss[half:]
    if len(t) < 4:  # three parameters: too few points to fit
        return float("nan")
    try:
        params, _ = curve_fit(power_law, t, y, p0=(y[-1] * 0.8, 1.0, 0.5),
                              bounds=([0.0, 0.0, 0.0], [np.inf, np.inf, 3.0]), maxfev=20000)
    except RuntimeError:
        return float("nan")
    return float(power_law(at_seconds, *params))


def summarise(runs: dict[str, Path], budget_seconds: float) -> pd.DataFrame:
    logs = {name: pd.read_csv(folder / "log.csv").dropna(subset=["val_loss"]) for name, folder in runs.items()}
    common = min(log["elapsed_seconds"].iloc[-1] for log in logs.values())
    rows = []
    for name, log in logs.items():
        config = json.loads((runs[name] / "train_config.json").read_text())
        model = NeSymReSModel(config_for_size(config["model_size"], **config["model_overrides"]))
        at = log[log["elapsed_seconds"] <= common].iloc[-1]
        rows.append(dict(
            run=name, model_size=config["model_size"], parameters=sum(p.numel() for p in model.parameters()),
            seconds=at["elapsed_seconds"], equations=int(at["equations"]),
            val_loss=at["val_loss"], val_accuracy=at["val_accuracy"],
            extrapolated_loss=extrapolate(log["elapsed_seconds"].to_numpy(), log["val_loss"].to_numpy(),
                                          budget_seconds),
        ))
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
    plot_comparison({name: folder / "log.csv" for name, folder in runs.items()}, args.plot, x="elapsed_seconds",
                    title="Model sizes trained concurrently on the same CPU")
    header = ("| run | parameters | wall time (s) | equations seen | val loss | val token accuracy | "
              f"val loss extrapolated to {args.budget_hours:g} h |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|"]
    for row in table.itertuples():
        lines.append(f"| {row.run} | {row.parameters:,} | {row.seconds:.0f} | {row.equations:,} | {row.val_loss:.3f} | "
                     f"{row.val_accuracy:.3f} | {row.extrapolated_loss:.3f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
