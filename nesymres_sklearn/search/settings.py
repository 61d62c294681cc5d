"""What the search is asked to do (no torch needed: the estimator validates these
without loading the network)."""

from __future__ import annotations

from dataclasses import dataclass

#: How the first round proposes skeletons; later rounds always sample.
DECODINGS = ("beam", "sample")
# Kept from the budget for building the table and re-spelling the selected constants:
# this share of it, at most RESERVE_SECONDS.
RESERVE_SHARE, RESERVE_SECONDS = 0.2, 0.3


@dataclass(frozen=True)
class SearchSettings:
    """``decoding``: ``"beam"`` (the model's beam search) or ``"sample"``; ``size``:
    beams, or samples of the first round; ``max_time``: seconds for the whole search,
    ``None`` for the first round only; ``network_share``: the share of the search's
    budget for the network's rounds, their constant fitting included (the rest goes to
    a refinement, when there is one)."""

    decoding: str = "beam"
    size: int = 32
    n_restarts: int = 4
    max_time: float | None = None
    n_jobs: int | None = None
    network_share: float = 1.0


def network_deadline(started: float, deadline: float | None, share: float) -> float | None:
    """The :func:`time.time` by which the network's rounds and their fits stop:
    ``share`` of the time from ``started`` to the search's ``deadline``."""
    if deadline is None:
        return None
    return started + share * (deadline - started)


def search_deadline(started: float, max_time: float | None) -> float | None:
    """The :func:`time.time` by which the search stops, leaving the reserve for the
    selection; ``None`` without a budget."""
    if max_time is None:
        return None
    return started + max_time - min(RESERVE_SHARE * max_time, RESERVE_SECONDS)
