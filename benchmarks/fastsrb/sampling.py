"""Problems drawn from a law as srbf draws them.

Each variable is drawn from its ``sample_range`` ``[lo, hi]``: ``log`` as
``10**uniform(log10(lo), log10(hi))``, ``uni`` as ``uniform(lo, hi)``, ``int`` as
``uniform(lo, hi)`` rounded to the nearest integer; then its sign: ``pos`` keeps it,
``neg`` makes it negative, ``pos_neg`` draws a sign per point. Points where the law is
not finite are drawn again (as srbf's point-by-point fallback does). The YAML's
``constraints`` are not applied, as in srbf: they restate the domain, and some cannot be
met as written (B10 asks for ``(...) >= 1`` and ``(...) <= 1``).

A problem of a law is its index ``k`` (0, 1, ...): 512 support points and 512 validation
points from two streams of their own, seeded by the law's name (its CRC-32, the same in
every process), ``k`` and the stream, so every method and noise level sees the same
points. Noise goes to the support targets only: Gaussian with standard deviation
``level * std(y_support)``, from a third stream, the same draws scaled at every level.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from .laws import Law, Variable

N_SUPPORT = 512
N_VALIDATION = 512
#: Streams of a problem's seed.
SUPPORT_STREAM, VALIDATION_STREAM, NOISE_STREAM = 0, 1, 2
#: Rounds of redrawing the points where the law is not finite before giving up.
MAX_REDRAWS = 1000


def stream(law_name: str, problem: int, purpose: int) -> np.random.Generator:
    """The random stream of one purpose (support, validation, noise) of a problem."""
    entropy = [zlib.crc32(law_name.encode("utf-8")), int(problem), int(purpose)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def draw_variable(variable: Variable, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values of one variable (see the module docstring)."""
    low, high = variable.low, variable.high
    if variable.distribution == "log":
        values = 10.0 ** rng.uniform(np.log10(low), np.log10(high), size=n)
    else:
        values = rng.uniform(low, high, size=n)
    if variable.sign == "neg":
        values = -np.abs(values)
    elif variable.sign == "pos_neg":
        values = values * rng.choice([-1.0, 1.0], size=n)
    if variable.distribution == "int":
        values = np.rint(values)
    return values


def draw_points(law: Law, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points ``(X, y)`` of the law, those where it is not finite drawn again."""
    X = np.empty((n, law.n_variables))
    y = np.empty(n)
    missing = np.arange(n)
    for _ in range(MAX_REDRAWS):
        X_new = np.column_stack([draw_variable(variable, missing.size, rng) for variable in law.variables])
        y_new = law.evaluate(X_new)
        X[missing], y[missing] = X_new, y_new
        missing = missing[~(np.isfinite(y_new) & np.isfinite(X_new).all(axis=1))]
        if missing.size == 0:
            return X, y
    raise RuntimeError(f"{law.name}: the law is not finite at {missing.size} of {n} points after {MAX_REDRAWS} draws.")


def add_noise(y: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """``y`` plus Gaussian noise of standard deviation ``level * std(y)``."""
    if level == 0:
        return y.copy()
    return y + rng.normal(0.0, level * np.std(y), size=y.shape)


@dataclass(frozen=True)
class Problem:
    """One problem of a law: noisy support points to fit, clean validation points to score."""

    law: Law
    index: int
    noise: float
    X_support: np.ndarray
    y_support: np.ndarray
    y_support_clean: np.ndarray
    X_validation: np.ndarray
    y_validation: np.ndarray


def make_problem(
    law: Law, index: int, noise: float = 0.0, n_support: int = N_SUPPORT, n_validation: int = N_VALIDATION
) -> Problem:
    """Problem ``index`` of ``law`` at a noise level (see the module docstring)."""
    X_support, y_clean = draw_points(law, n_support, stream(law.name, index, SUPPORT_STREAM))
    X_validation, y_validation = draw_points(law, n_validation, stream(law.name, index, VALIDATION_STREAM))
    y_support = add_noise(y_clean, noise, stream(law.name, index, NOISE_STREAM))
    return Problem(law, index, noise, X_support, y_support, y_clean, X_validation, y_validation)
