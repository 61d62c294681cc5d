"""The adapter interface every benchmarked method implements.

An adapter wraps one method at one value of its swept hyper-parameter (the knob that
buys accuracy with compute: NeSymReS's beam size, gplearn's population size, ...).
The runner builds it inside a fresh process, so constructors may import heavy
packages; :meth:`Adapter.check_installed` only looks the packages up, without importing
them.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import sympy

_FEATURE = re.compile(r"^(?:x_?|X)(\d+)$")


def missing_packages_reason(modules, hint: str = "") -> str | None:
    """``None`` when every module can be found, else a one-line reason."""
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    if not missing:
        return None
    reason = f"package {', '.join(repr(m) for m in missing)} cannot be imported"
    return f"{reason} ({hint})" if hint else reason


def rename_features(expr: sympy.Expr, offset: int) -> sympy.Expr:
    """Rename feature symbols ``x0``/``X0``/``x_0`` (``offset=0``) or ``x1`` (``offset=1``)
    to the dataset variables ``x_1, x_2, ...``."""
    mapping = {}
    for symbol in expr.free_symbols:
        match = _FEATURE.match(symbol.name)
        if match:
            mapping[symbol] = sympy.Symbol(f"x_{int(match.group(1)) + 1 - offset}", real=True)
    return expr.xreplace(mapping)


class Adapter:
    """One method at one setting.

    Subclasses set the class attributes and implement :meth:`_fit`, :meth:`predict`
    and, for symbolic methods, :meth:`expression`.

    Parameters
    ----------
    value : int or float
        Value of the swept hyper-parameter :attr:`parameter`.
    time_budget : float or None
        Seconds the method should aim to stay within (soft; the runner's time limit
        is the hard stop). Methods with a time option honour it.
    random_state : int
    options : dict
        Method-specific keyword arguments (see each adapter).
    """

    #: Name in the registry and in result files.
    name = ""
    #: The hyper-parameter swept to trade compute for accuracy.
    parameter = ""
    #: Modules that must be importable.
    requires: tuple[str, ...] = ()
    #: Why the modules may be missing (shown with "not installed").
    install_hint = ""
    #: Whether the method returns a symbolic expression.
    symbolic = True
    #: Modules worth importing once per worker before fits are forked from it.
    preload_modules: tuple[str, ...] = ()

    def __init__(self, value, time_budget: float | None = None, random_state: int = 0, **options):
        self.value = value
        self.time_budget = time_budget
        self.random_state = random_state
        self.options = options

    @classmethod
    def check_installed(cls) -> str | None:
        """``None`` if the method can run here, else the reason it cannot."""
        return missing_packages_reason(cls.requires, cls.install_hint)

    @classmethod
    def preload(cls) -> None:
        """Import :attr:`preload_modules`, so that forked fits start without importing them."""
        for module in cls.preload_modules:
            importlib.import_module(module)

    @classmethod
    def expected_cost(cls, value, n_points: int) -> float:
        """Relative cost of one fit at ``value`` on ``n_points`` points; the runner starts
        the most expensive fits first so that every worker stays busy to the end."""
        return float(value) * n_points

    def fit(self, X: np.ndarray, y: np.ndarray, units: tuple[list[str], str] | None = None) -> Adapter:
        """Fit on ``X``, ``y``; ``units`` (the equation's ``X_units`` and ``y_units``,
        :attr:`benchmarks.datasets.Equation.units`) are there for the methods that read them."""
        self.units = units
        self._fit(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))
        return self

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        """Fit the method on float64 arrays; every adapter implements it."""
        raise NotImplementedError(f"{type(self).__name__} must implement _fit")

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predictions of the fitted method; every adapter implements it."""
        raise NotImplementedError(f"{type(self).__name__} must implement predict")

    def expression(self) -> str | None:
        """The fitted expression over ``x_1, x_2, ...`` (``None`` for non-symbolic methods)."""
        return None
