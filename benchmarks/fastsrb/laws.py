"""The 120 laws of ``benchmarks/datasets/fastsrb.yaml``: variables, ranges, units, accepted forms.

Each YAML entry gives the law over ``v1 .. vn`` (``prepared``, with ``^`` for powers and
``neg(x)`` for ``-x``), each input variable's ``sample_range`` and ``sample_type``
(``[log|uni|int, pos|neg|pos_neg]``), the SI units of every variable as exponents of
``[m, s, kg, K, V]``, the target ``v0`` (units only, no range), a list of ``accept``-ed
equivalent forms and ``constraints``. Some bounds are strings in the YAML (``'1.0e1'``,
read by YAML 1.1 as text) and two carry a third item (``uses_positive=False``): bounds
are read as floats, extra items ignored. Physical constants appear as numbers inside
``prepared`` (``6.626e-34``, ``2.99792458e8``, ...): :attr:`Law.physical_constants` names
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import numpy as np
import sympy
import yaml

#: The law file, copied unchanged from FastSRB (see :mod:`benchmarks.fastsrb`).
LAWS_PATH = Path(__file__).resolve().parent.parent / "datasets" / "fastsrb.yaml"
#: pint's names of the YAML's base units, in the order of its exponents ``[m, s, kg, K, V]``.
UNIT_NAMES = ("meter", "second", "kilogram", "kelvin", "volt")
DISTRIBUTIONS = ("log", "uni", "int")
SIGNS = ("pos", "neg", "pos_neg")
#: Numbers of physical constants as they are written in the laws -> pint's names.
PHYSICAL_CONSTANTS = {
    "2.99792458e8": "speed_of_light",
    "6.626e-34": "planck_constant",
    "1.054571817e-34": "reduced_planck_constant",
    "1.380649e-23": "boltzmann_constant",
    "8.854e-12": "vacuum_permittivity",
    "6.67430e-11": "gravitational_constant",
    "6.6743e-11": "gravitational_constant",
    "9.80665": "standard_gravity",
    "9.2740100783e-24": "bohr_magneton",
    "9.10938356e-31": "electron_mass",
    "7.2973525693e-3": "fine_structure_constant",
}
_NUMBER = re.compile(r"(?<![\w.])\d+\.?\d*(?:e[-+]?\d+)?", re.IGNORECASE)


def unit_string(exponents) -> str:
    """pint's text of units given as exponents of ``[m, s, kg, K, V]``: ``[1, -2, 1, 0, 0]``
    -> ``"meter*second**-2*kilogram"``; all zero -> ``""`` (dimensionless)."""
    parts = []
    for name, exponent in zip(UNIT_NAMES, exponents):
        exponent = int(exponent) if float(exponent).is_integer() else float(exponent)
        if exponent == 1:
            parts.append(name)
        elif exponent != 0:
            parts.append(f"{name}**{exponent}")
    return "*".join(parts)


@dataclass(frozen=True)
class Variable:
    """One input variable ``v<k>`` of a law and how it is drawn."""

    name: str
    physical_name: str
    low: float
    high: float
    distribution: str
    sign: str
    units: tuple[int, ...]

    @property
    def unit_string(self) -> str:
        """The units as pint reads them (see :func:`unit_string`)."""
        return unit_string(self.units)

    @property
    def symbol(self) -> sympy.Symbol:
        """The variable's symbol, positive or negative where all its draws are."""
        if self.sign == "pos":
            return sympy.Symbol(self.name, positive=True)
        if self.sign == "neg":
            return sympy.Symbol(self.name, negative=True)
        return sympy.Symbol(self.name, real=True)


@dataclass(frozen=True)
class Law:
    """One FastSRB law: its expression over ``v1 .. vn``, variables, target and accepted forms."""

    name: str
    prepared: str
    variables: tuple[Variable, ...]
    target_units: tuple[int, ...]
    accept: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    raw: str = ""
    difficulty: str = ""
    constants: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def n_variables(self) -> int:
        return len(self.variables)

    @property
    def X_units(self) -> list[str]:
        """The variables' units for ``NeSymReSRegressor.fit(X_units=...)``."""
        return [variable.unit_string for variable in self.variables]

    @property
    def y_units(self) -> str:
        """The target's units for ``NeSymReSRegressor.fit(y_units=...)``."""
        return unit_string(self.target_units)

    @cached_property
    def symbols(self) -> dict[str, sympy.Symbol]:
        return {variable.name: variable.symbol for variable in self.variables}

    def parse(self, text: str) -> sympy.Expr:
        """An expression over this law's variables: YAML syntax (``^``, ``neg``) or SymPy's."""
        names = {**self.symbols, "neg": lambda argument: -argument, "pi": sympy.pi, "E": sympy.E}
        return sympy.parse_expr(str(text).replace("^", "**"), local_dict=names)

    @cached_property
    def expression(self) -> sympy.Expr:
        """The law (``prepared``) as a SymPy expression."""
        return self.parse(self.prepared)

    @cached_property
    def accepted_expressions(self) -> tuple[sympy.Expr, ...]:
        """The ``accept`` forms as SymPy expressions."""
        return tuple(self.parse(text) for text in self.accept)

    @cached_property
    def _function(self):
        symbols = [variable.symbol for variable in self.variables]
        return sympy.lambdify(symbols, self.expression, modules="numpy")

    def evaluate(self, X: np.ndarray) -> np.ndarray:
        """The law's values at the rows of ``X`` (NaN or inf outside its domain)."""
        X = np.asarray(X, dtype=np.float64)
        with np.errstate(all="ignore"):
            values = self._function(*X.T)
        return np.broadcast_to(np.asarray(values, dtype=np.float64), (X.shape[0],)).copy()

    @property
    def physical_constants(self) -> tuple[str, ...]:
        """pint's names of the physical constants written as numbers in ``prepared``."""
        found = (PHYSICAL_CONSTANTS.get(number) for number in _NUMBER.findall(self.prepared))
        return tuple(dict.fromkeys(name for name in found if name is not None))


def _bound(value) -> float:
    return float(value)


def _law(name: str, entry: dict) -> Law:
    specs = entry["vars"]
    variables = []
    for index in range(1, len(specs)):
        spec = specs[f"v{index}"]
        distribution, sign = spec["sample_type"]
        if distribution not in DISTRIBUTIONS or sign not in SIGNS:
            raise ValueError(f"{name} v{index}: unknown sample_type {spec['sample_type']!r}")
        low, high = (_bound(value) for value in spec["sample_range"][:2])
        variables.append(
            Variable(
                name=f"v{index}",
                physical_name=str(spec.get("name", f"v{index}")),
                low=low,
                high=high,
                distribution=distribution,
                sign=sign,
                units=tuple(int(unit) for unit in spec["units"]),
            )
        )
    constants = {
        symbol: {"name": value.get("name"), "value": float(value["value"])}
        for symbol, value in (entry.get("constants") or {}).items()
    }
    return Law(
        name=name,
        prepared=str(entry["prepared"]),
        variables=tuple(variables),
        target_units=tuple(int(unit) for unit in specs["v0"]["units"]),
        accept=tuple(str(text) for text in entry.get("accept") or ()),
        constraints=tuple(str(text) for text in entry.get("constraints") or ()),
        raw=str(entry.get("raw", "")),
        difficulty=str(entry.get("difficulty", "")),
        constants=constants,
    )


@cache
def load_laws(path: str | Path = LAWS_PATH) -> dict[str, Law]:
    """Every law of the YAML file, by name, in the file's order."""
    with Path(path).open(encoding="utf-8") as handle:
        entries = yaml.safe_load(handle)
    return {str(name): _law(str(name), entry) for name, entry in entries.items()}


def get_law(name: str, path: str | Path = LAWS_PATH) -> Law:
    """The law called ``name`` (e.g. ``"II.38.3"``)."""
    laws = load_laws(path)
    try:
        return laws[name]
    except KeyError:
        raise ValueError(f"FastSRB has no law {name!r}.") from None
