"""The in-situ constraints of DSR: tokens that may not come next, as a boolean mask.

The policy's logits of the masked tokens are set to minus infinity before sampling
(probability 0), so every sampled expression satisfies them by construction
(Petersen et al., 2021, section 3, "Constraining the search space"):

- length: at least ``min_length`` and at most ``max_length`` tokens (4 and 30). A
  terminal that would complete the expression too early is masked; an operator is
  masked when the slots it opens could no longer be filled within ``max_length``;
- the children of an operator are not all constants: ``const`` is masked under a
  unary operator, and as the second child of a binary operator whose first child is
  ``const``;
- the child of a unary operator is not its inverse (``log(exp(.))``, ``exp(log(.))``);
- no trigonometric operator descends from a trigonometric operator (``sin(x + cos(x))``);
- at most ``max_constants`` constants (3), the cap of the authors' released
  configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .library import Library
from .traversal import PartialTraversals


@dataclass(frozen=True)
class Constraints:
    """Which constraints apply, with the paper's bounds."""

    min_length: int = 4
    max_length: int = 30
    max_constants: int = 3

    def __post_init__(self):
        if not 1 <= self.min_length <= self.max_length:
            raise ValueError(f"Need 1 <= min_length <= max_length, got {self.min_length}, {self.max_length}.")

    def allowed(self, library: Library, state: PartialTraversals) -> np.ndarray:
        """Boolean mask, shape ``(n, n_tokens)``: the tokens each row may take next.

        Complete rows allow every token (they take no more).
        """
        n = len(state.length)
        allowed = np.ones((n, library.n_tokens), dtype=bool)
        length, dangling = state.length, state.dangling
        # Each open slot needs at least one more token: arity <= max_length - length - dangling.
        allowed &= library.arity[None, :] <= (self.max_length - length - dangling)[:, None]
        # A terminal filling the last open slot must not end the expression too early.
        too_short = (dangling == 1) & (length + 1 < self.min_length)
        allowed &= ~(too_short[:, None] & library.terminal[None, :])

        parent, sibling = state.parent, state.sibling
        has_parent = np.flatnonzero(parent >= 0)
        inverse = library.inverse[parent[has_parent]]
        allowed[has_parent[inverse >= 0], inverse[inverse >= 0]] = False
        allowed &= ~(state.trig_ancestor[:, None] & library.trig[None, :])
        if library.const_index >= 0:
            parent_arity = np.where(parent >= 0, library.arity[np.maximum(parent, 0)], 0)
            only_constants = (parent_arity == 1) | ((parent_arity == 2) & (sibling == library.const_index))
            allowed[only_constants | (state.n_constants >= self.max_constants), library.const_index] = False
        allowed[state.finished] = True
        return allowed
