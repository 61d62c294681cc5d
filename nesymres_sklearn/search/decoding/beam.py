"""Constrained beam search over skeletons, registered as ``"constrained"``.

All beams are decoded as one batch through the model's incremental decoding
(:meth:`~nesymres_sklearn.network.model.NeSymReSModel.decode_step`), so each step
costs one decoder pass over a single new token. Log-probabilities are normalised over
every output slot of the model.

A running count of open argument slots masks the vocabulary: the end token is allowed
exactly when the expression is complete, no token may open more slots than the
remaining length can close, and variables the data does not have are never proposed.
Every returned hypothesis is therefore a valid skeleton. The search stops as soon as
every beam has ended, or when no live beam can still beat the ``beam_size``-th
finished one. Scores are summed log-probabilities.
"""

from __future__ import annotations

import torch

from ...expression.tokens import variable_index
from ...network.model import NeSymReSModel
from .hypothesis import Hypothesis


class PrefixGrammar:
    """Which tokens may come next so that a sequence becomes one complete prefix
    expression within the model's maximum length, over ``x_1..x_{n_features}``.

    A sequence is summarised by its count of open argument slots (1 after the start
    token); token ``t`` changes it by ``delta[t]``.
    """

    def __init__(self, model: NeSymReSModel, n_features: int, device: torch.device):
        vocab = model.vocab
        self.eos_id = vocab.eos_id
        self.max_length = model.config.max_length
        arity = torch.as_tensor(vocab.arities, device=device)
        self.is_expression_token = arity >= 0
        for token_id, token in enumerate(vocab.tokens):
            index = variable_index(token)
            if index is not None and index >= n_features:
                self.is_expression_token[token_id] = False
        self.delta = (arity - 1).clamp(min=-1)

    def allowed(self, open_slots: torch.Tensor, position: int) -> torch.Tensor:
        """``(rows, vocabulary)`` bool: tokens allowed at ``position`` (0 = first after
        the start token) for rows with ``open_slots`` open slots."""
        # Token t leaves open_slots + delta[t] slots; each needs at least one more
        # token, and the end token must still fit.
        remaining = self.max_length - position - 3
        new_open = open_slots[:, None] + self.delta[None, :]
        allowed = self.is_expression_token[None, :] & (open_slots[:, None] > 0) & (new_open <= remaining)
        allowed[:, self.eos_id] = open_slots == 0
        return allowed


@torch.inference_mode()
def constrained_search(model: NeSymReSModel, points: torch.Tensor, beam_size: int, n_features: int) -> list[Hypothesis]:
    """Most likely valid skeletons for one encoded point set.

    Parameters
    ----------
    model : NeSymReSModel
    points : tensor of shape (n_points, n_inputs)
        Encoded points (see :func:`nesymres_sklearn.network.encoding.encode_points`).
    beam_size : int
        Number of beams kept, and maximum number of hypotheses returned.
    n_features : int
        Variables ``x_1..x_{n_features}`` may be used, the others are masked.

    Returns
    -------
    list of Hypothesis, best first.
    """
    vocab = model.vocab
    device = points.device
    max_length = model.config.max_length
    state = model.start_decoding(points)
    grammar = PrefixGrammar(model, n_features, device)

    sequences = torch.full((1, 1), vocab.sos_id, dtype=torch.long, device=device)
    scores = torch.zeros(1, device=device)
    open_slots = torch.ones(1, dtype=torch.long, device=device)
    finished: list[Hypothesis] = []

    for position in range(max_length - 1):
        logits = model.decode_step(sequences[:, -1], state)
        log_probs = torch.log_softmax(logits.float(), dim=-1)[:, : len(vocab)]

        allowed = grammar.allowed(open_slots, position)
        candidates = torch.where(allowed, scores[:, None] + log_probs, float("-inf"))

        flat = candidates.flatten()
        k = min(2 * beam_size, int(torch.isfinite(flat).sum()))
        if k == 0:
            break
        top_scores, top_index = flat.topk(k)
        rows = top_index // len(vocab)
        token_ids = top_index % len(vocab)

        ends = token_ids == vocab.eos_id
        for row, score in zip(rows[ends].tolist(), top_scores[ends].tolist()):
            finished.append(Hypothesis(tuple(vocab.decode(sequences[row, 1:].tolist())), score))
        finished.sort(key=lambda h: h.log_prob, reverse=True)
        del finished[beam_size:]

        keep = (~ends).nonzero().flatten()[:beam_size]
        if len(keep) == 0:
            break
        rows, token_ids, new_scores = rows[keep], token_ids[keep], top_scores[keep]
        if len(finished) == beam_size and new_scores[0] <= finished[-1].log_prob:
            break
        sequences = torch.cat([sequences[rows], token_ids[:, None]], dim=1)
        scores = new_scores
        open_slots = open_slots[rows] + grammar.delta[token_ids]
        state.reorder(rows)
    return finished
