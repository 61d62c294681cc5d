"""Validation of the DSR re-implementation (``benchmarks.methods.dsr``) on the Nguyen
problems against the DSR paper.

Runs ``dsr`` through the benchmark runner in the paper's Nguyen setting (20 training
points on the paper's supports, function set {+, -, *, /, sin, cos, exp, log, x}
without the ``const`` token), then writes a markdown table of our exact-recovery rate
per problem next to the rate the paper reports (Petersen et al., ICLR 2021, Table 1:
DSR, 100 runs per problem, 2M expressions per run)::

    python -m benchmarks.studies.dsr_nguyen --n-expressions 200000 --seeds 0 1 2 \\
        --out benchmarks/results/dsr/dsr-nguyen.csv

An expression counts as recovered when it equals the true one to 1e-9 (relative) on
1,000 iid test points; with no fitted constants that is symbolic equivalence (an
unequal expression would have to agree on 1,000 random points).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import sympy

from benchmarks.datasets import load_dataset, parse_expression, variable_symbols
from benchmarks.profiles import Profile
from benchmarks.runner import run

#: DSR's recovery rates on Nguyen-1..12 (Petersen et al., 2021, Table 1).
PAPER_RECOVERY = {
    "Nguyen-1": 100,
    "Nguyen-2": 100,
    "Nguyen-3": 100,
    "Nguyen-4": 100,
    "Nguyen-5": 72,
    "Nguyen-6": 100,
    "Nguyen-7": 35,
    "Nguyen-8": 96,
    "Nguyen-9": 100,
    "Nguyen-10": 100,
    "Nguyen-11": 100,
    "Nguyen-12": 0,
}
PAPER_N_EXPRESSIONS = 2_000_000
N_POINTS = 20
N_CHECK_POINTS = 1000


def is_recovered(expression, equation) -> bool:
    """Whether ``expression`` (text over ``x_1, ...``) equals the equation's to 1e-9 on
    1,000 iid test points, non-finite values in the same places."""
    if not isinstance(expression, str) or not expression:
        return False
    symbols = variable_symbols(equation.n_variables)
    try:
        function = sympy.lambdify(symbols, parse_expression(expression), modules="numpy")
    except (sympy.SympifyError, TypeError, SyntaxError):
        return False
    X, y = equation.sample_test("iid", N_CHECK_POINTS, seed=0)
    with np.errstate(all="ignore"):
        y_hat = np.broadcast_to(np.asarray(function(*X.T), dtype=np.float64), y.shape)
    finite = np.isfinite(y)
    if not np.array_equal(finite, np.isfinite(y_hat)):
        return False
    return bool(np.allclose(y_hat[finite], y[finite], rtol=1e-9, atol=1e-12))


def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per equation and budget: runs, our recovery rate, the paper's, A1 (iid), fit times."""
    equations = {e.name: e for e in load_dataset("nguyen")}
    results = results.assign(
        recovered=[is_recovered(row.expression, equations[row.equation]) for row in results.itertuples()]
    )
    rows = []
    for (name, budget), group in results.groupby(["equation", "value"], sort=False):
        ok = group["status"] == "ok"
        rows.append(
            {
                "equation": name,
                "expression": equations[name].expression,
                "n_expressions": int(budget),
                "runs": len(group),
                "recovered": int(group["recovered"].sum()),
                "ours": 100 * group["recovered"].mean(),
                "paper": PAPER_RECOVERY.get(name, np.nan),
                "a1_iid": 100 * group["a1_iid"].fillna(0).mean(),
                "fit_time_mean": group.loc[ok, "fit_time"].mean(),
                "fit_time_max": group.loc[ok, "fit_time"].max(),
                "failed": int((~ok).sum()),
            }
        )
    order = {name: i for i, name in enumerate(equations)}
    table = pd.DataFrame(rows)
    return table.sort_values(["equation", "n_expressions"], key=lambda s: s.map(order) if s.name == "equation" else s)


def markdown(table: pd.DataFrame, command: str) -> str:
    """The markdown report: one column group per budget, the paper's rates, the setting."""
    budgets = sorted(table["n_expressions"].unique())
    header = ["Problem", "Expression"]
    for budget in budgets:
        header += [f"Recovered, {budget // 1000}k expressions", f"Fit time mean / max (s), {budget // 1000}k"]
    header += [f"Paper (DSR, Table 1; 100 runs, {PAPER_N_EXPRESSIONS // 1_000_000}M expressions)"]
    lines = ["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * (2 * len(budgets) + 1)]
    for name, group in table.groupby("equation", sort=False):
        cells = [name, f"`{group['expression'].iloc[0]}`"]
        for budget in budgets:
            row = group[group["n_expressions"] == budget]
            if row.empty:
                cells += ["", ""]
                continue
            row = row.iloc[0]
            failed = f", {row.failed} failed" if row.failed else ""
            cells += [
                f"{row.recovered}/{row.runs} ({row.ours:.0f}%{failed})",
                f"{row.fit_time_mean:.0f} / {row.fit_time_max:.0f}",
            ]
        cells.append(f"{group['paper'].iloc[0]:.0f}%")
        lines.append("| " + " | ".join(cells) + " |")
    average = ["**All**", ""]
    for budget in budgets:
        rows = table[table["n_expressions"] == budget]
        recovered, runs = rows["recovered"].sum(), rows["runs"].sum()
        average += [f"{recovered}/{runs} ({100 * recovered / runs:.0f}%)", ""]
    average.append(f"{table.drop_duplicates('equation')['paper'].mean():.1f}%")
    lines.append("| " + " | ".join(average) + " |")
    lines += [
        "",
        f"Ours: {N_POINTS} training points per run on the paper's supports, function set"
        " {+, -, *, /, sin, cos, exp, log, x} (no constants), batches of 1000, one CPU thread"
        " each, one fit at a time on a shared 2-core machine; a run stops early once an"
        " expression fits to a normalised MSE below 1e-12. Recovered: equal to the true"
        " expression to 1e-9 on 1,000 test points (no fitted constants, so symbolically equal).",
        "",
        ("Command" if len(budgets) == 1 else "Last command (other budgets: the same with their values)")
        + f": `{command}`",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-expressions", type=int, nargs="+", default=[200_000], help="budgets per run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--equations", nargs="+", default=[f"Nguyen-{i}" for i in range(1, 9)])
    parser.add_argument("--time-budget", type=float, default=120.0, help="soft per-run stop (s)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="hard per-run limit (s)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/dsr/dsr-nguyen.csv")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.studies.dsr_nguyen " + shlex.join(sys.argv[1:] if argv is None else argv)
    profile = Profile(
        datasets={"nguyen": args.equations},
        methods={"dsr": tuple(args.n_expressions)},
        n_points=(N_POINTS,),
        seeds=tuple(args.seeds),
        time_limit=args.time_limit,
        time_budget=args.time_budget,
        method_options={"dsr": {"const": False}},
    )
    results = run(profile, args.out, n_jobs=args.n_jobs, command=command)
    table = summary_table(results[results["equation"].isin(args.equations)])
    report = Path(args.out).with_suffix(".md")
    title = f"# DSR (our re-implementation) on {args.equations[0]} .. {args.equations[-1]}\n\n"
    report.write_text(title + markdown(table, command))
    print(report.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
