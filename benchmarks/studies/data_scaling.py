"""Validation accuracy against pre-training bank size at equal compute (a script, not a test).

Reads runs that differ only in ``bank_size`` (same model, batches, steps and held-out
split) and writes a Markdown table (final validation loss and token accuracy, and the
best value seen) and a plot: validation curves per bank, and final accuracy against
the number of training skeletons.

Usage::

    python -m benchmarks.studies.data_scaling runs/data-10k runs/data-100k runs/data-1m --max-step 2000 \\
        --out benchmarks/results/pretraining/data-scaling.md --plot docs/figures/data-scaling.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from pretraining.bank import SkeletonBank
from pretraining.config import load_train_config
from pretraining.curves import save_figure


def read_validation(log_csv: Path, max_step: int | None = None) -> pd.DataFrame:
    """The validation rows of a run's log, up to ``max_step``."""
    log = pd.read_csv(log_csv).dropna(subset=["val_loss"])
    return log if max_step is None else log[log["step"] <= max_step]


def summarise(folders: list[Path], max_step: int | None = None) -> pd.DataFrame:
    rows = []
    for folder in folders:
        config = load_train_config(folder / "train_config.json").flat()
        log = read_validation(folder / "log.csv", max_step)
        bank_size = config["bank_size"] or len(SkeletonBank(config["bank"]))
        last = log.iloc[-1]
        rows.append(
            dict(
                run=folder.name,
                bank_size=bank_size,
                model_size=config["model_size"],
                steps=int(last["step"]),
                equations=int(last["equations"]),
                val_loss=last["val_loss"],
                val_accuracy=last["val_accuracy"],
                best_val_loss=log["val_loss"].min(),
                best_val_accuracy=log["val_accuracy"].max(),
                log=folder / "log.csv",
            )
        )
    return pd.DataFrame(rows).sort_values("bank_size")


def plot(table: pd.DataFrame, out_png: Path, max_step: int | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (curves, final) = plt.subplots(1, 2, figsize=(10, 3.8))
    for row in table.itertuples():
        log = read_validation(row.log, max_step)
        curves.plot(log["equations"], log["val_accuracy"], marker="o", ms=2, label=f"{row.bank_size:,} skeletons")
    curves.set_xlabel("equations seen")
    curves.set_ylabel("validation token accuracy")
    curves.legend()
    final.plot(table["bank_size"], table["val_accuracy"], marker="o", label="final")
    final.plot(table["bank_size"], table["best_val_accuracy"], marker="s", ls="--", label="best")
    final.set_xscale("log")
    final.set_xlabel("unique training skeletons")
    final.set_ylabel("validation token accuracy")
    final.legend()
    for axis in (curves, final):
        axis.grid(alpha=0.3)
    save_figure(fig, out_png, "Held-out accuracy against pre-training data at equal compute")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--plot", type=Path, required=True)
    parser.add_argument("--max-step", type=int, help="compare the runs up to this step (equal compute)")
    args = parser.parse_args(argv)
    table = summarise(args.runs, args.max_step)
    plot(table, args.plot, args.max_step)
    lines = [
        "| training skeletons | model | steps | equations seen | val loss | val token accuracy | "
        "best val loss | best val token accuracy |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in table.itertuples():
        lines.append(
            f"| {row.bank_size:,} | {row.model_size} | {row.steps:,} | {row.equations:,} | "
            f"{row.val_loss:.3f} | {row.val_accuracy:.3f} | {row.best_val_loss:.3f} | "
            f"{row.best_val_accuracy:.3f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
