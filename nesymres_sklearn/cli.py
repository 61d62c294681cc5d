"""``nesymres-fit``: find an equation for a CSV file (or a built-in example) and print it."""

from __future__ import annotations

import argparse
import logging
import sys

import numpy as np

from .estimator import NeSymReSRegressor
from .network.weights import BUNDLED

EXAMPLE_EQUATION = "x0 * sin(x1)"


def example_data(n_points: int = 128, seed: int = 0):
    """Points of ``y = x0 * sin(x1)`` with ``x0, x1 ~ U(1, 5)``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(1, 5, size=(n_points, 2))
    return X, X[:, 0] * np.sin(X[:, 1])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("csv", nargs="?", help="CSV file with a header row; features and target columns")
    source.add_argument("--example", action="store_true", help=f"fit points of y = {EXAMPLE_EQUATION}")
    parser.add_argument("--target", help="target column of the CSV (default: the last column)")
    parser.add_argument(
        "--model",
        default=BUNDLED,
        help="'bundled', a folder, a Hub repo id, or an original checkpoint (file.ckpt or user/repo/file.ckpt)",
    )
    parser.add_argument("--beam-size", type=int, default=32)
    parser.add_argument("--decoding", choices=["beam", "sample"], default="beam")
    parser.add_argument("--max-time", type=float, help="seconds for the whole fit (default: one round, no budget)")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--top", type=int, default=5, help="also list this many candidates")
    parser.add_argument("--verbose", action="store_true")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    if args.example:
        X, y = example_data()
        print(f"Data: 128 points of y = {EXAMPLE_EQUATION}, x0, x1 ~ U(1, 5)")
    else:
        import pandas as pd

        frame = pd.read_csv(args.csv)
        target = args.target or frame.columns[-1]
        if target not in frame.columns:
            print(f"error: no column {target!r} in {args.csv}; columns are {list(frame.columns)}", file=sys.stderr)
            return 2
        X, y = frame.drop(columns=[target]), frame[target]
    regressor = NeSymReSRegressor(
        model=args.model,
        beam_size=args.beam_size,
        decoding=args.decoding,
        max_time=args.max_time,
        random_state=args.random_state,
        verbose=int(args.verbose),
    ).fit(X, y)
    print(f"Equation: {regressor.expression_}")
    print(f"R^2 on the data: {regressor.score(X, y):.6f}")
    print(f"Fit time: {sum(regressor.timings_.values()):.2f} s")
    print(f"Top {args.top} candidates:")
    columns = ["expression", "loss", "complexity"]
    print(regressor.equations_[columns].head(args.top).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
