"""Command line: run FastSRB fits, or report result files.

    python -m benchmarks.fastsrb --methods ours ours-units operon --max-time 1 --problems 3 \\
        --noise 0 --n-jobs 2 --out benchmarks/results/fastsrb/fastsrb-1s.csv
    python -m benchmarks.fastsrb report benchmarks/results/fastsrb/fastsrb-1s.csv --out report.md
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from ..backends import BACKENDS
from .laws import load_laws
from .methods import DEFAULT_METHODS, METHODS
from .report import write_report
from .runner import run


def build_run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.fastsrb",
        description="Run methods on FastSRB, one CSV row per fit (resumable); "
        "'python -m benchmarks.fastsrb report CSV...' writes the report.",
    )
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=sorted(METHODS))
    parser.add_argument("--max-time", type=float, nargs="+", default=[1.0], help="budgets in seconds")
    parser.add_argument("--problems", type=int, default=1, help="problems per law (0 .. N-1, also the seeds)")
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0], help="levels, x std(y_support)")
    parser.add_argument("--laws", nargs="+", help="only these laws (e.g. II.38.3 I.6.2a)")
    parser.add_argument("--max-laws", type=int, help="only the first N laws (of those chosen)")
    parser.add_argument("--n-jobs", type=int, default=1, help="fits at the same time")
    parser.add_argument("--backend", default="loky", choices=BACKENDS)
    parser.add_argument("--threads-per-fit", type=int, default=1, help="cores of one fit (ours: its n_jobs)")
    parser.add_argument("--time-limit", type=float, help="kill a fit after this many seconds (default 2*T + 20)")
    parser.add_argument("--out", required=True, help="result CSV (created or extended)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no line per fit")
    return parser


def build_report_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fastsrb report", description="Report FastSRB results.")
    parser.add_argument("results", nargs="+", help="result CSVs (a fit in several is taken from the first)")
    parser.add_argument("--out", help="markdown file (default: print only)")
    parser.add_argument(
        "--pair", nargs=2, action="append", metavar=("FIRST", "SECOND"), help="paired difference (default: all pairs)"
    )
    parser.add_argument("--n-resamples", type=int, default=10_000)
    return parser


def run_main(argv) -> int:
    args = build_run_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    law_names = args.laws if args.laws else list(load_laws())
    if args.max_laws is not None:
        law_names = law_names[: args.max_laws]
    started = time.perf_counter()

    def show(row: dict) -> None:
        if not args.quiet:
            recovered = "recovered" if row["numeric_recovery"] else "missed"
            print(
                f"{row['law']:>10} p{row['problem']} {row['method']:>10} T={row['max_time']:g} noise={row['noise']:g}: "
                f"{row['status']} {recovered} FVU={row['fvu']:.3g} in {row['fit_time']:.2f} s  {row['expression']}",
                flush=True,
            )

    results = run(
        args.out,
        law_names=law_names,
        methods=args.methods,
        max_times=args.max_time,
        problems=args.problems,
        noises=args.noise,
        n_jobs=args.n_jobs,
        backend=args.backend,
        time_limit=args.time_limit,
        n_threads=args.threads_per_fit,
        on_row=show,
        command="python -m benchmarks.fastsrb " + " ".join(sys.argv[1:] if argv is None else argv),
    )
    print(f"{len(results)} rows in {args.out} ({time.perf_counter() - started:.1f} s)")
    print(results.groupby(["method", "status"]).size().to_string())
    return 0


def report_main(argv) -> int:
    args = build_report_parser().parse_args(argv)
    pairs = [tuple(pair) for pair in args.pair] if args.pair else None
    print(write_report(args.results, args.out, pairs, args.n_resamples), end="")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "report":
        return report_main(argv[1:])
    if argv and argv[0] == "run":
        argv = argv[1:]
    return run_main(argv)


if __name__ == "__main__":
    sys.exit(main())
