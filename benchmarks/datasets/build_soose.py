"""Build the SOOSE datasets (strictly out-of-sample equations) as committed CSV files.

The paper builds SOOSE from skeletons held out of the pretraining set: distinct from
every training skeleton both symbolically and numerically (different images on 500
points drawn from U(-10, 10)). The held-out split of a :mod:`pretraining.bank` bank is
exactly that, so this script reads one:

- ``--bank FOLDER``: the held-out split of an existing bank (the pretraining bank the
  released model was trained on: this is the paper's construction);
- without ``--bank``: a bank is built first with :func:`pretraining.bank.build_bank`
  and a fixed seed (``--n-train`` training skeletons, so the held-out skeletons are
  out of sample for that bank only; rebuild with ``--bank`` once the pretraining bank
  of the released model exists), in a temporary folder or in ``--bank-out``, where
  an interrupted or repeated build resumes.

Each of the first ``--n-equations`` usable held-out skeletons gives three equations
with the same skeleton and support (placeholders attached by the paper's rule):

- SOOSE-WC: up to three constants, as in pretraining: ``n_c`` uniform in
  ``0..min(3, N_c)`` placeholders get a value from U(1, 5), the others their neutral
  value (1 for multiplicative and pre-existing, 0 for additive placeholders);
- SOOSE-NC: no constants (every placeholder neutral: the bare skeleton);
- SOOSE-FC: every placeholder gets a value from U(1, 5).

Constants are rounded to 3 decimals (as in the paper's SOOSE table). The support of
each variable is drawn as in pretraining, ``S1 < S2`` from U(-10, 10), but at least
``MIN_WIDTH`` = 1 wide (narrower supports make any equation look linear); it is
redrawn (up to 20 times) until each of the three equations has a finite value on at
least half of 1,000 points drawn in it, otherwise the skeleton is skipped.

``--min-variables K`` keeps only the held-out skeletons with at least ``K`` input
columns (``x_1`` up to the highest variable used; the many-variable validation set
``validation-many`` comes from a bank with more variables), ``--per-variables N`` takes
at most ``N`` skeletons of each number of columns (``validation-wide``, balanced over 4
to 8 columns as far as the bank holds them), and ``--single wc`` writes only that
version, as ``NAME.csv``.

Command line::

    python -m benchmarks.datasets.build_soose                  # fixed-seed bank, 200 equations
    python -m benchmarks.datasets.build_soose --bank path/to/bank
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import sympy

from nesymres_sklearn.expression.prefix import variable_symbols

from . import DATA_DIR, MAX_VARIABLES

logger = logging.getLogger(__name__)

VERSIONS = ("wc", "nc", "fc")
CONSTANT_RANGE = (1.0, 5.0)
SUPPORT_RANGE = (-10.0, 10.0)
MAX_CONSTANTS = 3
MIN_VALID_FRACTION = 0.5
SUPPORT_TRIES = 20
CHECK_POINTS = 1000
DECIMALS = 3
MIN_WIDTH = 1.0


def constant_values(kinds: list[str], version: str, rng: np.random.Generator) -> np.ndarray:
    """Values of the attached placeholders of one SOOSE version."""
    from nesymres_sklearn.expression.placeholders import neutral_constants

    values = neutral_constants(kinds)
    n_total = len(kinds)
    if version == "nc" or n_total == 0:
        chosen = np.array([], dtype=int)
    elif version == "fc":
        chosen = np.arange(n_total)
    elif version == "wc":
        n_chosen = int(rng.integers(0, min(MAX_CONSTANTS, n_total) + 1))
        chosen = rng.choice(n_total, size=n_chosen, replace=False) if n_chosen else np.array([], dtype=int)
    else:
        raise ValueError(f"Unknown SOOSE version {version!r}.")
    values[chosen] = np.round(rng.uniform(*CONSTANT_RANGE, size=len(chosen)), DECIMALS)
    return values


def instantiate(tokens: list[str], values: np.ndarray, n_variables: int = MAX_VARIABLES) -> sympy.Expr:
    """SymPy expression of an attached skeleton over ``x_1 .. x_{n_variables}`` with its
    placeholders set to ``values``."""
    from nesymres_sklearn.expression.prefix import constant_symbols, prefix_to_sympy

    expr = prefix_to_sympy(tokens, variable_symbols(n_variables))
    replacements = {
        c: sympy.Float(v, 4) if not float(v).is_integer() else sympy.Integer(int(v))
        for c, v in zip(constant_symbols(len(values)), values)
    }
    return expr.xreplace(replacements)


def _valid_fraction(expr: sympy.Expr, supports: np.ndarray, rng: np.random.Generator) -> float:
    symbols = variable_symbols(len(supports))
    function = sympy.lambdify(symbols, expr, modules="numpy")
    X = rng.uniform(supports[:, 0], supports[:, 1], size=(CHECK_POINTS, len(supports)))
    with np.errstate(all="ignore"):
        values = np.asarray(function(*X.T))
    if np.iscomplexobj(values):
        values = np.where(np.abs(values.imag) > 0, np.nan, values.real)
    values = np.broadcast_to(values, (CHECK_POINTS,)).astype(np.float64)
    return float(np.isfinite(values).mean())


def soose_rows(
    bank, n_equations: int, seed: int, min_variables: int = 1, per_variables: int | None = None
) -> dict[str, list[dict]]:
    """Rows of the three SOOSE files from the held-out skeletons of ``bank`` that have
    at least ``min_variables`` input columns (``x_1`` up to the highest variable used),
    and at most ``per_variables`` skeletons of each number of columns when given."""
    from nesymres_sklearn.expression.tokens import variable_index

    rows = {version: [] for version in VERSIONS}
    taken = Counter()
    for index in range(len(bank)):
        if len(rows["wc"]) == n_equations:
            break
        tokens, kinds = bank[index]
        used = {i for t in tokens if (i := variable_index(t)) is not None}
        n_variables = max(used) + 1
        if n_variables < min_variables or (per_variables is not None and taken[n_variables] == per_variables):
            continue
        rng = np.random.default_rng([seed, index])
        expressions = {
            version: instantiate(tokens, constant_values(kinds, version, rng), n_variables) for version in VERSIONS
        }
        for _ in range(SUPPORT_TRIES):
            supports = np.sort(rng.uniform(*SUPPORT_RANGE, size=(n_variables, 2)), axis=1).round(DECIMALS)
            if np.any(supports[:, 1] - supports[:, 0] < MIN_WIDTH):
                continue
            if all(_valid_fraction(e, supports, rng) >= MIN_VALID_FRACTION for e in expressions.values()):
                break
        else:
            logger.info("Skipping held-out skeleton %d: no support with enough finite values.", index)
            continue
        taken[n_variables] += 1
        number = len(rows["wc"]) + 1
        skeleton = " ".join(tokens)
        for version, expr in expressions.items():
            row = {"name": f"SOOSE-{version.upper()}-{number:03d}", "expression": str(expr)}
            for k in range(max(MAX_VARIABLES, n_variables)):
                low, high = supports[k] if k < n_variables else (None, None)
                row[f"x_{k + 1}_lo"], row[f"x_{k + 1}_hi"] = low, high
            row["bank_index"] = index
            row["skeleton"] = skeleton
            rows[version].append(row)
    if per_variables is not None:
        return rows
    if len(rows["wc"]) < n_equations:
        raise ValueError(f"Only {len(rows['wc'])} usable held-out skeletons; build a bank with more.")
    return rows


def write_datasets(
    rows: dict[str, list[dict]], source: str, out_dir: Path = DATA_DIR, name: str = "soose", single: str | None = None
) -> list[Path]:
    """One file ``{name}_{version}.csv`` per version, or only ``{name}.csv`` holding the
    ``single`` version."""
    paths = []
    descriptions = {
        "wc": "up to three constants from U(1, 5), as in pretraining",
        "nc": "no constants (every attached placeholder at its neutral value)",
        "fc": "every attached placeholder a constant from U(1, 5)",
    }
    for version, version_rows in rows.items():
        if single is not None and version != single:
            continue
        path = out_dir / (f"{name}.csv" if single else f"{name}_{version}.csv")
        table = pd.DataFrame(version_rows)
        supports = sorted(
            (c for c in table.columns if c.startswith("x_")), key=lambda c: (int(c.split("_")[1]), c.endswith("_hi"))
        )
        table = table[["name", "expression", *supports, "bank_index", "skeleton"]]
        n_columns = len(supports) // 2
        header = [
            f"{name.upper()}-{version.upper()}: {len(version_rows)} strictly out-of-sample equations, "
            f"{descriptions[version]}.",
            "Built by `python -m benchmarks.datasets.build_soose` (see its docstring for the construction)",
            f"from {source}.",
            f"Columns: expression in SymPy syntax over x_1..x_{n_columns}; x_k_lo, x_k_hi: support of x_k;",
            "bank_index: held-out skeleton it comes from; skeleton: that skeleton in prefix",
            "notation with the paper's placeholders attached (c).",
        ]
        with path.open("w") as handle:
            handle.write("".join(f"# {line}\n" for line in header))
            table.to_csv(handle, index=False)
        paths.append(path)
    return paths


def _bank_settings(folder: Path) -> str:
    """The generator settings and seed of a bank, as its ``metadata.json`` records them."""
    metadata = json.loads((folder / "metadata.json").read_text())
    settings, generator = metadata["settings"], metadata["settings"]["generator"]
    return (
        f"{metadata['n_skeletons']} training and {settings['n_heldout']} held-out skeletons, seed {settings['seed']}, "
        f"{generator['n_variables']} variables, up to {generator['max_operators']} operators, "
        f"simplification {generator['simplification']}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.datasets.build_soose", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--bank", help="existing bank folder whose held-out split is used")
    parser.add_argument("--bank-out", help="folder for the bank built without --bank (default: temporary)")
    parser.add_argument("--n-equations", type=int, default=200)
    parser.add_argument("--n-train", type=int, default=5000, help="training skeletons of the bank built without --bank")
    parser.add_argument(
        "--n-heldout", type=int, default=400, help="held-out skeletons of the bank built without --bank"
    )
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--out-dir", default=str(DATA_DIR))
    parser.add_argument("--name", default="soose", help="file prefix: 'soose', or 'validation' for the validation sets")
    parser.add_argument(
        "--min-variables", type=int, default=1, help="skip held-out skeletons with fewer input columns than this"
    )
    parser.add_argument(
        "--per-variables",
        type=int,
        help="at most this many skeletons of each number of input columns (a set balanced over the columns; "
        "then --n-equations is a cap, and a bank short of some counts gives fewer)",
    )
    parser.add_argument("--single", choices=VERSIONS, help="write only this version, as NAME.csv")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    from pretraining.bank import SkeletonBank, build_bank

    with tempfile.TemporaryDirectory() as scratch:
        if args.bank:
            folder = Path(args.bank)
            command = " ".join(sys.argv[1:] if argv is None else argv)
            source = (
                f"the held-out split of the bank in {folder.name} ({_bank_settings(folder)}), "
                f"with `build_soose {command}`"
            )
        else:
            folder = Path(args.bank_out) if args.bank_out else Path(scratch) / "bank"
            build_bank(
                folder,
                args.n_train,
                args.n_heldout,
                seed=args.seed,
                n_jobs=args.n_jobs,
                chunk_size=50,
                chunks_per_shard=20,
            )
            source = (
                f"the held-out split of a bank built with pretraining.bank.build_bank(n_skeletons="
                f"{args.n_train}, n_heldout={args.n_heldout}, seed={args.seed}, chunk_size=50, "
                f"chunks_per_shard=20), paper generator settings"
            )
        bank = SkeletonBank(folder, "heldout")
        rows = soose_rows(bank, args.n_equations, args.seed, args.min_variables, args.per_variables)
    for path in write_datasets(rows, source, Path(args.out_dir), args.name, args.single):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
