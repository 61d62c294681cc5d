"""The DSR policy: an LSTM that emits an expression's pre-order traversal token by token.

At each step the input is the one-hot parent and sibling of the token to be sampled
(an "empty" entry where there is none); the LSTM's output goes through a linear layer
to one logit per token of the library, and the in-situ constraints set the logits of
forbidden tokens to minus infinity. Initialisation follows the authors' release: the
LSTM's weights start at zero (the first distribution is uniform over the allowed
tokens) with TensorFlow's forget-gate bias of 1 (and, as there, one trainable bias
vector), the output layer Glorot-uniform.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .constraints import Constraints
from .library import Library
from .traversal import EMPTY, PartialTraversals

#: Logit of a forbidden token: exp() of it is exactly 0, and unlike -inf it keeps
#: the entropy's and log-probability's gradients finite.
MASKED = -1e30


@dataclass(frozen=True)
class PolicyConfig:
    """Sizes of the policy (the paper: one LSTM layer of 32 units)."""

    n_tokens: int
    n_parents: int
    hidden_size: int = 32

    @classmethod
    def for_library(cls, library: Library, hidden_size: int = 32) -> PolicyConfig:
        return cls(n_tokens=library.n_tokens, n_parents=library.n_parents, hidden_size=hidden_size)


@dataclass
class SampledBatch:
    """Expressions sampled by :meth:`Policy.sample`, with what the policy saw at each step.

    ``parents``/``siblings`` hold parent-vocabulary and token indices with the "empty"
    index where there is none; ``allowed`` is the constraint mask. Steps at and after a
    row's ``length`` are padding.
    """

    tokens: np.ndarray  # (n, max_length), -1 after the end
    lengths: np.ndarray  # (n,)
    parents: torch.Tensor  # (n, max_length) long
    siblings: torch.Tensor  # (n, max_length) long
    allowed: torch.Tensor  # (n, max_length, n_tokens) bool

    def __len__(self) -> int:
        return len(self.lengths)

    def traversal(self, row: int) -> tuple[int, ...]:
        return tuple(int(t) for t in self.tokens[row, : self.lengths[row]])

    def subset(self, rows) -> SampledBatch:
        rows = np.asarray(rows)
        index = torch.as_tensor(rows)
        return SampledBatch(
            self.tokens[rows], self.lengths[rows], self.parents[index], self.siblings[index], self.allowed[index]
        )


class Policy(nn.Module):
    """LSTM policy over pre-order traversals (see the module docstring)."""

    def __init__(self, config: PolicyConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        n_inputs = (config.n_parents + 1) + (config.n_tokens + 1)
        self.cell = nn.LSTMCell(n_inputs, config.hidden_size)
        self.head = nn.Linear(config.hidden_size, config.n_tokens)
        with torch.no_grad():
            for parameter in self.cell.parameters():
                parameter.zero_()
            # Gate order of LSTMCell: input, forget, cell, output.
            self.cell.bias_ih[config.hidden_size : 2 * config.hidden_size] = 1.0
            nn.init.xavier_uniform_(self.head.weight, generator=generator)
            self.head.bias.zero_()
        # TensorFlow's cell has one bias vector; torch's second one stays at zero.
        self.cell.bias_hh.requires_grad_(False)

    def _inputs(self, parent: torch.Tensor, sibling: torch.Tensor) -> torch.Tensor:
        parent_one_hot = nn.functional.one_hot(parent, self.config.n_parents + 1)
        sibling_one_hot = nn.functional.one_hot(sibling, self.config.n_tokens + 1)
        return torch.cat([parent_one_hot, sibling_one_hot], dim=-1).float()

    def forward(self, parents: torch.Tensor, siblings: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """Masked logits of every step, shape ``(n, steps, n_tokens)``, for recorded inputs."""
        n, steps = parents.shape
        inputs = self._inputs(parents, siblings)
        h = inputs.new_zeros(n, self.config.hidden_size)
        c = inputs.new_zeros(n, self.config.hidden_size)
        logits = []
        for step in range(steps):
            h, c = self.cell(inputs[:, step], (h, c))
            logits.append(self.head(h))
        return torch.stack(logits, dim=1).masked_fill(~allowed, MASKED)

    @torch.no_grad()
    def sample(
        self, library: Library, constraints: Constraints, n: int, generator: torch.Generator | None = None
    ) -> SampledBatch:
        """Sample ``n`` complete traversals that satisfy ``constraints``."""
        max_length = constraints.max_length
        state = PartialTraversals(library, n, max_length)
        parents = torch.full((n, max_length), self.config.n_parents, dtype=torch.long)
        siblings = torch.full((n, max_length), self.config.n_tokens, dtype=torch.long)
        allowed = torch.ones((n, max_length, library.n_tokens), dtype=torch.bool)
        h = torch.zeros(n, self.config.hidden_size)
        c = torch.zeros(n, self.config.hidden_size)
        for step in range(max_length):
            if state.finished.all():
                break
            parent, sibling = state.parent, state.sibling
            parent_index = np.where(parent == EMPTY, self.config.n_parents, library.parent_index[parent])
            parents[:, step] = torch.from_numpy(parent_index)
            siblings[:, step] = torch.from_numpy(np.where(sibling == EMPTY, self.config.n_tokens, sibling))
            allowed[:, step] = torch.from_numpy(constraints.allowed(library, state))
            h, c = self.cell(self._inputs(parents[:, step], siblings[:, step]), (h, c))
            logits = self.head(h).masked_fill(~allowed[:, step], MASKED)
            token = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)[:, 0]
            state.append(token.numpy())
        if not state.finished.all():  # the length constraint makes this impossible
            raise RuntimeError("A sampled traversal did not complete within max_length.")
        return SampledBatch(state.tokens, state.length, parents, siblings, allowed)
