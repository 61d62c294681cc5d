"""What a decoding method returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hypothesis:
    """A decoded skeleton: prefix tokens (without start/end) and its score (summed
    log-probability, unless the decoding method says otherwise)."""

    tokens: tuple[str, ...]
    log_prob: float
