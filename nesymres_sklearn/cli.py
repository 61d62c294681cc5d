"""``nesymres-fit``: find an equation for a CSV file (or a built-in example) and print it."""

from __future__ import annotations

import argparse
import codecs
import csv
import io
import logging
import math
import sys
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# numpy, pandas, SymPy and the estimator (scikit-learn) are imported when a fit needs
# them, so that --help and usage errors answer at once (3.6 s when imported eagerly).

PROG = "nesymres-fit"
#: The estimator's default model, without importing the estimator (a test keeps them equal).
DEFAULT_MODEL = "bundled"
#: The module's docstring as ``--help`` prints it: plain text, no reStructuredText.
DESCRIPTION = f"{PROG}: find an equation for a CSV file (or a built-in example) and print it."
EXAMPLE_EQUATION = "x0 * sin(x1)"
# Spellings of the delimiters that are awkward to type, and the other delimiters a
# one-column file is searched for.
DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "space": " "}
OTHER_DELIMITERS = {";": ";", "\t": "tab", "|": "|", ",": ","}


class DataError(ValueError):
    """A CSV file the command cannot use; the message names the problem and the fix."""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def __getattr__(name: str):
    if name == "NeSymReSRegressor":  # the estimator, imported on first use
        from .estimator import NeSymReSRegressor

        return NeSymReSRegressor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def example_data(n_points: int = 128, seed: int = 0):
    """Points of ``y = x0 * sin(x1)`` with ``x0, x1 ~ U(1, 5)``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.uniform(1, 5, size=(n_points, 2))
    return X, X[:, 0] * np.sin(X[:, 1])


def _integer(minimum: int, maximum: int | None = None):
    """argparse type: an integer in ``[minimum, maximum]``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"at least {minimum}" if maximum is None else f"between {minimum} and {maximum}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    """argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _delimiter(text: str) -> str:
    """argparse type: one character, or ``tab`` / ``\\t`` / ``space``."""
    value = DELIMITER_NAMES.get(text, text)
    if len(value) != 1 or value in '"\r\n':
        raise argparse.ArgumentTypeError(f"expected one character, 'tab' or 'space', got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=DESCRIPTION)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("csv", nargs="?", help="CSV file: a header row, then one row of numbers per point")
    source.add_argument("--example", action="store_true", help=f"fit points of y = {EXAMPLE_EQUATION}")
    parser.add_argument("--target", help="target column of the CSV (default: the last column)")
    parser.add_argument(
        "--delimiter", type=_delimiter, help="field separator of the CSV: one character or 'tab' (default: ',')"
    )
    parser.add_argument(
        "--no-header", action="store_true", help="the CSV has no header row; its columns are called x0, x1, ..."
    )
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help="'bundled', a folder, a Hub repo id, or an original checkpoint (file.ckpt or user/repo/file.ckpt)",
    )
    parser.add_argument("--beam-size", type=_integer(1), default=32, help="beams kept, or skeletons sampled (>= 1)")
    parser.add_argument("--decoding", choices=["beam", "sample"], default="beam")
    parser.add_argument(
        "--max-time", type=_seconds, help="seconds for the whole fit (default: the whole plan of work, no budget)"
    )
    parser.add_argument(
        "--refine",
        choices=["auto", "operon", "none"],
        default="auto",
        help="seed Operon's search with the network's candidates: 'auto' (the default: Operon when pyoperon is "
        "installed), 'operon' (pyoperon needed) or 'none' (the network alone)",
    )
    parser.add_argument(
        "--x-units",
        type=lambda text: [unit.strip() for unit in text.split(",")],
        help="units of the feature columns, in order, comma-separated as pint reads them, e.g. 'm/s,s,m' "
        "(empty for dimensionless); with --y-units, dimensional analysis",
    )
    parser.add_argument("--y-units", help="unit of the target, e.g. 'm' ('' for dimensionless); with --x-units")
    parser.add_argument("--random-state", type=_integer(0, 2**32 - 1), default=0)
    parser.add_argument("--top", type=_integer(0), default=5, help="also list this many candidates (0: none)")
    parser.add_argument("--verbose", action="store_true")
    return parser


def _number(text: str) -> float | None:
    """``text`` as a float, or None when it is not a number (Python's digit
    separators, ``1_000``, included: a CSV number has none)."""
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _read_rows(path: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """Non-blank rows of a UTF-8 CSV file with the line each ends on; rows whose first
    field starts with ``#`` are comments, left out."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a folder, not a CSV file") from None
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror})") from None
    if b"\0" in data:
        raise DataError(f"{path}: binary content, not a CSV text file")
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text (byte {data[error.start]:#04x}); save it as UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    try:
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as error:
        raise DataError(f"{path}: line {reader.line_num}: {error}") from None
    return [
        (line, [field.strip() for field in row])
        for line, row in rows
        if any(field.strip() for field in row) and not row[0].lstrip().startswith("#")
    ]


def _one_column(path: str, line: int, field: str, delimiter: str) -> DataError:
    """The error for a file whose first row is one field: a wrong delimiter, or no features."""
    other = next((name for char, name in OTHER_DELIMITERS.items() if char != delimiter and char in field), None)
    if other is not None:
        return DataError(f"{path}: line {line} is one field with delimiter {delimiter!r}; use --delimiter '{other}'")
    return DataError(f"{path}: only one column; expected feature columns and a target column")


def _column_names(path: str, first: list[str]) -> list[str]:
    """The header's column names, checked to be usable as variable names."""
    seen = {}
    for position, name in enumerate(first, start=1):
        if not name:
            raise DataError(f"{path}: column {position} has no name in the header; name it or remove the column")
        if name in seen:
            raise DataError(f"{path}: columns {seen[name]} and {position} are both named {name!r}; rename one")
        if _number(name) is not None:
            raise DataError(
                f"{path}: column {position} is named {name!r}, a number; "
                "rename it, or use --no-header if line 1 is data"
            )
        seen[name] = position
    return first


def _column_values(path: str, name: str, cells: list[tuple[int, str]]) -> np.ndarray:
    """Numbers of one column; the first bad cell is named by its line."""
    import numpy as np

    values = [_number(cell) for _, cell in cells]
    bad = [(line, cell) for (line, cell), value in zip(cells, values) if value is None or not math.isfinite(value)]
    if not bad:
        return np.array(values)
    line, cell = bad[0]
    if "," in cell and _number(cell.replace(",", ".")) is not None:
        raise DataError(
            f"{path}: line {line}: {cell!r} in column {name!r} has a decimal comma; "
            f"write numbers with a decimal point ({cell.replace(',', '.')!r})"
        )
    if not cell:
        raise DataError(f"{path}: line {line}: column {name!r} is empty; fill in or remove rows with missing values")
    if "_" in cell and _number(cell.replace("_", "")) is not None:
        raise DataError(
            f"{path}: line {line}: {cell!r} in column {name!r} has digit separators; "
            f"write the number without them ({cell.replace('_', '')!r})"
        )
    if all(_number(cell) is None for _, cell in cells if cell):
        raise DataError(
            f"{path}: column {name!r} holds text ({cell!r} on line {line}), not numbers; "
            "remove it or encode it as numbers"
        )
    if _number(cell) is None:
        raise DataError(f"{path}: line {line}: {cell!r} in column {name!r} is not a number")
    raise DataError(f"{path}: line {line}: column {name!r} is {cell!r}; only finite numbers can be fitted")


def read_csv(path: str, *, target: str | None = None, delimiter: str = ",", header: bool = True):
    """Features (DataFrame) and target (Series) of a CSV file, and notes for the user.

    A first line whose fields are all numbers (or empty) is read as data, with a note. Raises
    :class:`DataError` naming the problem, its line and the fix.
    """
    rows = _read_rows(path, delimiter)
    if not rows:
        raise DataError(f"{path}: the file is empty; expected a header row and rows of numbers")
    notes = []
    first_line, first = rows[0]
    if len(first) == 1:
        raise _one_column(path, first_line, first[0], delimiter)
    if header and all(_number(field) is not None for field in first if field):
        header = False
        notes.append(f"{path}: line {first_line} holds only numbers, so it is data, not a header (--no-header says so)")
    if header:
        names = _column_names(path, first)
        rows = rows[1:]
        if not rows:
            raise DataError(f"{path}: no data rows after the header")
    else:
        names = [f"x{i}" for i in range(len(first))]
    for line, fields in rows:
        if len(fields) != len(names):
            source = "the header" if header else f"line {first_line}"
            raise DataError(f"{path}: line {line} has {len(fields)} fields, expected {len(names)} as in {source}")
    target = names[-1] if target is None else target
    if target not in names:
        raise DataError(f"{path}: no column {target!r}; --target takes one of {', '.join(names)}")
    columns = {name: _column_values(path, name, [(line, row[j]) for line, row in rows]) for j, name in enumerate(names)}
    import pandas as pd

    y = pd.Series(columns.pop(target), name=target)
    return pd.DataFrame(columns), y, notes


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.example and (args.target is not None or args.no_header or args.delimiter is not None):
        parser.error("--target, --delimiter and --no-header describe a CSV file, not --example")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    if args.example:
        X, y = example_data()
        print(f"Data: 128 points of y = {EXAMPLE_EQUATION}, x0, x1 ~ U(1, 5)")
    else:
        try:
            delimiter, header = args.delimiter or ",", not args.no_header
            X, y, notes = read_csv(args.csv, target=args.target, delimiter=delimiter, header=header)
        except DataError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return 2
        for note in notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
        print(f"Data: {len(y)} rows of {args.csv}; target {y.name}, features {', '.join(X.columns)}")
    import numpy as np
    import sympy

    from .estimator import NeSymReSRegressor
    from .inputs import r2_score_scaled
    from .writing.display import top_rows

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            regressor = NeSymReSRegressor(
                model=args.model,
                beam_size=args.beam_size,
                decoding=args.decoding,
                max_time=args.max_time,
                refine=None if args.refine == "none" else args.refine,
                random_state=args.random_state,
                verbose=int(args.verbose),
            ).fit(X, y, X_units=args.x_units, y_units=args.y_units)
    except (ValueError, OSError, ImportError) as error:
        print(f"{PROG}: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    for warning in caught:  # one line each, without Python's source path
        print(f"{PROG}: note: {' '.join(str(warning.message).split())}", file=sys.stderr)
    print(f"Equation: {sympy.sstr(regressor.equation(), min=-4, max=6)}")
    print(f"Full precision: {sympy.sstr(regressor.expression_, min=-4, max=6)}")
    if regressor.pi_groups_ is not None:
        print(f"Dimensionless groups: {', '.join(regressor.pi_groups_) or 'none'}")
    print(f"R^2 on the data: {r2_score_scaled(np.asarray(y), regressor.predict(X)):.6f}")
    loading = regressor.timings_["loading"]
    fitting = sum(seconds for stage, seconds in regressor.timings_.items() if stage != "loading")
    print(f"Fit time: {fitting:.2f} s (and {loading:.2f} s loading the model, once per process)")
    if args.top:
        table = top_rows(regressor.equations_[np.isfinite(regressor.equations_["loss"])], rows=args.top)
        print(f"Top {len(table)} candidate{'s' * (len(table) != 1)}:")
        print(table.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
