"""Sampling skeletons from the network, registered as the decoding method ``"sample"``.

``n_samples`` sequences are drawn as one batch through the model's incremental
decoding, each token from the model's distribution at ``temperature``, optionally cut
to the ``top_k`` most likely tokens or the smallest set holding ``top_p`` of the
probability. The same grammar as the beam search masks the vocabulary, so every
sample is a complete skeleton over the data's variables. Repeated skeletons are
returned once; each hypothesis is scored by its summed log-probability under the
model (at temperature 1), so samples and beams are ranked alike.
"""

from __future__ import annotations

import torch

from ...network.model import NeSymReSModel
from .beam import PrefixGrammar
from .hypothesis import Hypothesis


@torch.inference_mode()
def sample_skeletons(
    model: NeSymReSModel,
    points: torch.Tensor,
    n_samples: int,
    n_features: int,
    *,
    seed: int = 0,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> list[Hypothesis]:
    """Distinct skeletons among ``n_samples`` draws, most likely first.

    Parameters
    ----------
    model, points, n_features
        As for :func:`~.beam.constrained_search`.
    n_samples : int
        Sequences drawn (the number of distinct skeletons returned is at most this).
    seed : int, default=0
        Seeds the draws (a :class:`torch.Generator` on the points' device).
    temperature : float, default=1.0
        Divides the log-probabilities before drawing; below 1 favours likely tokens.
    top_k : int, default=None
        Draw each token among the ``top_k`` most likely allowed ones.
    top_p : float, default=None
        Draw each token among the most likely allowed ones that together hold at least
        ``top_p`` of the probability (nucleus sampling).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}.")
    vocab = model.vocab
    device = points.device
    generator = torch.Generator(device=device).manual_seed(int(seed))
    grammar = PrefixGrammar(model, n_features, device)
    state = model.start_decoding(points, n_rows=n_samples)
    sequences = torch.full((n_samples, 1), vocab.sos_id, dtype=torch.long, device=device)
    scores = torch.zeros(n_samples, device=device)
    open_slots = torch.ones(n_samples, dtype=torch.long, device=device)
    best: dict[tuple[str, ...], float] = {}

    for position in range(model.config.max_length - 1):
        logits = model.decode_step(sequences[:, -1], state)
        log_probs = torch.log_softmax(logits.float(), dim=-1)[:, : len(vocab)]
        allowed = grammar.allowed(open_slots, position)
        weights = torch.where(allowed, log_probs / temperature, float("-inf"))
        weights = _truncate(weights, top_k, top_p)
        token_ids = torch.multinomial(torch.softmax(weights, dim=-1), 1, generator=generator)[:, 0]
        scores = scores + log_probs.gather(1, token_ids[:, None])[:, 0]

        ends = token_ids == vocab.eos_id
        for row, score in zip(ends.nonzero().flatten().tolist(), scores[ends].tolist()):
            tokens = tuple(vocab.decode(sequences[row, 1:].tolist()))
            best[tokens] = max(score, best.get(tokens, float("-inf")))
        rows = (~ends).nonzero().flatten()
        if len(rows) == 0:
            break
        sequences = torch.cat([sequences[rows], token_ids[rows, None]], dim=1)
        scores, open_slots = scores[rows], open_slots[rows] + grammar.delta[token_ids[rows]]
        state.reorder(rows)
    ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
    return [Hypothesis(tokens, score) for tokens, score in ranked]


def _truncate(weights: torch.Tensor, top_k: int | None, top_p: float | None) -> torch.Tensor:
    """``weights`` with every token outside the top-k / top-p set of its row at -inf."""
    if top_k is not None and top_k < weights.shape[-1]:
        kth = weights.topk(top_k, dim=-1).values[:, -1:]
        weights = weights.masked_fill(weights < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_weights, order = weights.sort(dim=-1, descending=True)
        cumulative = torch.softmax(sorted_weights, dim=-1).cumsum(dim=-1)
        # Drop a token when the more likely ones already hold top_p (the first always stays).
        drop_sorted = (cumulative - torch.softmax(sorted_weights, dim=-1)) >= top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        weights = weights.masked_fill(drop, float("-inf"))
    return weights
