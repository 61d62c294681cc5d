"""The NeSymReS network: a Set Transformer encoder and a Transformer decoder.

The encoder maps a set of encoded points to ``n_seeds`` latent vectors (ISAB blocks
with inducing points, then pooling by multi-head attention); the decoder predicts the
skeleton's prefix tokens from them. Weights are saved and loaded as ``config.json`` +
``model.safetensors`` through :class:`huggingface_hub.PyTorchModelHubMixin`.

Decoding is incremental: :meth:`NeSymReSModel.start_decoding` encodes a point set once
and returns a :class:`DecodingState` (the cached keys and values); each
:meth:`NeSymReSModel.decode_step` feeds one new token per row, and
:meth:`DecodingState.reorder` follows the rows a search keeps. Searches never reach
into the layers.

The config names the number encoding (:mod:`.encoding`) and the decoding method
(:mod:`nesymres_sklearn.search.decoding.registry`) by registry names, so the authors' published
checkpoints (:mod:`nesymres_sklearn.original`) run on the same classes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache

import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from .encoding import N_BITS, get_encoding
from .vocabulary import Vocabulary, default_tokens

ATTENTION_SCALES = ("head", "hidden")
# Fields added for the authors' checkpoints (see ModelConfig.to_dict).
COMPATIBILITY_FIELDS = ("encoder_attention_scale", "output_size", "search")


class ModelLoadError(ValueError):
    """Weights that are missing, corrupt or inconsistent with their config."""


_POSITIVE_INTEGERS = (
    "hidden_size",
    "n_heads",
    "n_isab",
    "n_inducing_points",
    "n_seeds",
    "n_decoder_layers",
    "feedforward_size",
    "max_length",
)


@dataclass
class ModelConfig:
    """Architecture, vocabulary and number encoding of a model.

    The defaults are the sizes of the paper (appendix A). ``vocabulary`` lists the
    tokens by id; the number of input variables is the number of ``x_i`` tokens in it.

    The last four fields reproduce the authors' checkpoints; configs without them get
    this project's behaviour:

    * ``encoding``: name of the number encoding (:mod:`.encoding`: ``"ieee-half"``;
      ``"original"`` is registered by :mod:`nesymres_sklearn.original`);
    * ``encoder_attention_scale``: set-encoder attention scores are divided by
      ``sqrt(hidden_size / n_heads)`` (``"head"``) or by ``sqrt(hidden_size)``
      (``"hidden"``, the original);
    * ``output_size``: rows of the token embedding and width of the logits, ``None``
      for ``len(vocabulary)``. The original has 60 slots for 34 tokens; the extra slots
      take part in every softmax but are never proposed;
    * ``search``: name of the decoding method used by default
      (:mod:`nesymres_sklearn.search.decoding.registry`: ``"constrained"``; ``"original"`` is
      registered by :mod:`nesymres_sklearn.original`).
    """

    vocabulary: list[str] = field(default_factory=lambda: default_tokens(3))
    hidden_size: int = 512
    n_heads: int = 8
    n_isab: int = 5
    n_inducing_points: int = 50
    n_seeds: int = 10
    n_decoder_layers: int = 5
    feedforward_size: int = 512
    max_length: int = 60
    dropout: float = 0.0
    encoding: str = "ieee-half"
    encoder_attention_scale: str = "head"
    output_size: int | None = None
    search: str = "constrained"

    def __post_init__(self):
        if isinstance(self.vocabulary, str) or not all(isinstance(token, str) for token in self.vocabulary):
            raise ValueError(f"vocabulary must be a list of token strings, got {self.vocabulary!r}.")
        self.vocabulary = list(self.vocabulary)
        _vocabulary(tuple(self.vocabulary))  # validates the tokens
        for name in _POSITIVE_INTEGERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, int | float) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be a number in [0, 1), got {self.dropout!r}.")
        if self.hidden_size % self.n_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be a multiple of n_heads ({self.n_heads}).")
        get_encoding(self.encoding)  # raises for an unregistered encoding
        if self.encoder_attention_scale not in ATTENTION_SCALES:
            raise ValueError(
                f"Unknown encoder_attention_scale {self.encoder_attention_scale!r}; expected one of {ATTENTION_SCALES}."
            )
        if self.output_size is not None and (
            isinstance(self.output_size, bool)
            or not isinstance(self.output_size, int)
            or self.output_size < len(self.vocabulary)
        ):
            raise ValueError(
                f"output_size must be an integer at least the vocabulary's size ({len(self.vocabulary)} tokens), "
                f"got {self.output_size!r}."
            )

    @property
    def n_variables(self) -> int:
        return self.vocab.n_variables

    @property
    def vocab(self) -> Vocabulary:
        return _vocabulary(tuple(self.vocabulary))

    @property
    def cache_bytes_per_beam(self) -> int:
        """Bytes of one beam's self-attention cache at the full length (float32 keys
        and values of every decoder layer): what a beam of the decoding holds."""
        return self.n_decoder_layers * 2 * self.max_length * self.hidden_size * 4

    @property
    def n_outputs(self) -> int:
        """Token slots: embedding rows and logits per position."""
        return len(self.vocabulary) if self.output_size is None else self.output_size

    def to_dict(self) -> dict:
        """The fields as a dict, without the :data:`COMPATIBILITY_FIELDS` that hold their
        defaults, so that files saved from it stay readable by versions without those fields."""
        defaults = {f.name: f.default for f in fields(self)}
        return {
            name: value
            for name, value in asdict(self).items()
            if not (name in COMPATIBILITY_FIELDS and value == defaults[name])
        }


@lru_cache(maxsize=16)
def _vocabulary(tokens: tuple[str, ...]) -> Vocabulary:
    return Vocabulary(tokens)


MODEL_SIZES = {
    # ~26M parameters, the paper's encoder/decoder sizes.
    "paper": dict(),
    # ~5M parameters.
    "medium": dict(
        hidden_size=256, n_heads=8, n_isab=3, n_inducing_points=32, n_seeds=10, n_decoder_layers=4, feedforward_size=512
    ),
    # ~1M parameters: the size that trains in hours on a laptop CPU.
    "small": dict(
        hidden_size=128, n_heads=4, n_isab=3, n_inducing_points=32, n_seeds=8, n_decoder_layers=3, feedforward_size=256
    ),
    # ~0.2M parameters.
    "tiny": dict(
        hidden_size=64, n_heads=4, n_isab=2, n_inducing_points=16, n_seeds=4, n_decoder_layers=2, feedforward_size=128
    ),
}


def config_for_size(size: str, n_variables: int = 3, **overrides) -> ModelConfig:
    """A :class:`ModelConfig` of one of the named ``MODEL_SIZES``."""
    if size not in MODEL_SIZES:
        raise ValueError(f"Unknown model size {size!r}; choose from {sorted(MODEL_SIZES)}.")
    settings = {**MODEL_SIZES[size], "vocabulary": default_tokens(n_variables), **overrides}
    return ModelConfig(**settings)


class MAB(nn.Module):
    """Multi-head attention block of the Set Transformer (post-norm, with LayerNorm).

    ``scale`` multiplies the attention scores (``None``: ``1 / sqrt(head size)``).
    """

    def __init__(self, query_size: int, key_size: int, hidden_size: int, n_heads: int, scale: float | None = None):
        super().__init__()
        self.n_heads = n_heads
        self.scale = scale
        self.fc_q = nn.Linear(query_size, hidden_size)
        self.fc_k = nn.Linear(key_size, hidden_size)
        self.fc_v = nn.Linear(key_size, hidden_size)
        self.fc_o = nn.Linear(hidden_size, hidden_size)
        self.ln0 = nn.LayerNorm(hidden_size)
        self.ln1 = nn.LayerNorm(hidden_size)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        q = self.fc_q(queries)
        k, v = self.fc_k(keys), self.fc_v(keys)
        attended = F.scaled_dot_product_attention(
            _split_heads(q, self.n_heads),
            _split_heads(k, self.n_heads),
            _split_heads(v, self.n_heads),
            scale=self.scale,
        )
        out = self.ln0(q + _merge_heads(attended))
        return self.ln1(out + F.relu(self.fc_o(out)))


class ISAB(nn.Module):
    """Induced set attention block: attention through ``n_inducing`` learned points."""

    def __init__(self, input_size: int, hidden_size: int, n_heads: int, n_inducing: int, scale: float | None = None):
        super().__init__()
        self.inducing_points = nn.Parameter(torch.empty(1, n_inducing, hidden_size))
        nn.init.xavier_uniform_(self.inducing_points)
        self.mab0 = MAB(hidden_size, input_size, hidden_size, n_heads, scale)
        self.mab1 = MAB(input_size, hidden_size, hidden_size, n_heads, scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        summary = self.mab0(self.inducing_points.expand(x.shape[0], -1, -1), x)
        return self.mab1(x, summary)


class PMA(nn.Module):
    """Pooling by multi-head attention onto ``n_seeds`` learned seed vectors."""

    def __init__(self, hidden_size: int, n_heads: int, n_seeds: int, scale: float | None = None):
        super().__init__()
        self.seeds = nn.Parameter(torch.empty(1, n_seeds, hidden_size))
        nn.init.xavier_uniform_(self.seeds)
        self.mab = MAB(hidden_size, hidden_size, hidden_size, n_heads, scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mab(self.seeds.expand(x.shape[0], -1, -1), x)


class SetEncoder(nn.Module):
    """Encoded points ``(B, N, 16 * (n_variables + 1))`` -> memory ``(B, n_seeds, H)``."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        input_size = N_BITS * (config.n_variables + 1)
        sizes = [input_size] + [config.hidden_size] * (config.n_isab - 1)
        scale = config.hidden_size**-0.5 if config.encoder_attention_scale == "hidden" else None
        self.blocks = nn.ModuleList(
            ISAB(size, config.hidden_size, config.n_heads, config.n_inducing_points, scale) for size in sizes
        )
        self.pool = PMA(config.hidden_size, config.n_heads, config.n_seeds, scale)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            points = block(points)
        return self.pool(points)


class Attention(nn.Module):
    """Multi-head attention with separate projections (so keys/values can be cached)."""

    def __init__(self, hidden_size: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size)
        self.k_proj = nn.Linear(hidden_size, hidden_size)
        self.v_proj = nn.Linear(hidden_size, hidden_size)
        self.out_proj = nn.Linear(hidden_size, hidden_size)

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _split_heads(self.k_proj(x), self.n_heads), _split_heads(self.v_proj(x), self.n_heads)

    def forward(self, x, keys, values, is_causal: bool = False, mask: torch.Tensor | None = None) -> torch.Tensor:
        """``mask`` (broadcastable to ``(B, heads, queries, keys)``, True = attend)."""
        q = _split_heads(self.q_proj(x), self.n_heads)
        attended = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, is_causal=is_causal)
        return self.out_proj(_merge_heads(attended))


class DecoderLayer(nn.Module):
    """Post-norm Transformer decoder layer (self-attention, cross-attention, MLP)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        h = config.hidden_size
        self.self_attn = Attention(h, config.n_heads)
        self.cross_attn = Attention(h, config.n_heads)
        self.mlp = nn.Sequential(
            nn.Linear(h, config.feedforward_size), nn.ReLU(), nn.Linear(config.feedforward_size, h)
        )
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(h), nn.LayerNorm(h), nn.LayerNorm(h)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, memory_kv, cache: LayerCache | None = None, attend: torch.Tensor | None = None):
        """Full causal pass when ``cache`` is ``None``; otherwise incremental: the new
        positions' keys and values are appended to ``cache``, and ``attend``
        (``(B, cached + new)`` bool) may exclude positions from self-attention."""
        keys, values = self.self_attn.keys_values(x)
        if cache is not None:
            keys, values = cache.append(keys, values)
        mask = None if attend is None else attend[:, None, None, :]
        x = self.norm1(x + self.dropout(self.self_attn(x, keys, values, is_causal=cache is None, mask=mask)))
        x = self.norm2(x + self.dropout(self.cross_attn(x, *memory_kv)))
        return self.norm3(x + self.dropout(self.mlp(x)))


class LayerCache:
    """Self-attention keys and values of one decoder layer for the tokens decoded so far."""

    def __init__(self):
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def append(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.keys is not None:
            keys = torch.cat([self.keys, keys], dim=2)
            values = torch.cat([self.values, values], dim=2)
        self.keys, self.values = keys, values
        return keys, values


class DecodingState:
    """What incremental decoding keeps between steps for a batch of rows (beams).

    Holds the memory's cross-attention keys and values (computed once per point set)
    and each layer's self-attention cache. :meth:`reorder` keeps, duplicates or drops
    rows as a search selects them.
    """

    def __init__(self, memory_kv: list[tuple[torch.Tensor, torch.Tensor]], n_rows: int):
        self._memory_kv = memory_kv
        self._layers = [LayerCache() for _ in memory_kv]
        self.n_rows = n_rows
        self.length = 0

    def memory_kv(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per-layer memory keys and values, broadcast to the current rows."""
        return [(k.expand(self.n_rows, -1, -1, -1), v.expand(self.n_rows, -1, -1, -1)) for k, v in self._memory_kv]

    def layers(self) -> list[LayerCache]:
        return self._layers

    def reorder(self, rows: torch.Tensor) -> None:
        """Continue with the rows ``rows`` (indices into the current rows, in order)."""
        for layer in self._layers:
            if layer.keys is not None:
                layer.keys, layer.values = layer.keys[rows], layer.values[rows]
        self.n_rows = len(rows)


class SkeletonDecoder(nn.Module):
    """Token ids ``(B, T)`` and memory ``(B, S, H)`` -> next-token logits ``(B, T, V)``."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.token_embedding = nn.Embedding(config.n_outputs, config.hidden_size)
        self.position_embedding = nn.Embedding(config.max_length, config.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        self.head = nn.Linear(config.hidden_size, config.n_outputs)

    def memory_keys_values(self, memory: torch.Tensor) -> list:
        """Cross-attention keys and values per layer (computed once per input set)."""
        return [layer.cross_attn.keys_values(memory) for layer in self.layers]

    def forward(self, tokens, memory_kv, caches: list | None = None, start: int = 0, attend=None) -> torch.Tensor:
        """``caches`` (one :class:`LayerCache` per layer) and ``attend`` as in
        :meth:`DecoderLayer.forward`; ``start`` is the position of the first token."""
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        for i, layer in enumerate(self.layers):
            x = layer(x, memory_kv[i], None if caches is None else caches[i], attend)
        return self.head(x)


class NeSymReSModel(
    nn.Module,
    PyTorchModelHubMixin,
    library_name="nesymres-sklearn",
    repo_url="https://github.com/nesymres-sklearn/nesymres-sklearn",
):
    """Set-to-sequence model predicting equation skeletons from points.

    Parameters
    ----------
    config : ModelConfig
        Architecture, vocabulary and encoding; saved as ``config.json``.
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        if isinstance(config, dict):
            config = ModelConfig(**config)
        self.config = config
        self.encoder = SetEncoder(config)
        self.decoder = SkeletonDecoder(config)

    @property
    def vocab(self) -> Vocabulary:
        return self.config.vocab

    def encode(self, points: torch.Tensor) -> torch.Tensor:
        return self.encoder(points)

    def start_decoding(self, points: torch.Tensor, n_rows: int = 1) -> DecodingState:
        """Encode one point set ``(n_points, n_inputs)`` for ``n_rows`` decoding rows."""
        return DecodingState(self.decoder.memory_keys_values(self.encode(points[None])), n_rows)

    def decode_step(self, tokens: torch.Tensor, state: DecodingState, attend: torch.Tensor | None = None):
        """Next-token logits ``(rows, n_outputs)`` after feeding ``tokens`` ``(rows,)``, one
        per row; ``attend`` (``(rows, length + 1)`` bool) may mask decoded positions."""
        logits = self.decoder(tokens[:, None], state.memory_kv(), state.layers(), start=state.length, attend=attend)
        state.length += 1
        return logits[:, -1]

    def forward(self, points: torch.Tensor, tokens: torch.Tensor, targets: torch.Tensor | None = None):
        """Logits for every position of ``tokens``; with ``targets``, also the mean
        cross-entropy over non-padding targets."""
        memory = self.encode(points)
        logits = self.decoder(tokens, self.decoder.memory_keys_values(memory))
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), ignore_index=self.config.vocab.pad_id)
        return logits, loss


def _split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    batch, length, width = x.shape
    return x.view(batch, length, n_heads, width // n_heads).transpose(1, 2)


def _merge_heads(x: torch.Tensor) -> torch.Tensor:
    batch, heads, length, width = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * width)
