"""Benchmark datasets of the paper: AI-Feynman, Nguyen and SOOSE-WC / -NC / -FC.

Each dataset is a CSV file in this package's folder, ``benchmarks/datasets/`` (comment
lines start with ``#``), with one equation per row: ``name``, ``expression`` (SymPy
syntax over the variables ``x_1, x_2, ...``) and the support ``x_k_lo, x_k_hi`` of every
variable the equation uses (empty otherwise); any other column is kept as the
equation's ``metadata``. The paper's datasets use at most ``x_1 .. x_3``;
``aifeynman-many`` (AI-Feynman equations with 4 to 9 variables, not in the paper) uses up
to ``x_9``, so only methods that accept that many inputs can run it. The loader only
reads these files; nothing is generated at run time. The SOOSE files are written by
:mod:`benchmarks.datasets.build_soose`, which lives here, next to the files it builds
and the loader that reads them.

Points are drawn uniformly in the support, one column per variable the equation uses
(``x_1`` is column 0, ...):

- training points (128 by default, as in the paper): rows whose true value is not
  finite are redrawn, so a method always sees ``n`` valid points;
- iid test points: 10,000 points in the support, kept as drawn (NaNs included);
- ood test points: 10,000 points in the support extended by ``hi - lo`` on both sides
  for every variable (appendix "Evaluation details"), kept as drawn.

Target noise, as in SRBench's ground-truth track, goes to the training targets only:
Gaussian with standard deviation ``level * RMS(y)``, the RMS of the noise-free training
targets, drawn from a stream of its own (equation, seed and level), so every method
sees the same noisy targets and the test points stay noise-free.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import sympy

from nesymres_sklearn.expression.prefix import variable_symbols

DATA_DIR = Path(__file__).resolve().parent
#: Dataset name -> data file (relative to ``DATA_DIR``).
DATASETS = {
    "aifeynman": "aifeynman.csv",
    "nguyen": "nguyen.csv",
    "soose-wc": "soose_wc.csv",
    "soose-nc": "soose_nc.csv",
    "soose-fc": "soose_fc.csv",
    # Built like SOOSE from the pretraining bank's held-out split; for choosing settings only.
    "validation-wc": "validation_wc.csv",
    "validation-nc": "validation_nc.csv",
    "validation-fc": "validation_fc.csv",
    # Built the same way from the held-out split of a 6-variable bank: 4 to 5 input columns.
    "validation-many": "validation_many.csv",
    # From the held-out split of an 8-variable bank: 4 to 7 input columns, balanced (issue 67).
    "validation-wide": "validation_wide.csv",
    # Not in the paper: the AI-Feynman database's equations with 4 to 9 variables.
    "aifeynman-many": "aifeynman_many.csv",
}
#: Variables of the paper's datasets and of the model; data files may use more.
MAX_VARIABLES = 3
N_TRAIN_POINTS = 128
N_TEST_POINTS = 10_000
_VARIABLE = re.compile(r"^x_(\d+)$")
_VARIABLE_IN_TEXT = re.compile(r"\bx_(\d+)\b")
# Streams of the point generator: one per kind of sample, so that changing the number
# of training points leaves the test points unchanged.
_STREAMS = {"train": 0, "iid": 1, "ood": 2, "noise": 3}


def parse_expression(text: str) -> sympy.Expr:
    """Parse a dataset expression over ``x_1, x_2, ...`` (the core's real variable symbols)."""
    n_variables = max([MAX_VARIABLES, *(int(i) for i in _VARIABLE_IN_TEXT.findall(text))])
    names = {symbol.name: symbol for symbol in variable_symbols(n_variables)}
    return sympy.sympify(text, locals=names)


def extend_support(low: float, high: float) -> tuple[float, float]:
    """The ood support of a variable: ``(lo, hi)`` extended by ``hi - lo`` on both sides."""
    width = high - low
    return low - width, high + width


@dataclass(frozen=True)
class Equation:
    """One benchmark equation.

    Parameters
    ----------
    dataset : str
        Name of the dataset the equation belongs to.
    name : str
        Identifier inside the dataset, e.g. ``"AIF-01"`` or ``"Nguyen-7"``.
    expression : str
        SymPy syntax over ``x_1 .. x_n``.
    supports : tuple of (float, float)
        ``(lo, hi)`` of ``x_1 .. x_n``; ``n`` is the number of input columns.
    """

    dataset: str
    name: str
    expression: str
    supports: tuple[tuple[float, float], ...]
    metadata: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def n_variables(self) -> int:
        return len(self.supports)

    @property
    def units(self) -> tuple[list[str], str] | None:
        """The units of ``x_1 .. x_n`` and of the target (``X_units``, ``y_units`` of
        ``NeSymReSRegressor.fit``), from the columns ``X_units`` (separated by ``;``) and
        ``y_units``; ``None`` for datasets without units."""
        if "X_units" not in self.metadata:
            return None
        return self.metadata["X_units"].split(";"), self.metadata["y_units"]

    @property
    def ood_supports(self) -> tuple[tuple[float, float], ...]:
        return tuple(extend_support(low, high) for low, high in self.supports)

    @cached_property
    def sympy_expr(self) -> sympy.Expr:
        return parse_expression(self.expression)

    @cached_property
    def _function(self):
        return sympy.lambdify(variable_symbols(self.n_variables), self.sympy_expr, modules="numpy")

    def __getstate__(self):
        # The cached sympy objects and the lambdified function are rebuilt on demand.
        state = dict(self.__dict__)
        state.pop("sympy_expr", None)
        state.pop("_function", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def evaluate(self, X: np.ndarray) -> np.ndarray:
        """True values at the rows of ``X`` (shape ``(n, n_variables)``); NaN where undefined."""
        X = np.asarray(X, dtype=np.float64)
        with np.errstate(all="ignore"):
            values = self._function(*X.T)
        values = np.asarray(values, dtype=np.complex128 if np.iscomplexobj(values) else np.float64)
        if np.iscomplexobj(values):
            values = np.where(np.abs(values.imag) > 0, np.nan, values.real)
        return np.broadcast_to(values, (X.shape[0],)).astype(np.float64)

    def _rng(self, seed: int, stream: str, tag: str = "") -> np.random.Generator:
        # A stable per-equation stream: the name's bytes, not Python's salted hash.
        key = [int(b) for b in f"{self.dataset}/{self.name}{tag}".encode()]
        return np.random.default_rng([seed, _STREAMS[stream], *key])

    def _uniform(self, rng, supports, n: int) -> np.ndarray:
        low = np.array([s[0] for s in supports], dtype=np.float64)
        high = np.array([s[1] for s in supports], dtype=np.float64)
        return rng.uniform(low, high, size=(n, len(supports)))

    def sample_train(self, n_points: int = N_TRAIN_POINTS, seed: int = 0, noise: float = 0.0, max_rounds: int = 100):
        """``(X, y)``: ``n_points`` uniform points in the support with finite ``y``, plus
        :meth:`target_noise` at level ``noise`` (the points do not depend on it).

        Raises ``ValueError`` if too few valid points are found.
        """
        rng = self._rng(seed, "train")
        kept_X, kept_y, total = [], [], 0
        for _ in range(max_rounds):
            X = self._uniform(rng, self.supports, max(n_points, 16))
            y = self.evaluate(X)
            valid = np.isfinite(y)
            kept_X.append(X[valid])
            kept_y.append(y[valid])
            total += int(valid.sum())
            if total >= n_points:
                y = np.concatenate(kept_y)[:n_points]
                return np.concatenate(kept_X)[:n_points], y + self.target_noise(y, seed, noise)
        raise ValueError(f"{self.name}: fewer than {n_points} points with a finite value.")

    def target_noise(self, y: np.ndarray, seed: int = 0, level: float = 0.0) -> np.ndarray:
        """Gaussian noise for the noise-free targets ``y``, standard deviation
        ``level * RMS(y)`` (SRBench), seeded by the equation, ``seed`` and ``level``."""
        if level == 0:
            return np.zeros_like(y)
        scale = level * root_mean_square(y)
        return self._rng(seed, "noise", f"@{float(level)!r}").normal(0.0, scale, size=y.shape)

    def sample_test(self, kind: str = "iid", n_points: int = N_TEST_POINTS, seed: int = 0):
        """``(X, y)`` for the ``"iid"`` or ``"ood"`` metric; non-finite ``y`` are kept."""
        if kind not in ("iid", "ood"):
            raise ValueError(f"kind must be 'iid' or 'ood', got {kind!r}.")
        supports = self.supports if kind == "iid" else self.ood_supports
        X = self._uniform(self._rng(seed, kind), supports, n_points)
        return X, self.evaluate(X)


class NoisyDraw(NamedTuple):
    """One law of a set at one noise level (:func:`noisy_draws`): the training points
    ``X``, their noisy targets ``y`` and noise-free ``clean`` ones, and the iid test
    points whose targets are finite."""

    set: str
    equation: Equation
    level: float
    X: np.ndarray
    y: np.ndarray
    clean: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def noisy_draws(sets, levels, n_train: int, n_test: int, max_equations: int | None = None):
    """For each of the first ``max_equations`` laws of each of ``sets`` and each noise
    level: ``n_train`` training points of seed 0 with noise ``level x RMS(y)``
    (:meth:`Equation.target_noise`) and ``n_test`` iid test points (:class:`NoisyDraw`)."""
    for name in sets:
        for equation in load_dataset(name)[:max_equations]:
            X_test, y_test = equation.sample_test("iid", n_test)
            finite = np.isfinite(y_test)
            for level in levels:
                X, clean = equation.sample_train(n_train, 0)
                y = clean + equation.target_noise(clean, 0, level)
                yield NoisyDraw(name, equation, level, X, y, clean, X_test[finite], y_test[finite])


def root_mean_square(y: np.ndarray) -> float:
    """``sqrt(mean(y**2))``, without overflow for values near the largest floats."""
    largest = float(np.max(np.abs(y))) if len(y) else 0.0
    return largest * float(np.sqrt(np.mean(np.square(y / largest)))) if largest > 0 else 0.0


def _read_csv(path: Path) -> pd.DataFrame:
    text = {"name": str, "expression": str, "X_units": str, "y_units": str}
    return pd.read_csv(path, comment="#", dtype=text, skipinitialspace=True)


def _row_supports(row: pd.Series, name: str) -> tuple[tuple[float, float], ...]:
    supports = []
    for k in itertools.count(1):
        low, high = row.get(f"x_{k}_lo"), row.get(f"x_{k}_hi")
        if low is None or high is None or pd.isna(low) or pd.isna(high):
            break
        if not float(low) < float(high):
            raise ValueError(f"{name}: support of x_{k} is not an interval: ({low}, {high}).")
        supports.append((float(low), float(high)))
    return tuple(supports)


def load_dataset(name: str, path: str | Path | None = None) -> list[Equation]:
    """The equations of a dataset.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS` (``"aifeynman"``, ``"nguyen"``, ``"soose-wc"``,
        ``"soose-nc"``, ``"soose-fc"``, ``"aifeynman-many"``, ...), or any name when
        ``path`` is given.
    path : str or Path, optional
        A CSV file in the same format, instead of the bundled one.

    Returns
    -------
    list of Equation
    """
    if path is None:
        if name not in DATASETS:
            raise ValueError(f"Unknown dataset {name!r}; expected one of {sorted(DATASETS)}.")
        path = DATA_DIR / DATASETS[name]
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Dataset file {path} does not exist.")
    frame = _read_csv(path)
    equations = []
    extra = [c for c in frame.columns if c not in ("name", "expression") and not c.startswith("x_")]
    for _, row in frame.iterrows():
        supports = _row_supports(row, row["name"])
        equation = Equation(
            dataset=name,
            name=str(row["name"]),
            expression=str(row["expression"]),
            supports=supports,
            metadata={c: row[c] for c in extra if not pd.isna(row[c])},
        )
        used = {int(m.group(1)) for s in equation.sympy_expr.free_symbols if (m := _VARIABLE.match(s.name))}
        unknown = {s.name for s in equation.sympy_expr.free_symbols if not _VARIABLE.match(s.name)}
        if unknown or (used and max(used) > len(supports)):
            raise ValueError(f"{equation.name}: variables {sorted(unknown) or sorted(used)} without a support.")
        equations.append(equation)
    return equations
