"""The names a fit writes, in one place: its fitted attributes (:class:`FittedAttributes`,
set by ``NeSymReSRegressor._set_fitted``, shown per target by :mod:`.multioutput`) and
the stages timed in ``timings_`` (:func:`timed_stages`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import sympy


@dataclass(frozen=True)
class FittedAttributes:
    """One fit's public state: a field per fitted attribute (the estimator's
    *Attributes*, besides scikit-learn's ``n_features_in_`` and ``feature_names_in_``)."""

    expression_: sympy.Expr
    equations_: pd.DataFrame
    best_index_: int
    constants_std_: np.ndarray
    noise_std_: float
    timings_: dict[str, float]
    plan_: pd.DataFrame
    features_seen_by_network_: np.ndarray
    network_inputs_: list[str]
    refinement_: dict | None
    X_units_: list[str] | None
    y_units_: str | None
    pi_groups_: list[str] | None
    physical_constants_: dict

    def set_on(self, estimator) -> None:
        """Every attribute on ``estimator``."""
        for name in PER_TARGET:
            setattr(estimator, name, getattr(self, name))


#: The fitted attributes, which several targets show as one list over the targets.
PER_TARGET = tuple(field.name for field in fields(FittedAttributes))


def timed_stages(looks: Iterable[str]) -> tuple[str, ...]:
    """The keys of ``timings_``: the stages of ``fit``, with the network's second
    ``looks`` (:data:`.search.looks.LOOK_NAMES`) each under its name."""
    return (
        "loading",
        "identities",
        "encoding",
        "decoding",
        "constant_fitting",
        *looks,
        "decomposition",
        "reduction",
        "refinement",
        "continuation",
        "selection",
    )
