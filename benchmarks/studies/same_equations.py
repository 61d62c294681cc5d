"""Whether a change of code leaves the selected equations as they were.

``record`` fits the network alone (``refine=None``, beam 32, ``random_state=0``: fixed
work, no clock) on each equation of the datasets at seed 0 (128 training points) and
writes one line per fit: dataset, equation, the selected expression; with ``--units``,
each fit is given the equation's ``X_units`` and ``y_units`` (the units stage and its
dimensionless groups). Run it from each checkout; ``compare`` then counts the identical
lines of two records and writes the differences::

    python -m benchmarks.studies.same_equations record --datasets aifeynman-many aifeynman --out before.tsv
    python -m benchmarks.studies.same_equations compare before.tsv after.tsv --title "..." --out report.md
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from benchmarks.datasets import load_dataset


def record(datasets: list[str], out: Path, units: bool = False) -> None:
    from nesymres_sklearn import NeSymReSRegressor

    with out.open("w") as lines:
        for dataset in datasets:
            for equation in load_dataset(dataset):
                X, y = equation.sample_train(128, seed=0)
                X_units, y_units = (equation.units if units else None) or (None, None)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    regressor = NeSymReSRegressor(beam_size=32, refine=None, random_state=0)
                    fitted = regressor.fit(X, y, X_units=X_units, y_units=y_units)
                lines.write(f"{dataset}\t{equation.name}\t{fitted.expression_}\n")
                lines.flush()


def _read(path: Path) -> dict[tuple[str, str], str]:
    rows = (line.rstrip("\n").split("\t") for line in path.read_text().splitlines() if line.strip())
    return {(dataset, name): expression for dataset, name, expression in rows}


def compare(before: Path, after: Path, title: str, command: str) -> str:
    """A Markdown report of the two records."""
    old, new = _read(before), _read(after)
    keys = [key for key in old if key in new]
    differ = [key for key in keys if old[key] != new[key]]
    lines = [
        f"# {title}",
        "",
        f"Command: `{command}`",
        "",
        f"**{len(keys) - len(differ)} of {len(keys)} selected equations are identical**"
        + (
            f"; {len(old) - len(keys)} fits only before, {len(new) - len(keys)} only after."
            if len(keys) < max(len(old), len(new))
            else "."
        ),
        "",
    ]
    if differ:
        lines += ["| dataset | equation | before | after |", "|---|---|---|---|"]
        lines += [f"| {d} | {n} | `{old[(d, n)]}` | `{new[(d, n)]}` |" for d, n in differ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help="fit and write one line per equation")
    recording.add_argument("--datasets", nargs="+", default=["aifeynman-many", "aifeynman"])
    recording.add_argument("--units", action="store_true", help="fit with each equation's X_units and y_units")
    recording.add_argument("--out", type=Path, required=True)
    comparing = commands.add_parser("compare", help="compare two records")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    comparing.add_argument("--title", default="The selected equations before and after a change")
    comparing.add_argument("--recorded-with", default="python -m benchmarks.studies.same_equations record")
    comparing.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.datasets, args.out, args.units)
    else:
        args.out.write_text(compare(args.before, args.after, args.title, args.recorded_with))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
