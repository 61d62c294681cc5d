"""Checks of the estimator's parameters at ``fit``: an error names the parameter, what it
accepts and what it got (scikit-learn's own validation is a private module)."""

from __future__ import annotations

import os
from collections.abc import Callable
from numbers import Integral, Real

import numpy as np

from .inputs import MIN_POINTS
from .operon.settings import OperonSettings
from .search.settings import DECODINGS, SearchSettings


def _integer(value, low: int | None = None, high: int | None = None) -> bool:
    if not isinstance(value, Integral) or isinstance(value, bool):
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def _real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and bool(np.isfinite(value))


#: Each parameter's test and what it accepts, in words.
RULES: dict[str, tuple[Callable[[object], bool], str]] = {
    "model": (lambda v: isinstance(v, str | os.PathLike), "a str or a path-like"),
    "revision": (lambda v: v is None or isinstance(v, str), "a str or None"),
    "beam_size": (lambda v: _integer(v, 1), "an int in the range [1, inf)"),
    "decoding": (lambda v: v in DECODINGS, f"one of {', '.join(map(repr, DECODINGS))}"),
    "n_restarts": (lambda v: _integer(v, 1), "an int in the range [1, inf)"),
    "max_points": (lambda v: _integer(v, MIN_POINTS), f"an int in the range [{MIN_POINTS}, inf)"),
    "complexity_penalty": (lambda v: _real(v) and v >= 0, "a float in the range [0, inf)"),
    "max_time": (lambda v: v is None or (_real(v) and v > 0), "a float in the range (0, inf) or None"),
    "refine": (lambda v: v in ("auto", "operon", None), "'auto', 'operon' or None"),
    "device": (lambda v: isinstance(v, str), "a str such as 'auto', 'cpu' or 'cuda:0'"),
    "random_state": (
        lambda v: v is None or _integer(v, 0, 2**32 - 1) or isinstance(v, np.random.RandomState),
        "an int in the range [0, 2**32 - 1], a numpy.random.RandomState or None",
    ),
    "n_jobs": (
        lambda v: v is None or _integer(v, 1) or _integer(v, high=-1),
        "an int in the range [1, inf), an int in the range (-inf, -1] or None",
    ),
    "verbose": (lambda v: isinstance(v, bool | np.bool_) or _integer(v, 0), "an int in the range [0, inf) or a bool"),
    "search_settings": (lambda v: v is None or isinstance(v, SearchSettings), "a SearchSettings or None"),
    "operon_settings": (lambda v: v is None or isinstance(v, OperonSettings), "an OperonSettings or None"),
    "guesses": (lambda v: v is None or isinstance(v, list | tuple), "a list of str or sympy.Expr, or None"),
    "operators": (lambda v: v is None or isinstance(v, list | tuple), "a list of str or None"),
    "max_complexity": (lambda v: v is None or _integer(v, 1), "an int in the range [1, inf) or None"),
    "early_stop_condition": (
        lambda v: v is None or callable(v) or _real(v),
        "a float (a loss), a callable f(loss, complexity) -> bool, or None",
    ),
    "warm_start": (lambda v: isinstance(v, bool | np.bool_), "a bool"),
}


def check_parameters(estimator) -> None:
    """A ``ValueError`` naming the first parameter of ``estimator`` that :data:`RULES`
    refuses (a subclass's own parameters are its to check)."""
    for name, value in estimator.get_params(deep=False).items():
        accepts, words = RULES.get(name, (lambda _: True, ""))
        if not accepts(value):
            raise ValueError(
                f"The {name!r} parameter of {type(estimator).__name__} must be {words}. Got {value!r} instead."
            )
