"""A markdown report of FastSRB result files.

One row per method, budget and noise level: numeric recovery over all laws, over the laws
of 1-3 and of 4-8 variables, symbolic recovery (percent of fits; failed fits are misses),
the median and largest fit time, the fits over ``1.1 * max_time + 0.05`` s, the errors and
the fits killed or crashed, the *wild misses* (misses whose FVU on the fresh validation
points exceeds :data:`WILD_FVU`: worse than the mean; in brackets those that are a constant,
which is the mean of the fitted points) and the fits whose law reads a
column beyond the law's (the added columns of ``ours+irrelevant``). Then, for each pair of
methods, the paired difference of numeric recovery on the same problems with its 95% bootstrap interval over laws
(:func:`benchmarks.studies.paired_difference.paired_table`), per noise level and group of laws.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import FVU_THRESHOLD
from ..studies.paired_difference import markdown as paired_markdown
from ..studies.paired_difference import paired_table
from .methods import METHODS, columns_read, uses_columns_beyond
from .runner import read_results

#: Groups of laws by their number of variables: label -> (fewest, most).
GROUPS = {"all": (1, 99), "1-3 variables": (1, 3), "4-8 variables": (4, 99)}
#: Pairs reported by default, where both methods are in the results.
DEFAULT_PAIRS = (("ours", "operon"), ("ours-units", "operon"), ("ours-units", "ours"))
#: The summary's column of each group's numeric recovery.
GROUP_COLUMNS = {"all": "numeric_all", "1-3 variables": "numeric_1_3", "4-8 variables": "numeric_4_8"}
#: A miss whose FVU on the validation points exceeds this predicts worse than their mean.
WILD_FVU = 1.0


def budget_limit(max_time):
    """The fit time a budget allows: ``1.1 * max_time + 0.05`` s."""
    return 1.1 * max_time + 0.05


def _numeric(frame: pd.DataFrame) -> pd.Series:
    return pd.to_numeric(frame["numeric_recovery"], errors="coerce").fillna(0.0)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per method, budget and noise level (see the module docstring), the methods
    in :data:`.methods.METHODS`' order, then others as they come."""
    frame = frame.assign(
        numeric=100 * _numeric(frame),
        symbolic=100 * pd.to_numeric(frame["symbolic_recovery"], errors="coerce").fillna(0.0),
        fit_time=pd.to_numeric(frame["fit_time"], errors="coerce"),
        wild=pd.to_numeric(frame["fvu"], errors="coerce").fillna(np.inf) > WILD_FVU,
        beyond=[uses_columns_beyond(e, n) for e, n in zip(frame["expression"], frame["n_variables"], strict=True)],
        constant=[isinstance(e, str) and not columns_read(e) for e in frame["expression"]],
    )
    methods = list(dict.fromkeys([*(name for name in METHODS if name in set(frame["method"])), *frame["method"]]))
    rows = []
    for (max_time, noise, method), group in frame.groupby(["max_time", "noise", "method"], sort=False):
        row = {"method": method, "max_time": max_time, "noise": noise, "fits": len(group)}
        for label, (low, high) in GROUPS.items():
            part = group[group["n_variables"].between(low, high)]
            row[GROUP_COLUMNS[label]] = part["numeric"].mean() if len(part) else float("nan")
        row.update(
            symbolic=group["symbolic"].mean(),
            median_fit_s=group["fit_time"].median(),
            max_fit_s=group["fit_time"].max(),
            over_budget=int((group["fit_time"] > budget_limit(max_time)).sum()),
            errors=int((group["status"] == "error").sum()),
            killed=int(group["status"].isin(["timeout", "crashed"]).sum()),
            wild=int(group["wild"].sum()),
            wild_constants=int((group["wild"] & group["constant"]).sum()),
            beyond=int(group["beyond"].sum()),
        )
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = table["method"].map({method: index for index, method in enumerate(methods)})
    return table.assign(order=order).sort_values(["noise", "max_time", "order"]).drop(columns="order")


def paired(frame: pd.DataFrame, first: str, second: str, n_resamples: int = 10_000) -> dict[float, pd.DataFrame]:
    """Per noise level: the paired difference ``first - second`` of numeric recovery
    (percentage points) per group of laws and budget, fits paired by law and problem."""
    base = frame.assign(equation=frame["law"], seed=frame["problem"], value=frame["max_time"])
    labelled = pd.concat(
        [base[base["n_variables"].between(low, high)].assign(dataset=label) for label, (low, high) in GROUPS.items()],
        ignore_index=True,
    )
    order = {label: index for index, label in enumerate(GROUPS)}
    tables = {}
    for noise, group in labelled.groupby("noise", sort=True):
        table = paired_table(group, first, second, "numeric_recovery", n_resamples)
        if not table.empty:
            table = table.sort_values(["value", "dataset"], key=lambda c: c.map(order) if c.name == "dataset" else c)
        tables[noise] = table
    return tables


def report_markdown(frame: pd.DataFrame, pairs: list[tuple[str, str]] | None = None, n_resamples=10_000) -> str:
    """The report (see the module docstring); ``pairs`` default to :data:`DEFAULT_PAIRS`."""
    counts = frame.drop_duplicates("law").groupby(frame["n_variables"] >= 4).size()
    lines = [
        "# FastSRB",
        "",
        f"Numeric recovery: FVU <= {FVU_THRESHOLD:.7g} on the clean validation points (srbf's perfect fit); "
        "symbolic: the law or an accepted form, constants to six significant digits. Percent of fits; "
        "errors, timeouts and crashes are misses. "
        f"Laws: {counts.get(False, 0)} of 1-3 variables, {counts.get(True, 0)} of 4-8. "
        "Over budget: fits longer than 1.1 * max_time + 0.05 s; killed: timeouts and crashes; "
        f"wild: misses with FVU > {WILD_FVU:g} (worse than the mean; in brackets, constants); "
        "beyond: laws reading a column the law does not have (the added columns of ours+irrelevant).",
        "",
        "| method | max_time s | noise | fits | all % | 1-3 var. % | 4-8 var. % | symbolic % "
        "| median fit s | max fit s | over budget | errors | killed | wild | beyond |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in summary(frame).itertuples(index=False):
        lines.append(
            f"| {row.method} | {row.max_time:g} | {row.noise:g} | {row.fits} | {_percent(row.numeric_all)} | "
            f"{_percent(row.numeric_1_3)} | {_percent(row.numeric_4_8)} | {row.symbolic:.1f} | "
            f"{row.median_fit_s:.2f} | {row.max_fit_s:.2f} | {row.over_budget} | {row.errors} | {row.killed} | "
            f"{row.wild} ({row.wild_constants}) | {row.beyond} |"
        )
    if pairs is None:
        methods = set(frame["method"])
        pairs = [pair for pair in DEFAULT_PAIRS if set(pair) <= methods]
    for first, second in pairs:
        for noise, table in paired(frame, first, second, n_resamples).items():
            if table.empty:
                continue
            lines += ["", f"## {first} - {second}, noise {noise:g}", ""]
            text = paired_markdown(table, first, second, "numeric_recovery")
            text = text.replace("| dataset | setting |", "| laws | max_time s |")
            lines.append(text.replace("by equation and seed", "by law and problem").rstrip("\n"))
    return "\n".join(lines) + "\n"


def _percent(value: float) -> str:
    return "-" if pd.isna(value) else f"{value:.1f}"


def write_report(paths, out=None, pairs=None, n_resamples=10_000) -> str:
    """The report of result files (a fit in several taken from the first), written to ``out`` if given."""
    text = report_markdown(read_results(*paths), pairs, n_resamples)
    if out is not None:
        with open(out, "w") as handle:
            handle.write(text)
    return text
