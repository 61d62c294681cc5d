"""What training sees from a skeleton bank under each weighting (a script, not a test).

For the first ``N`` training skeletons of a bank: the share of draws that are short
skeletons (at most ``--short`` tokens) and the mean skeleton length, when skeletons are
drawn uniformly and in proportion to their generation counts.

Usage::

    python -m benchmarks.studies.bank_statistics bank --limits 10000 30000 100000 200000
"""

from __future__ import annotations

import argparse

import numpy as np

from pretraining.bank import SkeletonBank


def statistics(bank: SkeletonBank, short: int) -> dict:
    lengths = np.array([len(bank.ids(i)) for i in range(len(bank))])
    row = dict(skeletons=len(bank), uniform_short=np.mean(lengths <= short), uniform_length=lengths.mean())
    if bank.counts is not None:
        weights = bank.counts / bank.counts.sum()
        row.update(
            frequency_short=weights[lengths <= short].sum(),
            frequency_length=(weights * lengths).sum(),
            trees=int(bank.counts.sum()),
        )
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bank")
    parser.add_argument("--limits", type=int, nargs="+", required=True)
    parser.add_argument("--short", type=int, default=9)
    args = parser.parse_args(argv)
    print(
        f"| skeletons | draws with <= {args.short} tokens, uniform | same, by frequency | "
        "mean length, uniform | mean length, by frequency |"
    )
    print("|---:|---:|---:|---:|---:|")
    for limit in args.limits:
        row = statistics(SkeletonBank(args.bank, limit=limit), args.short)
        frequency = f"{100 * row['frequency_short']:.1f}% | " if "frequency_short" in row else "n/a | "
        frequency_length = f"{row['frequency_length']:.1f}" if "frequency_length" in row else "n/a"
        print(
            f"| {row['skeletons']:,} | {100 * row['uniform_short']:.2f}% | {frequency}"
            f"{row['uniform_length']:.1f} | {frequency_length} |"
        )


if __name__ == "__main__":
    main()
