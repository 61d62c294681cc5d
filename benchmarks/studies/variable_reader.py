"""How many variables should the network read? Models that read different numbers of
variables, the network alone, on validation laws of 1-3 and of 4-8 variables (a
script, not a test; issue 67's choice on CPU, ``docs/pretraining.md``).

Each model fits every equation of the chosen validation sets at one beam size, with
fixed work (no ``max_time``), ``refine=None`` (no Operon) and the search's
non-network sources off (``SearchSettings(identities=False, exhaustive=False)``): what
is left is the network, its looks (linear scaling, residuals) and, for laws with more
features than the model reads, the routing that reduces them to what it reads. The
table gives A1 and A2 (iid and ood, as in the paper) per model and per number of input
columns, and the paired difference of the last model against the first on each
dataset (bootstrap over equations, :mod:`benchmarks.studies.paired_difference`); one
model alone gets its table only. Only validation sets are used.

Command line::

    python -m benchmarks.studies.variable_reader reader-3v=runs/reader-3v/model reader-8v=runs/reader-8v/model \\
        --datasets validation-wc validation-many validation-wide --max-equations 60 --seeds 0 \\
        --csv-dir benchmarks/results/pretraining/variable-reader --out benchmarks/results/pretraining/variable-reader.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from benchmarks.datasets import load_dataset
from benchmarks.profiles import Profile
from benchmarks.report import METRICS
from benchmarks.runner import run
from benchmarks.studies.paired_difference import paired_table
from nesymres_sklearn.search.settings import SearchSettings

#: The network alone: no identities and no exhaustive one-variable search (Operon is
#: off through ``refine=None``, the adapter's default).
NETWORK_ALONE = SearchSettings(identities=False, exhaustive=False)


def profile_for(model: str, datasets: list[str], beam_size: int, seeds: list[int]) -> Profile:
    """The runner's profile of one model on the validation sets."""
    return Profile(
        datasets={name: None for name in datasets},
        methods={"nesymres": (beam_size,)},
        seeds=tuple(seeds),
        time_limit=60.0,
        time_budget=8.0,
        method_options={"nesymres": {"model": model, "search_settings": NETWORK_ALONE}},
    )


def with_columns(results: pd.DataFrame) -> pd.DataFrame:
    """The results with ``n_variables``, each equation's number of input columns."""
    columns = {
        (name, equation.name): equation.n_variables
        for name in results["dataset"].unique()
        for equation in load_dataset(name)
    }
    return results.assign(n_variables=[columns[key] for key in zip(results["dataset"], results["equation"])])


def accuracy_table(results: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per model, dataset and number of columns (and all columns together): fits, each
    metric in percent, median fit seconds."""
    rows = []
    for model, table in results.items():
        table = with_columns(table)
        scores = table.assign(**{m: 100 * pd.to_numeric(table[m], errors="coerce").fillna(0.0) for m in METRICS})
        scores["fit_time"] = pd.to_numeric(scores["fit_time"], errors="coerce")
        for dataset, fits in scores.groupby("dataset", sort=False):
            groups = [("all", fits)] + [(str(n), part) for n, part in fits.groupby("n_variables")]
            for columns, part in groups:
                rows.append(
                    {
                        "model": model,
                        "dataset": dataset,
                        "columns": columns,
                        "fits": len(part),
                        **{m: part[m].mean() for m in METRICS},
                        "median_fit_time": part["fit_time"].median(),
                    }
                )
    return pd.DataFrame(rows)


def markdown(accuracy: pd.DataFrame, paired: pd.DataFrame, first: str, last: str) -> str:
    lines = [
        "| dataset | columns | model | fits | A1 iid | A1 ood | A2 iid | A2 ood | median fit (s) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    ordered = accuracy.sort_values(["dataset", "columns", "model"], key=lambda c: c.map(str), kind="stable")
    for row in ordered.itertuples():
        lines.append(
            f"| {row.dataset} | {row.columns} | {row.model} | {row.fits} | {row.a1_iid:.1f} | {row.a1_ood:.1f} | "
            f"{row.a2_iid:.1f} | {row.a2_ood:.1f} | {row.median_fit_time:.2f} |"
        )
    if paired.empty:
        return "\n".join(lines) + "\n"
    lines += [
        "",
        f"Paired over the fits (equation and seed), {last} - {first}, percentage points [95% bootstrap interval]:",
        "",
        "| dataset | metric | difference | pairs |",
        "|---|---|---|---:|",
    ]
    for row in paired.itertuples():
        lines.append(
            f"| {row.dataset} | {row.metric} | {row.difference:+.1f} [{row.low:.1f}, {row.high:.1f}] | {row.pairs} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "models", nargs="+", metavar="NAME=FOLDER", help="model folders; the last is paired with the first"
    )
    parser.add_argument("--datasets", nargs="+", default=["validation-wc", "validation-many", "validation-wide"])
    parser.add_argument("--max-equations", type=int, help="the first equations of each dataset only")
    parser.add_argument("--beam-size", type=int, default=32)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv-dir", type=Path, required=True, help="one result CSV per model, NAME.csv")
    parser.add_argument("--out", type=Path, required=True, help="Markdown table")
    args = parser.parse_args(argv)
    models = dict(spec.split("=", 1) for spec in args.models)
    args.csv_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    for name, folder in models.items():
        profile = profile_for(folder, args.datasets, args.beam_size, args.seeds)
        table = run(profile, args.csv_dir / f"{name}.csv", n_jobs=args.n_jobs, max_equations=args.max_equations)
        results[name] = table[table["dataset"].isin(args.datasets)]
    first, last = list(models)[0], list(models)[-1]
    paired = pd.DataFrame()
    if first != last:  # one model alone: its table, nothing to pair
        labelled = pd.concat([results[first].assign(method=first), results[last].assign(method=last)])
        paired = pd.concat(
            [paired_table(labelled, last, first, m).assign(metric=m) for m in ("a1_iid", "a1_ood", "a2_iid")]
        ).sort_values(["dataset", "metric"], kind="stable")
    text = markdown(accuracy_table(results), paired, first, last)
    command = "python -m benchmarks.studies.variable_reader " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(f"Command: `{command}`\n\n{text}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
