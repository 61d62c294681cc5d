"""Plot the training and validation curves of a run's ``log.csv``, or compare runs.

    python -m pretraining.curves run/log.csv docs/figures/training-curve.png
    python -m pretraining.curves tiny=runs/tiny/log.csv small=runs/small/log.csv \
        docs/figures/sizes.png --x elapsed_seconds
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def save_figure(fig, out_png: Path, title: str | None = None) -> None:
    """Lay out ``fig`` (with an optional title), write it as a PNG and close it."""
    import matplotlib.pyplot as plt

    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=120)
    plt.close(fig)


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
    save_figure(fig, out_png, title)


X_LABELS = {"equations": "equations seen", "elapsed_seconds": "training wall time (s)", "step": "step"}


def plot_comparison(logs: dict[str, Path], out_png: Path, x: str = "equations", title: str | None = None) -> None:
    """Validation loss and token accuracy of several runs (label -> ``log.csv``) against ``x``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (loss_axis, accuracy_axis) = plt.subplots(1, 2, figsize=(10, 3.8))
    for label, path in logs.items():
        validation = pd.read_csv(path).dropna(subset=["val_loss"])
        loss_axis.plot(validation[x], validation["val_loss"], marker="o", ms=2, label=label)
        accuracy_axis.plot(validation[x], validation["val_accuracy"], marker="o", ms=2, label=label)
    loss_axis.set_ylabel("validation cross-entropy per token")
    accuracy_axis.set_ylabel("validation token accuracy")
    for axis in (loss_axis, accuracy_axis):
        axis.set_xlabel(X_LABELS.get(x, x))
        axis.grid(alpha=0.3)
        axis.legend()
    save_figure(fig, out_png, title)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", nargs="+", help="one log.csv, or several label=log.csv to compare")
    parser.add_argument("out_png", type=Path)
    parser.add_argument("--x", default="equations", choices=sorted(X_LABELS), help="x axis when comparing")
    parser.add_argument("--title")
    args = parser.parse_args(argv)
    if len(args.logs) == 1 and "=" not in args.logs[0]:
        plot_curves(Path(args.logs[0]), args.out_png, args.title)
    else:
        logs = dict(item.split("=", 1) if "=" in item else (Path(item).parent.name, item) for item in args.logs)
        plot_comparison({label: Path(path) for label, path in logs.items()}, args.out_png, args.x, args.title)


if __name__ == "__main__":
    main()
