"""What the search is asked to do (no torch needed: the estimator validates these
without loading the network)."""

from __future__ import annotations

from dataclasses import dataclass

#: How the first round proposes skeletons; later rounds always sample.
DECODINGS = ("beam", "sample")


@dataclass(frozen=True)
class SearchSettings:
    """``decoding``: ``"beam"`` (the model's beam search) or ``"sample"``; ``size``:
    beams, or samples of the first round; ``max_time``: seconds for the whole search,
    ``None`` for the first round only."""

    decoding: str = "beam"
    size: int = 32
    n_restarts: int = 4
    max_time: float | None = None
    n_jobs: int | None = None
