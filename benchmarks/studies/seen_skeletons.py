"""Which benchmark skeletons the training bank holds, and accuracy on seen and unseen ones.

Each benchmark equation is skeletonised as pretraining does (numbers that the
vocabulary cannot write become placeholders, then the paper's placeholders are
attached) and its image, the values at the bank's 500 image points with neutral
placeholders, is looked up among the training skeletons' images: the test the bank
itself uses to call two skeletons the same. With result CSVs of the benchmark runner,
the table also gives the accuracy on the seen and on the unseen equations.

Command line::

    python -m benchmarks.studies.seen_skeletons --bank bank --results benchmarks/results/laptop/laptop.csv \\
        --method nesymres --value 32 --out benchmarks/results/seen-skeletons/seen-skeletons.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from benchmarks.datasets import load_dataset
from nesymres_sklearn.expression.placeholders import attach_constants
from nesymres_sklearn.expression.prefix import skeletonize
from pretraining.bank import SkeletonBank, image_key, image_points

DATASETS = ("aifeynman", "nguyen", "soose-wc", "validation-wc")


def seen_in_bank(bank: SkeletonBank, datasets=DATASETS) -> pd.DataFrame:
    """One row per equation: dataset, equation, its attached skeleton, and ``seen``."""
    keys = {int(key) for key in bank.image_keys}
    points = image_points(bank.metadata["settings"]["seed"], bank.n_variables)
    rows = []
    for name in datasets:
        for equation in load_dataset(name):
            try:
                tokens, kinds = attach_constants(skeletonize(equation.sympy_expr))
                key = image_key(tokens, kinds, points)
            except ValueError:  # a number or function the vocabulary cannot write
                tokens, key = [], None
            rows.append(
                dict(
                    dataset=name,
                    equation=equation.name,
                    skeleton=" ".join(tokens),
                    seen=key is not None and key in keys,
                )
            )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bank", required=True, help="the pretraining bank folder")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--results", nargs="*", default=[], help="runner result CSVs")
    parser.add_argument("--method", default="nesymres")
    parser.add_argument("--value", type=float, help="only rows with this setting value (e.g. beam size 32)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    bank = SkeletonBank(args.bank, "train")
    seen = seen_in_bank(bank, args.datasets)
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# Benchmark skeletons in the training bank",
        "",
        f"Bank: `{Path(args.bank).name}` ({len(bank):,} training skeletons). "
        f"Command: `python -m benchmarks.studies.seen_skeletons {command}`",
        "",
        "| dataset | equations | seen in the bank |",
        "|---|---:|---:|",
    ]
    for name, group in seen.groupby("dataset", sort=False):
        lines.append(f"| {name} | {len(group)} | {int(group['seen'].sum())} |")
    if args.results:
        results = pd.concat([pd.read_csv(path) for path in args.results], ignore_index=True)
        results = results[(results["method"] == args.method) & (results["status"] == "ok")]
        if args.value is not None:
            results = results[results["value"].astype(float) == args.value]
        merged = results.merge(seen, on=["dataset", "equation"])
        lines += [
            "",
            f"Accuracy of `{args.method}`" + (f" at {args.value:g}" if args.value is not None else "") + " (percent):",
            "",
            "| dataset | skeletons | fits | A1 iid | A1 ood |",
            "|---|---|---:|---:|---:|",
        ]
        for (name, flag), group in merged.groupby(["dataset", "seen"], sort=False):
            lines.append(
                f"| {name} | {'seen' if flag else 'unseen'} | {len(group)} | "
                f"{100 * group['a1_iid'].astype(float).mean():.1f} | {100 * group['a1_ood'].astype(float).mean():.1f} |"
            )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
