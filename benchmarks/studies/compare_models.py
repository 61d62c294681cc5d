"""Compare saved models on a benchmark profile at one beam size, over several data seeds
(a script, not a test).

One AI-Feynman run at one seed leaves a few equations' worth of noise (one equation is
1.9 points); a checkpoint is worth bundling when it wins over seeds. Each model gets
its own result CSV in ``--csv-dir`` (resumable, as the runner's), and the Markdown
table gives, per model and dataset, the mean of each metric over every fit, A1-ood per
seed and the median fit time.

Usage::

    python -m benchmarks.studies.compare_models bundled=nesymres_sklearn/weights candidate=runs/small/model \\
        --seeds 0 1 2 --n-jobs 2 --csv-dir benchmarks/results/model-comparison/NAME \\
        --out benchmarks/results/model-comparison/model-comparison-NAME.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from benchmarks.profiles import get_profile
from benchmarks.report import METRICS, summarize
from benchmarks.runner import run


def compare(results: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per model and dataset: fits, mean of each metric (percent), A1-ood per seed, median fit time."""
    rows = []
    for model, table in results.items():
        for summary in summarize(table).itertuples():
            fits = table[table["dataset"] == summary.dataset]
            per_seed = 100 * pd.to_numeric(fits["a1_ood"]).fillna(0.0).groupby(fits["seed"]).mean()
            rows.append(
                {
                    "model": model,
                    "dataset": summary.dataset,
                    "fits": summary.n,
                    **{metric: 100 * getattr(summary, metric) for metric in METRICS},
                    "a1_ood_per_seed": " / ".join(f"{value:.1f}" for value in per_seed),
                    "median_fit_time": pd.to_numeric(fits["fit_time"]).median(),
                }
            )
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    lines = [
        "| model | dataset | fits | A1 iid | A1 ood | A2 iid | A2 ood | A1 ood per seed | median fit (s) |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in table.itertuples():
        lines.append(
            f"| {row.model} | {row.dataset} | {row.fits} | {row.a1_iid:.1f} | {row.a1_ood:.1f} | "
            f"{row.a2_iid:.1f} | {row.a2_ood:.1f} | {row.a1_ood_per_seed} | {row.median_fit_time:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", metavar="NAME=FOLDER", help="model folders to compare")
    parser.add_argument("--profile", default="laptop", help="datasets, points and limits (default: laptop)")
    parser.add_argument("--beam-size", type=int, default=32)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv-dir", type=Path, required=True, help="one result CSV per model, NAME.csv")
    parser.add_argument("--out", type=Path, required=True, help="Markdown table")
    args = parser.parse_args(argv)
    models = dict(spec.split("=", 1) for spec in args.models)
    base = get_profile(args.profile)
    results = {}
    for name, folder in models.items():
        profile = base.with_overrides(
            methods={"nesymres": (args.beam_size,)},
            seeds=tuple(args.seeds),
            method_options={"nesymres": {"model": folder}},
        )
        results[name] = run(profile, args.csv_dir / f"{name}.csv", n_jobs=args.n_jobs, progress=False)
    text = markdown(compare(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
