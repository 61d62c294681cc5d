"""Plots and markdown tables from a result CSV of :mod:`benchmarks.runner`.

- ``<name>-<dataset>-time.png``: accuracy against mean fit time per dataset, one curve
  per method through its settings (the paper's accuracy-vs-time figures), with four
  panels A1/A2 x iid/ood and error bars of one standard error of the mean.
- ``<name>-points.png``: accuracy against the number of training points, for the
  method settings run with several sizes (the paper's accuracy-vs-points figure).
- ``<name>.md``: one table per dataset, plus the run's command and machine. With
  ``--docs``, the same text replaces the block between ``<!-- results:start -->``
  and ``<!-- results:end -->`` of that markdown file.

A fit that failed (error, timeout, crash) counts as not recovered; methods that are not
installed are listed but left out of the averages. Fit time of a timeout is the limit.

Command line::

    python -m benchmarks.report benchmarks/results/laptop/laptop.csv --docs docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .metrics import symbolic_scores
from .results import with_noise

METRICS = ("a1_iid", "a1_ood", "a2_iid", "a2_ood")
#: Symbolic columns of a result row (:func:`benchmarks.metrics.symbolic_scores`).
SYMBOLIC = ("solution", "model_size", "relative_size")
METRIC_TITLES = {
    "a1_iid": "$A_1^{iid}$",
    "a1_ood": "$A_1^{ood}$",
    "a2_iid": "$A_2^{iid}$",
    "a2_ood": "$A_2^{ood}$",
}
METHOD_LABELS = {
    "nesymres": "NeSymReS",
    "nesymres-anytime": "NeSymReS (time budget)",
    "nesymres-operon": "NeSymReS seeding Operon",
    "nesymres-operon-decomposed": "NeSymReS seeding Operon, separable parts",
    "nesymres-operon-units": "NeSymReS seeding Operon, with units",
    "nesymres-auto": "NeSymReS seeding Operon (fixed work)",
    "gplearn": "Genetic Prog. (gplearn)",
    "gpr": "Gaussian Process",
    "operon": "Operon",
    "operon-timed": "Operon (time budget)",
    "dsr": "DSR",
    "pysr": "PySR",
}
METHOD_COLORS = {
    "nesymres": "tab:red",
    "nesymres-anytime": "tab:pink",
    "nesymres-operon": "tab:olive",
    "nesymres-operon-decomposed": "olivedrab",
    "nesymres-operon-units": "teal",
    "nesymres-auto": "tab:gray",
    "gplearn": "tab:green",
    "gpr": "tab:blue",
    "operon": "tab:purple",
    "operon-timed": "tab:cyan",
    "dsr": "tab:orange",
    "pysr": "tab:brown",
}
DATASET_LABELS = {
    "aifeynman": "AI-Feynman",
    "nguyen": "Nguyen",
    "soose-wc": "SOOSE-WC",
    "soose-nc": "SOOSE-NC",
    "soose-fc": "SOOSE-FC",
    "validation-wc": "Validation-WC",
    "validation-nc": "Validation-NC",
    "validation-fc": "Validation-FC",
    "aifeynman-many": "AI-Feynman, 4-9 variables",
}
START, END = "<!-- results:start -->", "<!-- results:end -->"
DEFAULT_POINTS = 128
FAILED = ("error", "timeout", "crashed")


def load_results(path: str | Path, symbolic: bool = False) -> pd.DataFrame:
    """A result file; ``symbolic``: with the symbolic columns filled in where the file
    has none (:func:`with_symbolic_scores`, which simplifies every such expression)."""
    frame = with_noise(pd.read_csv(path, keep_default_na=False, na_values=[""]))
    for column in METRICS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return with_symbolic_scores(frame) if symbolic else frame


def with_symbolic_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the symbolic columns filled in where a fitted expression has none
    (result files written before they existed)."""
    frame = frame.copy()
    for column in SYMBOLIC:
        frame[column] = pd.to_numeric(frame[column], errors="coerce") if column in frame else np.nan
    if "expression" not in frame or "true_expression" not in frame:
        return frame
    missing = frame["solution"].isna() & frame["expression"].notna() & frame["true_expression"].notna()
    cache: dict = {}
    for index in frame.index[missing]:
        pair = (frame.at[index, "expression"], frame.at[index, "true_expression"])
        if pair not in cache:
            cache[pair] = symbolic_scores(*pair)
        for column, value in cache[pair].items():
            frame.at[index, column] = float(value)
    return frame


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, method, setting, number of points and noise level (0 where the frame
    has none): accuracies and mean fit time.

    Columns: ``n`` (fits), ``fit_time`` (mean seconds), each metric (fraction of
    equations recovered) with ``<metric>_se`` (standard error), ``failed``,
    ``solution`` (fraction of symbolic solutions; failed fits count as none),
    ``model_size``, ``relative_size`` and ``r2_iid`` (medians over the fitted
    expressions).
    """
    ran = with_noise(frame[frame["status"] != "not_installed"])
    if ran.empty:
        return pd.DataFrame()
    for column in METRICS:
        ran[column] = ran[column].fillna(0.0).astype(float)
    ran["failed"] = ran["status"].isin(FAILED).astype(int)
    ran["fit_time"] = pd.to_numeric(ran["fit_time"], errors="coerce")
    keys = ["dataset", "method", "parameter", "value", "n_points", "noise"]
    if "solution" in ran:  # failed fits count as no solution; methods without an expression have none
        ran["solution"] = pd.to_numeric(ran["solution"], errors="coerce").mask(ran["failed"] == 1, 0.0)
    else:
        ran["solution"] = np.nan
    for column in ("model_size", "relative_size", "r2_iid"):
        ran[column] = pd.to_numeric(ran[column], errors="coerce") if column in ran else np.nan
    summary = (
        ran.groupby(keys, sort=True)
        .agg(
            n=("equation", "size"),
            fit_time=("fit_time", "mean"),
            failed=("failed", "sum"),
            solution=("solution", "mean"),
            model_size=("model_size", "median"),
            relative_size=("relative_size", "median"),
            r2_iid=("r2_iid", "median"),
            **{column: (column, "mean") for column in METRICS},
        )
        .reset_index()
    )
    for column in METRICS:
        p = summary[column]
        summary[f"{column}_se"] = np.sqrt(p * (1 - p) / summary["n"].clip(lower=1))
    return summary


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_accuracy_vs_time(summary: pd.DataFrame, dataset: str, path: Path, n_points: int | None = None) -> Path:
    """Four panels (A1/A2 x iid/ood): accuracy against mean fit time per method."""
    plt = _plt()
    data = _least_noise(summary[summary["dataset"] == dataset])
    if n_points is None:
        n_points = int(data["n_points"].mode().iloc[0])
    data = data[data["n_points"] == n_points]
    figure, axes = plt.subplots(1, 4, figsize=(18, 3.8), sharey=True)
    for ax, metric in zip(axes, METRICS):
        for method, rows in data.groupby("method", sort=False):
            rows = rows.sort_values("value")  # the curve follows the swept setting
            ax.errorbar(
                rows["fit_time"],
                rows[metric],
                yerr=rows[f"{metric}_se"],
                marker="o",
                capsize=3,
                label=METHOD_LABELS.get(method, method),
                color=METHOD_COLORS.get(method),
            )
        ax.set_xscale("log")
        ax.set_xlabel("mean fit time per equation (s)")
        ax.set_title(METRIC_TITLES[metric])
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("accuracy")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    figure.suptitle(f"{DATASET_LABELS.get(dataset, dataset)}: accuracy vs time ({n_points} points)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_accuracy_vs_points(summary: pd.DataFrame, path: Path, metric: str = "a1_ood") -> Path | None:
    """Accuracy against the number of training points, per dataset and method setting;
    ``None`` when no setting was run with more than one size."""
    plt = _plt()
    sizes = summary.groupby(["dataset", "method", "value"])["n_points"].nunique()
    swept = sizes[sizes > 1].reset_index()[["dataset", "method", "value"]]
    if swept.empty:
        return None
    data = _least_noise(summary).merge(swept, on=["dataset", "method", "value"])
    datasets = list(dict.fromkeys(data["dataset"]))
    figure, axes = plt.subplots(2, len(datasets), figsize=(5 * len(datasets), 7), squeeze=False)
    for column, dataset in enumerate(datasets):
        for row, metric_name in enumerate((metric.replace("ood", "iid"), metric)):
            ax = axes[row, column]
            for (method, value), rows in data[data["dataset"] == dataset].groupby(["method", "value"]):
                rows = rows.sort_values("n_points")
                parameter = rows["parameter"].iloc[0]
                ax.errorbar(
                    rows["n_points"],
                    rows[metric_name],
                    yerr=rows[f"{metric_name}_se"],
                    marker="o",
                    capsize=3,
                    label=f"{METHOD_LABELS.get(method, method)} ({parameter}={_value(value)})",
                    color=METHOD_COLORS.get(method),
                )
            ax.set_xscale("log", base=2)
            ax.set_xlabel("training points")
            ax.set_ylabel(METRIC_TITLES[metric_name])
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(DATASET_LABELS.get(dataset, dataset))
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
    figure.suptitle("Accuracy vs number of points")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _least_noise(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows at the lowest noise level: the plots leave the noise levels out."""
    return summary[summary["noise"] == summary["noise"].min()]


def write_study(text: str, rows: pd.DataFrame, out: Path | None) -> None:
    """A study's report: ``text`` printed and, with ``out``, written there (Markdown)
    with its ``rows`` in a CSV beside it."""
    print(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        rows.to_csv(out.with_suffix(".csv"), index=False)


def pipe_table(frame: pd.DataFrame) -> str:
    """``frame`` as a Markdown pipe table (numbers right-aligned), without ``tabulate``."""
    numeric = [pd.api.types.is_numeric_dtype(frame[column]) for column in frame.columns]
    lines = [
        "| " + " | ".join(map(str, frame.columns)) + " |",
        "|" + "|".join("---:" if number else "---" for number in numeric) + "|",
    ]
    lines += ["| " + " | ".join(f"{value:g}" if isinstance(value, float) else str(value) for value in row) + " |"
              for row in frame.itertuples(index=False)]  # fmt: skip
    return "\n".join(lines) + "\n"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def markdown_tables(frame: pd.DataFrame, metadata: dict | None = None, images: dict | None = None) -> str:
    """Markdown text: run description and one table per dataset (and points size)."""
    summary = summarize(frame)
    lines = []
    if metadata:
        machine = metadata.get("machine", {})
        versions = ", ".join(f"{k} {v}" for k, v in machine.get("versions", {}).items() if v)
        lines += [
            f"- Command: `{metadata.get('command')}`",
            f"- Machine: {machine.get('processor')}, {machine.get('cpu_count')} CPU cores, no GPU; "
            f"{machine.get('platform')}, Python {machine.get('python')}",
            f"- Versions: {versions}",
            f"- Run: started {metadata.get('started')}, last resumed {metadata.get('last_run')}; "
            f"per-fit time limit {metadata.get('profile', {}).get('time_limit')} s, "
            f"time budget {metadata.get('profile', {}).get('time_budget')} s, one thread per fit.",
            "",
        ]
    lines += [
        "Accuracies are percentages of the dataset's equations recovered (A1: more than 95% "
        "of 10k test points pass `numpy.isclose(y, y_hat, atol=1e-3, rtol=0.05)`; A2: "
        "R^2 > 0.95 on the finite points); time is the mean wall-clock fit time per "
        "equation on one thread. Failed fits (error, timeout) count as not recovered. "
        "Solution: SRBench's symbolic solution rate (the difference from the true equation, "
        "or the ratio to it, simplifies to a constant, floats rounded to 3 decimals); size: "
        "median nodes of the simplified expression, and relative to the true equation.",
        "",
    ]
    if summary.empty:
        lines.append("No fits ran.")
    for dataset, data in summary.groupby("dataset", sort=False):
        main_points = (
            int(data["n_points"].mode().iloc[0]) if DEFAULT_POINTS not in set(data["n_points"]) else DEFAULT_POINTS
        )
        rows = data[data["n_points"] == main_points]
        lines += [
            f"### {DATASET_LABELS.get(dataset, dataset)} ({int(rows['n'].max())} equations, {main_points} points)",
            "",
            "| Method | Setting | Fit time (s) | A1 iid | A1 ood | A2 iid | A2 ood | Solution | Size | "
            "Size / true | Failed |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for _, row in rows.iterrows():
            lines.append(
                f"| {METHOD_LABELS.get(row['method'], row['method'])} | {_setting(row)} | {row['fit_time']:.2f} "
                f"| {_percent(row['a1_iid'])} | {_percent(row['a1_ood'])} "
                f"| {_percent(row['a2_iid'])} | {_percent(row['a2_ood'])} | {_size(100 * row['solution'], 1)} "
                f"| {_size(row['model_size'])} | {_size(row['relative_size'], 2)} | {int(row['failed'])} |"
            )
        lines.append("")
        lines += _points_table(data)
        if images and dataset in images:
            lines += [f"![{DATASET_LABELS.get(dataset, dataset)}: accuracy vs time]({images[dataset]})", ""]
    if images and "points" in images:
        lines += [f"![Accuracy vs number of points]({images['points']})", ""]
    missing = frame[frame["status"] == "not_installed"].drop_duplicates("method")
    if not missing.empty:
        lines.append("Methods not run:")
        lines += [f"- {METHOD_LABELS.get(r.method, r.method)}: {r.error}" for r in missing.itertuples()]
        lines.append("")
    return "\n".join(lines)


def _points_table(data: pd.DataFrame) -> list[str]:
    """Compact table of the settings run with several numbers of points (A1 iid / A1 ood)."""
    sizes = data.groupby(["method", "value"])["n_points"].nunique()
    swept = sizes[sizes > 1].index
    if len(swept) == 0:
        return []
    points = sorted(data["n_points"].unique())
    lines = [
        "Accuracy vs number of training points (A1 iid / A1 ood, %; failed fits count as not recovered):",
        "",
        "| Method | Setting | " + " | ".join(str(int(p)) for p in points) + " |",
        "|---|---|" + "---:|" * len(points),
    ]
    for method, value in swept:
        rows = data[(data["method"] == method) & (data["value"] == value)].set_index("n_points")
        cells = []
        for p in points:
            if p in rows.index:
                cells.append(f"{_percent(rows.loc[p, 'a1_iid'])} / {_percent(rows.loc[p, 'a1_ood'])}")
            else:
                cells.append("")
        parameter = rows["parameter"].iloc[0]
        lines.append(
            f"| {METHOD_LABELS.get(method, method)} | {parameter}={_value(value)} | " + " | ".join(cells) + " |"
        )
    return lines + [""]


def _setting(row) -> str:
    """``parameter=value``, and the noise level where there is noise."""
    setting = f"{row['parameter']}={_value(row['value'])}"
    return setting + (f", noise {row['noise']:g}" if row["noise"] else "")


def _size(value: float, digits: int = 0) -> str:
    """``value`` with ``digits`` decimals; ``-`` when there is none."""
    return "-" if not np.isfinite(value) else f"{value:.{digits}f}"


def _value(value) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:g}"


def splice(markdown_path: Path, text: str) -> None:
    """Replace the results block of a markdown file (append one if it has none)."""
    content = markdown_path.read_text() if markdown_path.exists() else ""
    block = f"{START}\n{text.rstrip()}\n{END}"
    if START in content and END in content:
        head, rest = content.split(START, 1)
        _, tail = rest.split(END, 1)
        content = head + block + tail
    else:
        content = content.rstrip() + ("\n\n" if content else "") + block + "\n"
    markdown_path.write_text(content)


def write_report(
    csv_path: str | Path, out_dir: str | Path | None = None, docs: str | Path | None = None, extra: list | None = None
) -> list[Path]:
    """Write the plots and the markdown of a result CSV; the paths written.

    ``extra`` lists more result CSVs (e.g. a points sweep) merged into the report; a fit
    found in several files is taken from the first.
    """
    csv_path = Path(csv_path)
    out_dir = Path(out_dir) if out_dir else csv_path.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = pd.concat([load_results(p, symbolic=True) for p in [csv_path, *(extra or [])]], ignore_index=True)
    # A fit present in several files (e.g. 128 points in both runs) counts once: the first.
    frame = frame.drop_duplicates(["dataset", "equation", "method", "value", "n_points", "seed", "noise"])
    metadata_path = csv_path.with_suffix(".json")
    metadata = json.loads(metadata_path.read_text()) if metadata_path.exists() else None
    summary = summarize(frame)
    written, images = [], {}
    name = csv_path.stem
    docs_dir = Path(docs).parent if docs else out_dir
    if not summary.empty:
        for dataset in dict.fromkeys(summary["dataset"]):
            path = plot_accuracy_vs_time(summary, dataset, out_dir / f"{name}-{dataset}-time.png")
            images[dataset] = _relative(path, docs_dir)
            written.append(path)
        path = plot_accuracy_vs_points(summary, out_dir / f"{name}-points.png")
        if path is not None:
            images["points"] = _relative(path, docs_dir)
            written.append(path)
    text = markdown_tables(frame, metadata, images)
    markdown = out_dir / f"{name}.md"
    markdown.write_text(text + "\n")
    written.append(markdown)
    if docs:
        splice(Path(docs), text)
        written.append(Path(docs))
    return written


def _relative(path: Path, start: Path) -> str:
    import os

    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__.split("\n")[0])
    parser.add_argument("csv", help="result CSV written by benchmarks.runner")
    parser.add_argument("--extra", nargs="*", default=[], help="more result CSVs to merge (e.g. a points sweep)")
    parser.add_argument("--out-dir", help="where plots and markdown go (default: next to the CSV)")
    parser.add_argument("--docs", help="markdown file whose results block is replaced")
    args = parser.parse_args(argv)
    for path in write_report(args.csv, args.out_dir, args.docs, args.extra):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
