"""Which FastSRB laws get the warning that the selected law's units are not ``y``'s
(``Units.checked``; a script, not a test: it fits with ``max_time``).

Each of the 120 laws, problem 0, is fitted at ``max_time=1`` with the benchmark's units;
the report lists the laws with the warning, whether each was recovered (srbf's numeric
recovery on the validation points) and the count of recoveries. Prints a markdown
report (and writes it to ``--out``).

    python -m benchmarks.fastsrb.units_mismatch --out benchmarks/results/units/mismatch-fastsrb.md
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from benchmarks.fastsrb.laws import load_laws
from benchmarks.fastsrb.sampling import make_problem
from benchmarks.fastsrb.scoring import numeric_recovery
from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor

MAX_TIME = 1.0


def report() -> str:
    laws = load_laws()
    rows, recovered = [], 0
    for name in sorted(laws):
        law, problem = laws[name], make_problem(laws[name], 0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted = NeSymReSRegressor(random_state=0, max_time=MAX_TIME).fit(
                problem.X_support, problem.y_support, X_units=law.X_units, y_units=law.y_units
            )
        found = numeric_recovery(problem.y_validation, fitted.predict(problem.X_validation))
        recovered += found
        for warning in caught:
            if "The units do not match" in str(warning.message):
                rows.append(f"| {name} | {'yes' if found else 'no'} | `{fitted.expression_}` | {warning.message} |")
    lines = [
        "# The units warning on FastSRB",
        "",
        f"`python -m benchmarks.fastsrb.units_mismatch`: the 120 laws, problem 0, `max_time={MAX_TIME:g}`, with units.",
        "",
        f"**{len(rows)} of {len(laws)} laws get the warning; {recovered} recovered.**",
        "",
        "| law | recovered | law printed | warning |",
        "|---|---|---|---|",
        *rows,
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown report here")
    args = parser.parse_args(argv)
    publish(report(), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
