"""Plot the training and validation curves of a run's ``log.csv``.

    python -m pretraining.curves run/log.csv docs/figures/training-curve.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def plot_curves(log_csv: Path, out_png: Path, title: str | None = None) -> None:
    """Loss (training and validation) and validation token accuracy against equations seen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    log = pd.read_csv(log_csv)
    validation = log.dropna(subset=["val_loss"])
    fig, (loss_axis, accuracy_axis) = plt.subplots(1, 2, figsize=(10, 3.8))
    loss_axis.plot(log["equations"], log["train_loss"], lw=0.8, alpha=0.6, label="training")
    loss_axis.plot(validation["equations"], validation["val_loss"], marker="o", ms=2, label="validation (held-out)")
    loss_axis.set_xlabel("equations seen")
    loss_axis.set_ylabel("cross-entropy per token")
    loss_axis.legend()
    accuracy_axis.plot(validation["equations"], validation["val_accuracy"], marker="o", ms=2, color="C2")
    accuracy_axis.set_xlabel("equations seen")
    accuracy_axis.set_ylabel("validation token accuracy")
    for axis in (loss_axis, accuracy_axis):
        axis.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log_csv", type=Path)
    parser.add_argument("out_png", type=Path)
    parser.add_argument("--title")
    args = parser.parse_args(argv)
    plot_curves(args.log_csv, args.out_png, args.title)


if __name__ == "__main__":
    main()
