"""What training sees from a skeleton bank under each weighting (a script, not a test).

For the first ``N`` training skeletons of a bank: the share of draws that are short
skeletons (at most ``--short`` tokens) and the mean skeleton length, when skeletons are
drawn uniformly and in proportion to their generation counts raised to
``--frequency-power`` (1 by default; the training option of the same name).
``--columns`` adds the share of draws by number of input columns (``x_1`` up to the
highest variable used), what a model reading more variables sees of each.

Usage::

    python -m benchmarks.studies.bank_statistics bank --limits 10000 30000 100000 200000
    python -m benchmarks.studies.bank_statistics bank --limits 200000 600000 --frequency-power 0.75
    python -m benchmarks.studies.bank_statistics bank-8v --limits 60000 --frequency-power 0.75 --columns
"""

from __future__ import annotations

import argparse

import numpy as np

from nesymres_sklearn.expression.tokens import variable_index
from pretraining.bank import SkeletonBank


def statistics(bank: SkeletonBank, short: int, frequency_power: float = 1.0) -> dict:
    """Short-draw share and mean length, uniform and weighted by ``counts ** frequency_power``."""
    lengths = np.array([len(bank.ids(i)) for i in range(len(bank))])
    row = dict(skeletons=len(bank), uniform_short=np.mean(lengths <= short), uniform_length=lengths.mean())
    if bank.counts is not None:
        weights = bank.counts.astype(float) ** frequency_power
        weights /= weights.sum()
        row.update(
            frequency_short=weights[lengths <= short].sum(),
            frequency_length=(weights * lengths).sum(),
            trees=int(bank.counts.sum()),
        )
    return row


def column_shares(bank: SkeletonBank, frequency_power: float = 1.0) -> dict:
    """Number of input columns -> (share of skeletons, share of draws by ``counts ** frequency_power``)."""
    columns = np.array(
        [1 + max(i for token in bank.tokens(k) if (i := variable_index(token)) is not None) for k in range(len(bank))]
    )
    weights = np.ones(len(bank)) if bank.counts is None else bank.counts.astype(float) ** frequency_power
    weights /= weights.sum()
    return {int(n): (float(np.mean(columns == n)), float(weights[columns == n].sum())) for n in np.unique(columns)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bank")
    parser.add_argument("--limits", type=int, nargs="+", required=True)
    parser.add_argument("--short", type=int, default=9)
    parser.add_argument("--frequency-power", type=float, default=1.0)
    parser.add_argument("--columns", action="store_true", help="also the share of draws by number of input columns")
    args = parser.parse_args(argv)
    weighting = "frequency" if args.frequency_power == 1 else f"frequency^{args.frequency_power:g}"
    print(
        f"| skeletons | draws with <= {args.short} tokens, uniform | same, by {weighting} | "
        f"mean length, uniform | mean length, by {weighting} |"
    )
    print("|---:|---:|---:|---:|---:|")
    for limit in args.limits:
        row = statistics(SkeletonBank(args.bank, limit=limit), args.short, args.frequency_power)
        frequency = f"{100 * row['frequency_short']:.1f}% | " if "frequency_short" in row else "n/a | "
        frequency_length = f"{row['frequency_length']:.1f}" if "frequency_length" in row else "n/a"
        print(
            f"| {row['skeletons']:,} | {100 * row['uniform_short']:.2f}% | {frequency}"
            f"{row['uniform_length']:.1f} | {frequency_length} |"
        )
    if args.columns:
        print(f"\n| skeletons | input columns | share of skeletons | share of draws by {weighting} |")
        print("|---:|---:|---:|---:|")
        for limit in args.limits:
            shares = column_shares(SkeletonBank(args.bank, limit=limit), args.frequency_power)
            for n, (skeletons, draws) in shares.items():
                print(f"| {limit:,} | {n} | {100 * skeletons:.1f}% | {100 * draws:.1f}% |")


if __name__ == "__main__":
    main()
