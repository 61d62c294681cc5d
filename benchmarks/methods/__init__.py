"""Registry of the benchmarked methods (one adapter module each)."""

from __future__ import annotations

from .base import Adapter
from .dsr import DSRAdapter
from .gaussian_process import GaussianProcessAdapter
from .gplearn import GplearnAdapter
from .nesymres import (
    NeSymReSAdapter,
    NeSymReSAnytimeAdapter,
    NeSymReSAutoAdapter,
    NeSymReSDecomposedAdapter,
    NeSymReSOperonAdapter,
    NeSymReSUnitsAdapter,
)
from .operon import OperonAdapter, OperonTimedAdapter
from .pysr import PySRAdapter

#: Method name -> adapter class.
METHODS: dict[str, type[Adapter]] = {
    cls.name: cls
    for cls in (
        NeSymReSAdapter,
        NeSymReSAnytimeAdapter,
        NeSymReSOperonAdapter,
        NeSymReSUnitsAdapter,
        NeSymReSDecomposedAdapter,
        NeSymReSAutoAdapter,
        GplearnAdapter,
        GaussianProcessAdapter,
        OperonAdapter,
        OperonTimedAdapter,
        DSRAdapter,
        PySRAdapter,
    )
}


def get_method(name: str) -> type[Adapter]:
    """The adapter class registered under ``name``."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"Unknown method {name!r}; expected one of {sorted(METHODS)}.") from None


__all__ = ["METHODS", "Adapter", "get_method"]
