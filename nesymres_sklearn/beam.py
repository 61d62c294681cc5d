"""Batched beam search over skeletons; ``ModelConfig.search`` picks one of two.

Both decode all beams as one batch with cached keys and values, so each step costs
one decoder pass over a single new token, and both normalise the log-probabilities
over every output slot of the model.

``"constrained"`` (this project's models)
    A running count of open argument slots masks the vocabulary: the end token is
    allowed exactly when the expression is complete, no token may open more slots than
    the remaining length can close, and variables the data does not have are never
    proposed. Every returned hypothesis is therefore a valid skeleton. The search stops
    as soon as every beam has ended, or when no live beam can still beat the
    ``beam_size``-th finished one. Scores are summed log-probabilities.

``"original"`` (converted authors' checkpoints)
    The authors' search, step by step: ``beam_size`` rows start from the start token
    (row scores 0, -1e9, ...), every step takes the top ``2 * beam_size`` of all
    (row, slot) pairs, an end token (or reaching ``max_length``) finishes a
    hypothesis, and the search always runs ``max_length - 1`` steps. Finished
    hypotheses are kept and ranked by summed log-probability divided by their length
    in ids (start token included, end token not), in float32. Self-attention ignores
    padding tokens, as the original's key-padding mask does. Hypotheses that are not
    one complete prefix expression, or use a variable the data lacks, are dropped
    afterwards; the score of the others is their length-normalised score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .model import NeSymReSModel
from .prefix import is_valid_prefix
from .vocabulary import Vocabulary, token_arity, variable_index

# Initial score of the rows other than the first in the original search.
_ORIGINAL_EMPTY_ROW_SCORE = -1e9


@dataclass(frozen=True)
class Hypothesis:
    """A finished beam: prefix tokens (without start/end) and its score (summed
    log-probability; for the original search, divided by the length in ids)."""

    tokens: tuple[str, ...]
    log_prob: float


def beam_search(
    model: NeSymReSModel, points: torch.Tensor, beam_size: int, n_features: int
) -> list[Hypothesis]:
    """Most likely skeletons for one encoded point set, by the model's ``search``.

    Parameters
    ----------
    model : NeSymReSModel
    points : tensor of shape (n_points, n_inputs)
        Encoded points (see :func:`nesymres_sklearn.encoding.encode_points`).
    beam_size : int
        Number of beams kept, and maximum number of hypotheses returned.
    n_features : int
        Variables ``x_1..x_{n_features}`` may be used, the others are masked.

    Returns
    -------
    list of Hypothesis, best first.
    """
    search = original_search if model.config.search == "original" else constrained_search
    return search(model, points, beam_size, n_features)


@torch.inference_mode()
def constrained_search(
    model: NeSymReSModel, points: torch.Tensor, beam_size: int, n_features: int
) -> list[Hypothesis]:
    """The ``"constrained"`` search; arguments as for :func:`beam_search`."""
    vocab = model.vocab
    device = points.device
    max_length = model.config.max_length
    memory_kv = model.decoder.memory_keys_values(model.encode(points[None]))
    arity = torch.as_tensor(vocab.arities, device=device)
    is_expression_token = arity >= 0
    for token_id, token in enumerate(vocab.tokens):
        index = variable_index(token)
        if index is not None and index >= n_features:
            is_expression_token[token_id] = False
    delta = (arity - 1).clamp(min=-1)  # change of open slots

    sequences = torch.full((1, 1), vocab.sos_id, dtype=torch.long, device=device)
    scores = torch.zeros(1, device=device)
    open_slots = torch.ones(1, dtype=torch.long, device=device)
    caches = [[None, None] for _ in model.decoder.layers]
    finished: list[Hypothesis] = []

    for position in range(max_length - 1):
        n_live = sequences.shape[0]
        layer_kv = [(k.expand(n_live, -1, -1, -1), v.expand(n_live, -1, -1, -1)) for k, v in memory_kv]
        logits = model.decoder(sequences[:, -1:], layer_kv, caches, start=position)[:, -1]
        log_probs = torch.log_softmax(logits.float(), dim=-1)[:, :len(vocab)]

        # Token t at this position leaves open_slots + delta[t] slots; each needs at
        # least one more token, and the end token must still fit.
        remaining = max_length - position - 3
        new_open = open_slots[:, None] + delta[None, :]
        allowed = is_expression_token[None, :] & (open_slots[:, None] > 0) & (new_open <= remaining)
        allowed[:, vocab.eos_id] = open_slots == 0
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
        open_slots = open_slots[rows] + delta[token_ids]
        for cache in caches:
            cache[0], cache[1] = cache[0][rows], cache[1][rows]
    return finished


def original_search(
    model: NeSymReSModel, points: torch.Tensor, beam_size: int, n_features: int
) -> list[Hypothesis]:
    """The ``"original"`` search; arguments as for :func:`beam_search`."""
    hypotheses = []
    for score, ids in original_finished(model, points, beam_size):
        tokens = hypothesis_tokens(ids, model.vocab, n_features)
        if tokens is not None:
            hypotheses.append(Hypothesis(tokens, score))
    return hypotheses


@torch.inference_mode()
def original_finished(model: NeSymReSModel, points: torch.Tensor, beam_size: int) -> list[tuple[float, list[int]]]:
    """Every hypothesis the original search keeps, as ``(score, ids)`` (ids start with
    the start token, exclude the end token), best first, before any validity check."""
    vocab, max_length = model.vocab, model.config.max_length
    device = points.device
    memory_kv = [
        (k.expand(beam_size, -1, -1, -1), v.expand(beam_size, -1, -1, -1))
        for k, v in model.decoder.memory_keys_values(model.encode(points[None]))
    ]
    sequences = torch.full((beam_size, 1), vocab.sos_id, dtype=torch.long, device=device)
    scores = torch.full((beam_size,), _ORIGINAL_EMPTY_ROW_SCORE, device=device)
    scores[0] = 0.0
    caches = [[None, None] for _ in model.decoder.layers]
    finished = _FinishedHypotheses(beam_size)

    for length in range(1, max_length):
        logits = model.decoder(
            sequences[:, -1:], memory_kv, caches, start=length - 1, attend=sequences != vocab.pad_id
        )[:, -1]
        n_slots = logits.shape[-1]
        candidates = torch.log_softmax(logits.float(), dim=-1) + scores[:, None]
        top_scores, top_index = candidates.flatten().topk(2 * beam_size)
        last_step = length + 1 == max_length
        kept = []
        for position, (index, score) in enumerate(zip(top_index.tolist(), top_scores.tolist())):
            row, token_id = divmod(index, n_slots)
            if token_id == vocab.eos_id or last_step:
                finished.add(sequences[row].tolist(), score)
            else:
                kept.append(position)
                if len(kept) == beam_size:
                    break
        if last_step:
            break
        kept = torch.tensor(kept, device=device)
        rows, token_ids = top_index[kept] // n_slots, top_index[kept] % n_slots
        sequences = torch.cat([sequences[rows], token_ids[:, None]], dim=1)
        scores = top_scores[kept]
        for cache in caches:
            cache[0], cache[1] = cache[0][rows], cache[1][rows]
    return finished.ranked()


def hypothesis_tokens(ids: Sequence[int], vocab: Vocabulary, n_features: int) -> tuple[str, ...] | None:
    """Prefix tokens of a hypothesis of the original search (``ids`` start with the
    start token), or ``None`` if it is not one complete prefix expression of
    vocabulary tokens over ``x_1..x_{n_features}``."""
    tokens = []
    for token_id in ids[1:]:
        if token_id >= len(vocab) or token_arity(vocab.tokens[token_id]) is None:
            return None  # padding, start token or an unused output slot
        tokens.append(vocab.tokens[token_id])
    if not is_valid_prefix(tokens):
        return None
    if any((index := variable_index(token)) is not None and index >= n_features for token in tokens):
        return None
    return tuple(tokens)


class _FinishedHypotheses:
    """The original's best ``size`` finished hypotheses, by float32 log-prob / length."""

    def __init__(self, size: int):
        self.size = size
        self.entries: list[tuple[float, list[int]]] = []
        self.worst = 1e9

    def add(self, ids: list[int], log_prob: float) -> None:
        score = float(np.float32(log_prob) / np.float32(len(ids)))
        if len(self.entries) < self.size or score > self.worst:
            self.entries.append((score, ids))
            if len(self.entries) > self.size:
                ranked = sorted((entry_score, i) for i, (entry_score, _) in enumerate(self.entries))
                del self.entries[ranked[0][1]]
                self.worst = ranked[1][0]
            else:
                self.worst = min(score, self.worst)

    def ranked(self) -> list[tuple[float, list[int]]]:
        """Entries by decreasing score (ties keep the order they were added in)."""
        return sorted(self.entries, key=lambda entry: entry[0], reverse=True)
