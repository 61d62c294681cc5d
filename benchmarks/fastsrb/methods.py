"""The methods run on FastSRB, each a fit at a time budget ``max_time`` with a seed.

- ``ours``: ``NeSymReSRegressor(max_time=T, random_state=problem, n_jobs=threads)`` on the
  raw data (``threads``: the runner's ``--threads-per-fit``, default 1), the package's
  defaults otherwise;
- ``ours-units``: the same, given the law's units (``X_units``, ``y_units`` from the YAML);
- ``operon``: Operon alone, ``pyoperon.sklearn.SymbolicRegressor`` through
  :class:`benchmarks.methods.operon.OperonAdapter` (one thread) with ``max_time=T``
  (Operon counts whole seconds: below 1 s it runs 1 s) and the settings of issue 52's
  first measurement: the package's operator set plus ``tanh``, ten iterations of local
  optimisation of the constants, no limit but the time;
- ``ours+irrelevant``: ``ours`` with :data:`IRRELEVANT_COLUMNS` columns that the law does
  not use appended to ``X`` (:func:`with_irrelevant_columns`): does a miss stay sane, and
  does the printed law leave them out? The report counts the fits whose expression uses
  a column beyond the law's (``v{n+1}`` ...).

Each fit returns a :class:`Fitted`: ``predict(X)`` and its expression over ``v1 .. vn``.
A method's ``preload`` imports its modules (and loads the network) once per worker, so
that the forked fits time the fit and not the imports, as
:func:`benchmarks.isolation.run_task` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy

from .laws import Law

_FEATURE = re.compile(r"\bx_?(\d+)\b")
#: Operon alone: the package's operator set plus tanh, as in issue 52's measurement.
OPERON_OPTIONS = {
    "allowed_symbols": "add,sub,mul,div,constant,variable,sin,cos,exp,log,sqrt,tanh",
    "optimizer_iterations": 10,
    "generations": 10**9,
}
#: Operon's evaluation budget: large enough that the time stops it.
OPERON_MAX_EVALUATIONS = 10**12
#: Decimals of the constants in Operon's model string.
OPERON_DECIMALS = 50
#: Columns the law does not use that ``ours+irrelevant`` appends, and their uniform range.
IRRELEVANT_COLUMNS = 2
IRRELEVANT_RANGE = (1.0, 5.0)


def with_law_variables(expression: str, offset: int) -> str:
    """Feature names ``x0``/``x_0`` (``offset=0``) or ``x_1`` (``offset=1``) renamed ``v1, v2, ...``."""
    return _FEATURE.sub(lambda match: f"v{int(match.group(1)) + 1 - offset}", expression)


@dataclass
class Fitted:
    """A fitted model: its prediction function and its expression over ``v1 .. vn``."""

    predict: Callable[[np.ndarray], np.ndarray]
    expression: str | None


@dataclass(frozen=True)
class Method:
    """A method of the FastSRB runner: ``fit(X, y, law, max_time, seed, n_jobs) -> Fitted``
    (``n_jobs``: the cores a fit may use)."""

    name: str
    fit: Callable[[np.ndarray, np.ndarray, Law, float, int, int], Fitted]
    preload: Callable[[], None] | None = None


def _preload_ours() -> None:
    import importlib

    import torch

    from benchmarks.methods.nesymres import FIT_MODULES, warm_process
    from nesymres_sklearn import neural_search
    from nesymres_sklearn.units.parsing import unit_registry

    for module in FIT_MODULES:  # what a fit imports
        importlib.import_module(module)
    torch.set_num_threads(1)  # no thread pool before the fork
    neural_search.load_network("bundled", None, "auto")
    unit_registry()
    warm_process()
    import pyoperon.sklearn  # noqa: F401  (the refinement's)


def _fitted_ours(model) -> Fitted:
    """The model's expression with its named physical constants (``c``, ``hbar``, ...,
    from ``physical_constants_`` where the estimator has it) replaced by their values."""
    expression = model.expression_
    constants = getattr(model, "physical_constants_", None) or {}
    values = {
        symbol: sympy.Float(constants[symbol.name]["value"])
        for symbol in expression.free_symbols
        if symbol.name in constants and constants[symbol.name].get("value") is not None
    }
    return Fitted(model.predict, with_law_variables(str(expression.xreplace(values)), offset=0))


def fit_ours(X, y, law: Law, max_time: float, seed: int, n_jobs: int = 1) -> Fitted:
    from nesymres_sklearn import NeSymReSRegressor

    return _fitted_ours(NeSymReSRegressor(max_time=max_time, random_state=seed, n_jobs=n_jobs).fit(X, y))


def fit_ours_units(X, y, law: Law, max_time: float, seed: int, n_jobs: int = 1) -> Fitted:
    from nesymres_sklearn import NeSymReSRegressor

    model = NeSymReSRegressor(max_time=max_time, random_state=seed, n_jobs=n_jobs)
    return _fitted_ours(model.fit(X, y, X_units=law.X_units, y_units=law.y_units))


def with_irrelevant_columns(method: Method, name: str, n_columns: int = IRRELEVANT_COLUMNS) -> Method:
    """``method`` fitted with ``n_columns`` columns drawn from U(:data:`IRRELEVANT_RANGE`)
    appended to ``X`` (seeded by the fit's seed); its predictions at new points draw new
    such columns, from a stream of their own: the law does not read them."""

    def columns(n_rows: int, seed: int, purpose: int) -> np.ndarray:
        return np.random.default_rng([seed, purpose]).uniform(*IRRELEVANT_RANGE, (n_rows, n_columns))

    def fit(X, y, law: Law, max_time: float, seed: int, n_jobs: int = 1) -> Fitted:
        fitted = method.fit(np.column_stack([X, columns(len(X), seed, 0)]), y, law, max_time, seed, n_jobs)

        def predict(X_new):
            return fitted.predict(np.column_stack([X_new, columns(len(X_new), seed, 1)]))

        return Fitted(predict, fitted.expression)

    return Method(name, fit, method.preload)


def columns_read(expression: str | None) -> set[int]:
    """The columns (1 for ``v1``, ...) that ``expression`` reads; none for a failed fit."""
    return set() if not isinstance(expression, str) else {int(i) for i in re.findall(r"\bv(\d+)\b", expression)}


def uses_columns_beyond(expression: str | None, n_variables: int) -> bool:
    """Whether ``expression`` (over ``v1 .. vn``) reads a column beyond the law's ``n_variables``."""
    return any(index > n_variables for index in columns_read(expression))


def _preload_operon() -> None:
    import pyoperon.sklearn  # noqa: F401


def fit_operon(X, y, law: Law, max_time: float, seed: int, n_jobs: int = 1) -> Fitted:
    """Operon alone, on one thread whatever ``n_jobs`` (the published protocol's)."""
    from benchmarks.methods.operon import OperonAdapter

    adapter = OperonAdapter(OPERON_MAX_EVALUATIONS, time_budget=max_time, random_state=seed, **OPERON_OPTIONS)
    adapter.fit(X, y)
    return Fitted(adapter.predict, operon_expression(adapter.model_, X.shape[1]))


def operon_expression(model, n_features: int) -> str:
    """A fitted ``pyoperon.sklearn.SymbolicRegressor``'s model over ``v1 .. vn``, its
    constants in full (Operon writes them in fixed point: to 50 decimals, then read back
    as floats, so that ``3.3e-9`` does not print as ``0.000000``)."""
    names = [f"v{index + 1}" for index in range(n_features)]
    text = model.get_model_string(model.model_, OPERON_DECIMALS, names)
    expression = sympy.sympify(text, locals={name: sympy.Symbol(name) for name in names})
    return str(expression.xreplace({number: sympy.Float(float(number)) for number in expression.atoms(sympy.Float)}))


_OURS = Method("ours", fit_ours, _preload_ours)
METHODS = {
    method.name: method
    for method in (
        _OURS,
        Method("ours-units", fit_ours_units, _preload_ours),
        Method("operon", fit_operon, _preload_operon),
        with_irrelevant_columns(_OURS, "ours+irrelevant"),
    )
}
#: The methods a run fits unless told otherwise (the peers' comparison).
DEFAULT_METHODS = ("ours", "ours-units", "operon")
