"""The authors' beam search, registered as the decoding method ``"original"``.

Step by step as theirs: ``beam_size`` rows start from the start token (row scores 0,
-1e9, ...), every step takes the top ``2 * beam_size`` of all (row, slot) pairs, an end
token (or reaching ``max_length``) finishes a hypothesis, and the search always runs
``max_length - 1`` steps. Finished hypotheses are kept and ranked by summed
log-probability divided by their length in ids (start token included, end token not),
in float32. Self-attention ignores padding tokens, as the original's key-padding mask
does. Hypotheses that are not one complete prefix expression, or use a variable the
data lacks, are dropped afterwards; the score of the others is their length-normalised
score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..expression.prefix import is_valid_prefix
from ..expression.tokens import token_arity, variable_index
from ..network.model import NeSymReSModel
from ..network.vocabulary import Vocabulary
from ..search.decoding.hypothesis import Hypothesis
from ..search.decoding.registry import DECODERS

NAME = "original"
# Initial score of the rows other than the first.
_EMPTY_ROW_SCORE = -1e9


def original_search(model: NeSymReSModel, points: torch.Tensor, beam_size: int, n_features: int) -> list[Hypothesis]:
    """The authors' search; arguments as for
    :func:`nesymres_sklearn.search.decoding.beam.constrained_search`."""
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
    state = model.start_decoding(points, n_rows=beam_size)
    sequences = torch.full((beam_size, 1), vocab.sos_id, dtype=torch.long, device=device)
    scores = torch.full((beam_size,), _EMPTY_ROW_SCORE, device=device)
    scores[0] = 0.0
    finished = _FinishedHypotheses(beam_size)

    for length in range(1, max_length):
        logits = model.decode_step(sequences[:, -1], state, attend=sequences != vocab.pad_id)
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
        state.reorder(rows)
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


DECODERS[NAME] = original_search
