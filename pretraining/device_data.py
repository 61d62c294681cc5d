"""Training batches made on the training device, in PyTorch, with the host's distributions.

:class:`DeviceSampler` makes the batches of :class:`pretraining.data.EquationSampler`
where the model trains: the bank's skeletons live on the device as a table of nodes
(:class:`DeviceBank`, parsed once: each node's height, second child and placeholder),
and a batch is drawn, evaluated and encoded there with no copy from the host. The
distributions are the host's (appendix B of the paper, :class:`~pretraining.data.BatchConfig`):

* one number of points per batch, uniform in ``min_points..max_points``;
* a skeleton per equation, by generation count (tempered) or uniformly;
* ``n_c`` uniform in ``0..min(max_constants, N_c)`` placeholders, a uniform subset of
  them, values uniform in ``constant_range`` (signs flipped with ``"both"``), the others
  neutral; per variable a support ``S1 < S2`` uniform in ``support_range`` and points
  uniform in it; variables the skeleton does not use are 0;
* points with a non-finite ``y`` or ``|y| > max_abs_y`` are dropped; an equation that
  keeps fewer than ``min_valid_fraction`` of its points is redrawn (new constants and
  support, a new skeleton after 4 tries), as is one whose target is too long (the
  trials are evaluated a round at a time, see :meth:`DeviceSampler.batch`); the batch
  is cut to its smallest number of valid points, each equation keeping its first ones.

Every program of a batch is evaluated at once: the nodes of all equations are sorted by
height and operator, and each (height, operator) group is one vectorised call of the
operator's torch function (:data:`TORCH_OPERATORS`, one per row of the operator table)
on all its nodes and points. Values are float32 (``dtype``), so they equal the host's
float64 values to float32 rounding; the points leave as their half-precision codes,
exactly the batch layout of :mod:`pretraining.data`.

Batch ``i`` of stream ``s`` is a pure function of ``(seed, s, i)`` and the device type:
its torch generator is seeded from them (:func:`batch_generator`), so a resumed run
continues the same stream bit for bit with nothing to checkpoint. CPU and CUDA
generators draw different numbers: a stream is that of one device type.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from nesymres_sklearn.expression.operators import OPERATORS
from nesymres_sklearn.expression.placeholders import ADDITIVE, EXISTING, MULTIPLICATIVE, NEUTRAL_VALUE
from nesymres_sklearn.expression.tokens import CONSTANT, variable_index
from nesymres_sklearn.network.encoding import HALF_MAX, NAN_CODE

from .bank import KIND_CODES, SkeletonBank
from .data import TRIES_PER_SKELETON, BatchConfig, cumulative_counts, model_variables, model_vocabulary

#: The torch function of every operator of :data:`nesymres_sklearn.expression.operators.OPERATORS`
#: (the same function as its ``numpy`` entry).
TORCH_OPERATORS: dict[str, Callable] = {
    "add": torch.add,
    "mul": torch.mul,
    "div": torch.div,
    "pow": torch.pow,
    "abs": torch.abs,
    "acos": torch.acos,
    "asin": torch.asin,
    "atan": torch.atan,
    "cos": torch.cos,
    "cosh": torch.cosh,
    "coth": lambda a: torch.reciprocal(torch.tanh(a)),
    "exp": torch.exp,
    "ln": torch.log,
    "sin": torch.sin,
    "sinh": torch.sinh,
    "sqrt": torch.sqrt,
    "tan": torch.tan,
    "tanh": torch.tanh,
}

_NAN_CODE = int(NAN_CODE)
# Skeletons parsed at once when a bank is moved to the device (bounds the temporaries).
_PARSE_CHUNK = 1 << 16
# New skeletons a pending equation tries at most per round (4 trials each).
_MAX_FRESH = 8


def batch_generator(seed: int, stream: int, index: int, device) -> torch.Generator:
    """The torch generator of batch ``index`` of stream ``stream``, on ``device``."""
    state = np.random.SeedSequence([seed, stream, index]).generate_state(2, np.uint32)
    generator = torch.Generator(device=torch.device(device))
    generator.manual_seed(int(state[0]) << 32 | int(state[1]))
    return generator


def half_codes(values: torch.Tensor) -> torch.Tensor:
    """The int16 half-precision codes of ``values``, as
    :func:`~nesymres_sklearn.network.encoding.half_bits` gives them: finite values
    saturate at +/-65504, every NaN is ``0x7E00``."""
    finite = torch.isfinite(values)
    codes = torch.where(finite, values.clamp(-HALF_MAX, HALF_MAX), values).to(torch.float16).view(torch.int16)
    return torch.where(torch.isnan(values), torch.tensor(_NAN_CODE, dtype=torch.int16, device=codes.device), codes)


class DeviceBank:
    """One split of a skeleton bank as tables on ``device``, one row per token or per
    evaluated node of the concatenated skeletons (int16, -1 where none).

    ``nodes`` (skeleton ``i`` from ``offsets[i]``) serves the targets: per token, its id,
    the position of the operator that is dropped with it (placeholders that can be
    dropped: the ``mul`` of ``mul c A``, the ``add`` of ``add A c``) and its placeholder
    index (``c`` tokens).

    ``program`` (skeleton ``i`` from ``program_offsets[i]``) serves the evaluation: per
    evaluated node, in prefix order, its token, the token of the operator it applies,
    its height (leaves 0), the rows of its arguments, the placeholders it multiplies by
    and adds, and the variable it reads. Two patterns of attached skeletons are one node
    each: ``add mul c x c`` (every variable: ``c * x + c``, a leaf) and ``mul c U A``
    (every unary operator ``U``: ``c * U(A)``); the other tokens of a pattern are not
    evaluated. A skeleton thus takes fewer, larger operator calls, with the host's
    operations in the host's order.

    ``kinds`` (int8, ``(S, K)``) are the placeholder kinds (-1 past the last), ``uses``
    (bool, ``(S, n_variables)``) the variables each skeleton reads.
    """

    TOKEN, PARTNER, PLACEHOLDER = range(3)
    OPERATOR, HEIGHT, FIRST, SECOND, SCALE, OFFSET, VARIABLE = range(1, 8)  # program columns after TOKEN

    def __init__(self, bank: SkeletonBank, n_variables: int, device):
        self.device = torch.device(device)
        self.vocab = bank.vocab
        self.n_variables = n_variables
        offsets = bank._offsets
        self.offsets = torch.as_tensor(offsets, device=self.device)
        self.lengths = self.offsets.diff()
        self.n_placeholders = torch.as_tensor(np.diff(bank._kind_offsets), device=self.device)
        tokens = torch.as_tensor(_padded(bank._tokens, offsets, -1), device=self.device)
        self.kinds = torch.as_tensor(_padded(bank._kinds, bank._kind_offsets, -1), device=self.device)
        arities = torch.as_tensor(np.append(self.vocab.arities, -1), device=self.device)  # id -1: past the end
        variable_of = [-1 if (i := variable_index(token)) is None else i for token in self.vocab.tokens]
        variable_of = torch.as_tensor(variable_of + [-1], device=self.device)
        # Parsed in chunks of skeletons of similar lengths (each as wide as its longest).
        order = torch.as_tensor(np.argsort(np.diff(offsets), kind="stable"), device=self.device)
        nodes, programs, sizes, uses = [], [], [], []
        for start in range(0, len(tokens), _PARSE_CHUNK):
            members = order[start : start + _PARSE_CHUNK]
            width = int(self.lengths[members].max())
            chunk = tokens[members, :width].long()
            kind_codes = self._kind_codes(chunk, self.kinds[members].long())
            table, program, live = _parse(chunk, arities, variable_of, self.vocab, kind_codes)
            nodes.append(table[chunk >= 0])
            programs.append(program[live])
            sizes.append(live.sum(1))
            uses.append(torch.stack([(variable_of[chunk] == i).any(1) for i in range(n_variables)], 1))
        self.program_lengths = torch.empty_like(self.lengths)
        self.program_lengths[order] = torch.cat(sizes)
        self.program_offsets = self.program_lengths.cumsum(0) - self.program_lengths
        self.nodes = _unsorted(torch.cat(nodes), order, self.lengths)
        self.program = _unsorted(torch.cat(programs), order, self.program_lengths)
        #: The longest skeleton and program (the host knows the shapes without asking the device).
        self.width, self.program_width = int(self.lengths.max()), int(self.program_lengths.max())
        self.uses = torch.empty((len(order), n_variables), dtype=torch.bool, device=self.device)
        self.uses[order] = torch.cat(uses)

    def _kind_codes(self, chunk: torch.Tensor, kinds: torch.Tensor) -> torch.Tensor:
        """The kind code of each ``c`` token of a chunk of skeletons (-1 elsewhere)."""
        is_constant = chunk == self.vocab.constant_id
        index = (is_constant.cumsum(1) - 1).clamp(0, kinds.shape[1] - 1)
        return torch.where(is_constant, kinds.gather(1, index), -1)

    def __len__(self) -> int:
        return len(self.lengths)

    def table(self, skeletons: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The tokens of skeletons ``skeletons``, one after the other: for each, the
        skeleton's row in ``skeletons``, its position in it and its row of ``nodes`` (long)."""
        return _rows(self.nodes, self.offsets[skeletons], self.lengths[skeletons], self.width)

    def programs(self, skeletons: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The evaluated nodes of skeletons ``skeletons``, as :meth:`table` gives tokens."""
        return _rows(self.program, self.program_offsets[skeletons], self.program_lengths[skeletons], self.program_width)


def _unsorted(rows: torch.Tensor, order: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``rows``, the rows of skeletons ``order[0], order[1], ...`` one after the other
    (``lengths[i]`` rows for skeleton ``i``), in the order of the skeletons instead."""
    sorted_lengths = lengths[order]
    sorted_starts = torch.empty_like(lengths)
    sorted_starts[order] = sorted_lengths.cumsum(0) - sorted_lengths
    starts = lengths.cumsum(0) - lengths
    within = torch.arange(int(lengths.sum()), device=rows.device) - starts.repeat_interleave(lengths)
    return rows[sorted_starts.repeat_interleave(lengths) + within]


def _rows(table: torch.Tensor, offsets: torch.Tensor, lengths: torch.Tensor, width: int) -> tuple:
    """Rows ``offsets[i] .. offsets[i] + lengths[i]`` of ``table`` for every ``i`` (no
    length above ``width``): the ``i`` and position of each, and the rows (long)."""
    positions = torch.arange(width, device=table.device)
    row, position = (positions < lengths[:, None]).nonzero(as_tuple=True)
    return row, position, table[offsets[row] + position].long()


def _padded(values: np.ndarray, offsets: np.ndarray, fill: int) -> np.ndarray:
    """Rows ``values[offsets[i]:offsets[i + 1]]`` padded with ``fill``."""
    lengths = np.diff(offsets)
    width = int(lengths.max(initial=1))
    out = np.full((len(lengths), width), fill, dtype=values.dtype)
    positions = np.arange(width)
    mask = positions < lengths[:, None]
    out[mask] = values[offsets[0] : offsets[-1]]
    return out


#: Fusion codes of the node table: evaluated alone, ``c * x + c`` (at its ``add``),
#: ``c * U(A)`` (at its ``mul``), inside one of those two patterns.
FUSIONS = {"none": 0, "affine": 1, "scaled": 2, "inside": 3}


def _patterns(tokens: torch.Tensor, arities: torch.Tensor, variables: torch.Tensor, vocab) -> torch.Tensor:
    """The :data:`FUSIONS` code of every token of padded prefix skeletons."""
    n, width = tokens.shape
    padded = torch.cat([tokens, torch.full((n, 4), -1, dtype=tokens.dtype, device=tokens.device)], 1)
    ahead = [padded[:, k : k + width] for k in range(5)]
    add, mul, c = vocab.ids["add"], vocab.ids["mul"], vocab.constant_id
    affine = (ahead[0] == add) & (ahead[1] == mul) & (ahead[2] == c) & variables[ahead[3]] & (ahead[4] == c)
    scaled = (ahead[0] == mul) & (ahead[1] == c) & (arities[ahead[2]] == 1)
    fusion = torch.where(affine, FUSIONS["affine"], torch.where(scaled, FUSIONS["scaled"], FUSIONS["none"]))
    inside = torch.zeros_like(affine)
    for k in range(1, 5):  # the four tokens after an affine pattern's add, two after a scaled one's mul
        inside[:, k:] |= affine[:, :-k] | (scaled[:, :-k] & (k <= 2))
    return torch.where(inside, FUSIONS["inside"], fusion)


def _parse(tokens: torch.Tensor, arities: torch.Tensor, variable_of: torch.Tensor, vocab, kind_codes) -> tuple:
    """The ``nodes`` and ``program`` rows of padded prefix skeletons (see
    :class:`DeviceBank`), padded, and which positions are evaluated. The skeletons are
    read right to left with a stack of finished subtrees each (position-major tensors,
    so that each step reads and writes contiguous rows)."""
    n, width = tokens.shape
    fusion = _patterns(tokens, arities, variable_of >= 0, vocab)
    arity = arities[tokens].T.contiguous()
    fused = fusion.T.contiguous()
    height = torch.zeros((width, n), dtype=torch.long, device=tokens.device)
    second = torch.full((width, n), -1, dtype=torch.long, device=tokens.device)
    stack = torch.zeros((width + 1, n), dtype=torch.long, device=tokens.device)
    depth = torch.zeros((1, n), dtype=torch.long, device=tokens.device)
    for position in range(width - 1, -1, -1):
        a, f = arity[position : position + 1], fused[position : position + 1]
        top = stack.gather(0, (depth - 1).clamp(min=0))
        below = stack.gather(0, (depth - 2).clamp(min=0))
        h_top, h_below = height.gather(0, top), height.gather(0, below)
        h = torch.where(a == 2, torch.maximum(h_top, h_below) + 1, torch.where(a == 1, h_top + 1, 0))
        h = torch.where(f == FUSIONS["affine"], 0, torch.where(f == FUSIONS["scaled"], h_below, h))
        height[position] = h[0]
        second[position] = torch.where(a == 2, below, -1)[0]
        active = a >= 0
        depth = torch.where(active, depth - a + 1, depth)
        slot = (depth - 1).clamp(min=0)
        stack.scatter_(0, slot, torch.where(active, position, stack.gather(0, slot)))
    height, second = height.T, second.T
    positions = torch.arange(width, device=tokens.device).expand(n, width)
    parent_of_second = torch.full((n, width + 1), -1, dtype=torch.long, device=tokens.device)
    parent_of_second.scatter_(1, torch.where(second >= 0, second, width), positions)
    partner = torch.where(
        kind_codes == KIND_CODES[MULTIPLICATIVE],
        positions - 1,
        torch.where(kind_codes == KIND_CODES[ADDITIVE], parent_of_second[:, :width], -1),
    )
    is_constant = tokens == vocab.constant_id
    placeholder = torch.where(is_constant, is_constant.cumsum(1) - 1, -1)
    nodes = torch.stack([tokens, partner, placeholder], -1).to(torch.int16)
    # The program: evaluated nodes, their arguments as rows among the evaluated nodes.
    affine, scaled, plain = (fusion == FUSIONS[name] for name in ("affine", "scaled", "none"))
    live = (tokens >= 0) & ~(fusion == FUSIONS["inside"])
    row_of = live.cumsum(1) - 1

    def ahead(values: torch.Tensor, k: int) -> torch.Tensor:
        return torch.cat([values[:, k:], torch.full((n, k), -1, dtype=values.dtype, device=values.device)], 1)

    arity_here = arities[tokens]
    operator = torch.where(scaled, ahead(tokens, 2), torch.where(plain & (arity_here > 0), tokens, -1))
    first = torch.where(operator >= 0, ahead(row_of, 1), -1)
    first = torch.where(scaled, ahead(row_of, 3), first)
    second_row = torch.where(plain & (arity_here == 2), row_of.gather(1, second.clamp(min=0)), -1)
    scale = torch.where(scaled, ahead(placeholder, 1), torch.where(affine, ahead(placeholder, 2), -1))
    scale = torch.where(plain & is_constant, placeholder, scale)
    offset = torch.where(affine, ahead(placeholder, 4), -1)
    variable = torch.where(affine, variable_of[ahead(tokens, 3)], torch.where(plain, variable_of[tokens], -1))
    program = torch.stack([tokens, operator, height, first, second_row, scale, offset, variable], -1)
    return nodes, program.to(torch.int16), live


class DeviceSampler:
    """Batches of instantiated skeletons, made on ``device`` (see the module docstring).

    Parameters
    ----------
    bank : SkeletonBank
    config : BatchConfig
    n_variables : int, optional
        Model inputs (default: the bank's variables).
    max_length : int, default=60
        The model's sequence length: targets (with start and end tokens) longer than
        this are redrawn.
    device : str or torch.device, default="cpu"
    dtype : torch.dtype, default=torch.float32
        Precision of the points and values.
    """

    def __init__(
        self,
        bank: SkeletonBank,
        config: BatchConfig,
        n_variables: int | None = None,
        max_length: int = 60,
        device="cpu",
        dtype: torch.dtype = torch.float32,
    ):
        self.n_variables = model_variables(bank, n_variables)
        self.config = config
        self.max_length = max_length
        self.device = torch.device(device)
        self.dtype = dtype
        self.vocab = bank.vocab
        # Bank token id -> the model's (they differ when the model reads more variables).
        model_ids = model_vocabulary(bank, self.n_variables).ids
        self._model_id = torch.as_tensor([model_ids[token] for token in self.vocab.tokens], device=self.device)
        self.bank = DeviceBank(bank, self.n_variables, self.device)
        self._cumulative = None
        cumulative = cumulative_counts(bank, config)
        if cumulative is not None:
            self._cumulative, self._total = torch.as_tensor(cumulative, device=self.device), cumulative[-1].item()
        tokens = self.vocab.tokens
        self._operators = [token for token in TORCH_OPERATORS if token in self.vocab.ids]
        operator_of = np.full(len(tokens) + 1, -1)  # id -1 (none): the last entry
        number_of = np.zeros(len(tokens) + 1)
        for i, token in enumerate(tokens):
            if token in self._operators:
                operator_of[i] = self._operators.index(token)
            elif token != CONSTANT and variable_index(token) is None and self.vocab.arities[i] == 0:
                number_of[i] = float(token)
        self._operator_of = torch.as_tensor(operator_of, device=self.device)
        self._number_of = torch.as_tensor(number_of, dtype=dtype, device=self.device)
        neutral = [NEUTRAL_VALUE[kind] for kind in (MULTIPLICATIVE, ADDITIVE, EXISTING)]
        self._neutral = torch.as_tensor([*neutral, 0.0], dtype=dtype, device=self.device)  # kind -1: padding

    # --- draws ---------------------------------------------------------------------

    def draw_skeletons(self, n: int, generator: torch.Generator) -> torch.Tensor:
        """``n`` bank indices, drawn as ``config.weighting`` says."""
        if self._cumulative is None:
            return torch.randint(len(self.bank), (n,), generator=generator, device=self.device)
        if self.config.frequency_power == 1:
            position = torch.randint(self._total, (n,), generator=generator, device=self.device)
        else:
            position = torch.rand(n, generator=generator, device=self.device, dtype=torch.float64) * self._total
        return torch.searchsorted(self._cumulative, position, right=True)

    def draw_points_count(self, generator: torch.Generator) -> int:
        """The number of points drawn for a batch."""
        low, high = self.config.min_points, self.config.max_points
        return int(torch.randint(low, high + 1, (1,), generator=generator, device=self.device))

    def draw_constants(self, skeletons: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Placeholder values ``(n, K)`` and which placeholders the target keeps."""
        config = self.config
        kinds = self.bank.kinds[skeletons].long()
        present = kinds >= 0
        n_total = self.bank.n_placeholders[skeletons]
        most = n_total.clamp(max=config.max_constants)
        n_sampled = (torch.rand(len(skeletons), generator=generator, device=self.device) * (most + 1)).long()
        n_sampled = torch.minimum(n_sampled, most)
        keys = torch.rand(kinds.shape, generator=generator, device=self.device).masked_fill(~present, 2.0)
        chosen = keys.argsort(1).argsort(1) < n_sampled[:, None]
        low, high = config.constant_range
        values = low + (high - low) * torch.rand(kinds.shape, generator=generator, device=self.device, dtype=self.dtype)
        if config.constant_signs == "both":
            signs = torch.randint(2, kinds.shape, generator=generator, device=self.device) * 2 - 1
            values = values * signs
        values = torch.where(chosen, values, self._neutral[kinds])
        return values, chosen | (kinds == KIND_CODES[EXISTING])

    def draw_supports(self, n: int, generator: torch.Generator) -> torch.Tensor:
        """Per equation and variable, the support ``(low, high)``: shape ``(n, 2, d)``."""
        low, high = self.config.support_range
        bounds = low + (high - low) * torch.rand(
            (n, 2, self.n_variables), generator=generator, device=self.device, dtype=self.dtype
        )
        return bounds.sort(1).values

    def draw_points(
        self, skeletons: torch.Tensor, supports: torch.Tensor, n_points: int, generator: torch.Generator
    ) -> torch.Tensor:
        """Points ``(n, n_points, d)`` uniform in the supports; unused variables 0."""
        shape = (len(skeletons), n_points, self.n_variables)
        unit = torch.rand(shape, generator=generator, device=self.device, dtype=self.dtype)
        X = supports[:, :1] + (supports[:, 1:] - supports[:, :1]) * unit
        return torch.where(self.bank.uses[skeletons][:, None, :], X, 0.0)

    # --- evaluation and targets ------------------------------------------------------

    def evaluate(self, program: tuple, constants: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """Values ``(n, N)`` of the skeletons whose :meth:`DeviceBank.programs` is
        ``program``, with placeholder values ``constants`` ``(n, K)`` at points ``X``
        ``(n, N, d)``; NaN where undefined."""
        row, _, table = program
        sizes = row.bincount(minlength=len(X))
        roots = sizes.cumsum(0) - sizes
        bank = DeviceBank
        scale, variable = table[:, bank.SCALE], table[:, bank.VARIABLE]
        multiplier = constants[row, scale.clamp(min=0)]
        # Leaves: placeholders and integers, then the variables (c * x + c where fused).
        scalar = torch.where(scale >= 0, multiplier, self._number_of[table[:, bank.TOKEN]].to(constants.dtype))
        values = scalar[:, None].repeat(1, X.shape[1])
        (leaves,) = (variable >= 0).nonzero(as_tuple=True)
        columns = X.transpose(1, 2).reshape(-1, X.shape[1])
        column = columns.index_select(0, row[leaves] * X.shape[2] + variable[leaves])
        offset = table[leaves, bank.OFFSET]
        fused = (offset >= 0)[:, None]
        affine = multiplier[leaves, None] * column + constants[row[leaves], offset.clamp(min=0)][:, None]
        values.index_copy_(0, leaves, torch.where(fused, affine, column))
        # Operators: one call per (height, operator) group, lower heights first.
        operator = self._operator_of[table[:, bank.OPERATOR]]
        n_operators = len(self._operators)
        key = torch.where(operator >= 0, table[:, bank.HEIGHT] * n_operators + operator, -1)
        order = key.argsort(stable=True)
        counts = torch.bincount(key + 1, minlength=1).tolist()
        start = roots[row]
        first = (start + table[:, bank.FIRST])[order]
        second = (start + table[:, bank.SECOND])[order]
        multiplier = torch.where(scale >= 0, multiplier, 1.0)[order, None]
        done = counts[0]
        for group, count in enumerate(counts[1:]):
            if not count:
                continue
            members = slice(done, done + count)
            done += count
            token_name = self._operators[group % n_operators]
            function = TORCH_OPERATORS[token_name]
            if OPERATORS[token_name].arity == 2:
                result = function(values.index_select(0, first[members]), values.index_select(0, second[members]))
            else:
                result = multiplier[members] * function(values.index_select(0, first[members]))
            values.index_copy_(0, order[members], result)
        return values[roots]

    def targets(self, nodes: tuple, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids of the skeletons whose :meth:`DeviceBank.table` is ``nodes``,
        instantiated (the placeholders ``keep`` does not keep removed, as
        :func:`~nesymres_sklearn.expression.placeholders.remove_placeholders` does),
        padded with -1, and their lengths."""
        row, position, table = nodes
        placeholder, partner = table[:, DeviceBank.PLACEHOLDER], table[:, DeviceBank.PARTNER]
        dropped = (placeholder >= 0) & (partner >= 0) & ~keep[row, placeholder.clamp(min=0)]
        removed = torch.ones((len(keep), int(position.max()) + 1), dtype=torch.bool, device=self.device)
        removed[row, position] = dropped
        removed[row[dropped], partner[dropped]] = True
        tokens = torch.full(removed.shape, -1, dtype=torch.long, device=self.device)
        tokens[row, position] = table[:, DeviceBank.TOKEN]
        order = removed.to(torch.int8).argsort(dim=1, stable=True)
        n_kept = (~removed).sum(1)
        ids = tokens.gather(1, order)
        return torch.where(torch.arange(removed.shape[1], device=self.device) < n_kept[:, None], ids, -1), n_kept

    def target_lengths(self, skeletons: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The lengths :meth:`targets` gives: each placeholder dropped takes its operator along."""
        kinds = self.bank.kinds[skeletons]
        droppable = (kinds >= 0) & (kinds != KIND_CODES[EXISTING])
        return self.bank.lengths[skeletons] - 2 * (droppable & ~keep).sum(1)

    # --- batches -------------------------------------------------------------------

    def batch(self, generator: torch.Generator, batch_size: int | None = None) -> dict:
        """A batch on the device, laid out as :meth:`pretraining.data.EquationSampler.batch`'s:
        ``codes`` int16 ``(B, N, d + 1)``, ``targets`` long ``(B, T)``.

        Each equation follows the host's sequence of trials (its skeleton's up to 4
        draws of constants and points, then a new skeleton), but the trials it may need
        are evaluated together: the first round tries every equation once; each later
        round tries the rest of a pending equation's current skeleton and ``fresh`` new
        skeletons 4 times each, and the equation takes the first trial that the
        sequence would have taken. Later trials are discarded, so the result has the
        distribution of the sequence, in a few rounds.
        """
        config = self.config
        size = batch_size or config.batch_size
        n_points = self.draw_points_count(generator)
        needed = max(1, int(np.ceil(config.min_valid_fraction * n_points)))
        current = self.draw_skeletons(size, generator)
        remaining = torch.full((size,), TRIES_PER_SKELETON, device=self.device)
        skeletons = torch.empty_like(current)
        X = torch.empty((size, n_points, self.n_variables), dtype=self.dtype, device=self.device)
        valid = torch.empty((size, n_points), dtype=torch.bool, device=self.device)
        y = torch.empty((size, n_points), dtype=self.dtype, device=self.device)
        keep = torch.zeros((size, self.bank.kinds.shape[1]), dtype=torch.bool, device=self.device)
        pending = torch.arange(size, device=self.device)
        first_round = True
        while len(pending):
            fresh = 0 if first_round else max(1, min(_MAX_FRESH, size // (4 * len(pending))))
            new = self.draw_skeletons(len(pending) * fresh, generator).view(len(pending), fresh)
            groups = torch.cat([current[pending, None], new], 1)
            trial = torch.arange(TRIES_PER_SKELETON, device=self.device)
            tried = torch.ones((len(pending), fresh + 1, TRIES_PER_SKELETON), dtype=torch.bool, device=self.device)
            tried[:, 0] = trial < (1 if first_round else remaining[pending, None])
            (flat,) = tried.view(-1).nonzero(as_tuple=True)
            slot, group = flat // tried[0].numel(), flat % tried[0].numel() // TRIES_PER_SKELETON
            drawn = groups[slot, group]
            constants, kept = self.draw_constants(drawn, generator)
            supports = self.draw_supports(len(drawn), generator)
            points = self.draw_points(drawn, supports, n_points, generator)
            values = self.evaluate(self.bank.programs(drawn), constants, points)
            good = torch.isfinite(values) & (values.abs() <= config.max_abs_y)
            target_lengths = self.target_lengths(drawn, kept)
            enough = _scattered(tried, flat, good.sum(1) >= needed, False)
            short = _scattered(tried, flat, target_lengths + 2 <= self.max_length, False)
            # Per group, the first trial with enough points ends it: accepted if short.
            first = enough.to(torch.int8).argmax(2, keepdim=True)
            accepted = enough.any(2) & short.gather(2, first)[..., 0]
            done = accepted.any(1)
            row = _scattered(tried, flat, torch.arange(len(drawn), device=self.device), -1)
            taken = accepted.to(torch.int8).argmax(1, keepdim=True)
            (finished,) = done.nonzero(as_tuple=True)
            choice = row.gather(2, first).squeeze(2).gather(1, taken)[finished, 0]
            slots = pending[finished]
            skeletons[slots], keep[slots] = drawn[choice], kept[choice]
            X[slots], y[slots], valid[slots] = points[choice], values[choice], good[choice]
            if first_round:
                remaining[pending] = torch.where(enough[:, 0, 0], 0, remaining[pending] - 1)
            else:
                remaining[pending] = 0
            current[pending] = groups[:, -1]
            pending = pending[done.to(torch.int8).argsort(stable=True)[: len(pending) - len(finished)]]
            first_round = False
        length = int(valid.sum(1).min())
        first = valid.to(torch.int8).argsort(dim=1, descending=True, stable=True)[:, :length]
        X = X.gather(1, first[..., None].expand(-1, -1, self.n_variables))
        y = y.gather(1, first)
        codes = half_codes(torch.cat([X, y[..., None]], -1))
        ids, n_kept = self.targets(self.bank.table(skeletons), keep)
        targets = torch.full((size, int(n_kept.max()) + 2), self.vocab.pad_id, dtype=torch.long, device=self.device)
        targets[:, 0] = self.vocab.sos_id
        width = targets.shape[1] - 2
        targets[:, 1:-1] = torch.where(ids >= 0, self._model_id[ids.clamp(min=0)], self.vocab.pad_id)[:, :width]
        targets[torch.arange(size, device=self.device), n_kept + 1] = self.vocab.eos_id
        return {"codes": codes, "targets": targets}


def _scattered(shape_of: torch.Tensor, flat: torch.Tensor, values: torch.Tensor, fill) -> torch.Tensor:
    """A tensor shaped as ``shape_of``, ``fill`` but for ``values`` at the flat indices ``flat``."""
    out = torch.full((shape_of.numel(),), fill, dtype=values.dtype, device=values.device)
    return out.index_put_((flat,), values).view(shape_of.shape)


class DeviceBatchStream:
    """Batches ``start, start + 1, ...`` (to ``stop``, or forever) of one stream, made
    on the sampler's device; batch ``i`` is ``sampler.batch(batch_generator(seed, stream, i))``."""

    def __init__(self, sampler: DeviceSampler, seed: int, stream: int = 0, start: int = 0, stop: int | None = None):
        self.sampler = sampler
        self.seed = seed
        self.stream = stream
        self.start = start
        self.stop = stop

    def batch(self, index: int) -> dict:
        return self.sampler.batch(batch_generator(self.seed, self.stream, index, self.sampler.device))

    def __iter__(self):
        index = self.start
        while self.stop is None or index < self.stop:
            yield self.batch(index)
            index += 1
