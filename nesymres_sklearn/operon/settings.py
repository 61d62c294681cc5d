"""Operon's settings for the refinement and its function set (no pyoperon needed: the
estimator validates them without it)."""

from __future__ import annotations

from dataclasses import dataclass

from ..search.budget import Calibration

#: Our tokens that Operon's search has, by Operon's name (its ``allowed_symbols``): the
#: functions of :data:`.trees.OPERON_SYMBOLS`, whose ``sub`` is written back with ``add``
#: and ``mul``. Operon has no counterpart for the others (``pow``, ``tan``, ``abs``, the
#: hyperbolic and inverse trigonometric functions): they are written for it in these.
OPERON_FUNCTIONS = {
    "add": "add",
    "mul": "mul",
    "div": "div",
    "sin": "sin",
    "cos": "cos",
    "exp": "exp",
    "ln": "log",
    "sqrt": "sqrt",
}


def operon_functions(operators: frozenset[str] | None) -> list[str]:
    """Operon's names of the functions its search may use under the allowed
    ``operators`` (our tokens; ``None``: all of them), ``sub`` last when ``add`` and
    ``mul`` are allowed."""
    if operators is None:
        return [*OPERON_FUNCTIONS.values(), "sub"]
    names = [name for token, name in OPERON_FUNCTIONS.items() if token in operators]
    return names + ["sub"] if {"add", "mul"} <= operators else names


@dataclass(frozen=True)
class OperonSettings:
    """Operon's settings for the refinement, the same for a run without seeds (the
    estimator's ``operon_settings``).

    Attributes
    ----------
    population_size : int, default=1000
        Individuals of Operon's population (and of its offspring pool).
    generations : int, default=20
        Generations of Operon's run, in chunks of 1, 2, 3, ... up to
        ``max_chunk_generations``; a ``max_time`` only stops them early (one plan). For
        a longer search under a budget, raise it: the budget cuts it.
    optimizer_iterations : int, default=1
        Operon's local optimisation of each model's constants (iterations).
    max_length : int, default=50
        Largest model, in nodes.
    max_chunk_generations : int, default=10
        The largest chunk; with ``max_time`` a chunk runs only while the time left
        holds it at the rate measured so far.
    max_seed_share : float, default=0.1
        At most this share of the population is seeded with the network's candidates:
        more seeds crowd out the diversity that the search needs (measured on the
        prototype: equations Operon alone solved were lost when seeds took over).
    max_growth : int, default=8
        In the continuation after the plan (``max_time``), turn ``t``'s islands run
        ``generations`` times ``2**t``, up to this factor: later turns search longer,
        and one turn's work stays bounded. Not tuned; it was set with the continuation
        (commit b0becb8) and bounds work that only ``max_time`` allows.
    """

    population_size: int = 1000
    generations: int = 20
    optimizer_iterations: int = 1
    max_length: int = 50
    max_chunk_generations: int = 10
    max_seed_share: float = 0.1
    max_growth: int = 8

    def __post_init__(self):
        for name in (
            "population_size",
            "generations",
            "optimizer_iterations",
            "max_length",
            "max_chunk_generations",
            "max_growth",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"OperonSettings.{name} must be a positive integer, got {value!r}.")
        if not 0 <= self.max_seed_share <= 1:
            raise ValueError(f"OperonSettings.max_seed_share must lie in [0, 1], got {self.max_seed_share!r}.")


def minimum_seconds(settings: OperonSettings, n_points: int, calibration: Calibration) -> float:
    """The time a timed run needs for its first generation (the initial population and
    one generation's offspring) at the ``calibration``'s pace."""
    return calibration.operon_seconds(2 * settings.population_size, n_points)


def whole_seconds(settings: OperonSettings, n_points: int, calibration: Calibration) -> float:
    """The time a run needs for all its ``generations`` (and the initial population) at
    the ``calibration``'s pace."""
    return calibration.operon_seconds((settings.generations + 1) * settings.population_size, n_points)
