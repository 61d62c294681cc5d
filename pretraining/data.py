"""Training batches: skeletons from a bank instantiated as in appendix B of the paper.

For each equation of a batch: a skeleton is drawn from the bank; ``n_c`` is drawn
uniformly in ``0..min(3, N_c)`` (``N_c`` placeholders), ``n_c`` placeholders get values
from U(1, 5) and the others their neutral value; each variable gets a support
``S1 < S2`` from U(-10, 10) and points uniform in it; variables the skeleton does not
use are 0. The equation is evaluated with
:class:`~nesymres_sklearn.expression.program.PrefixProgram` and points with a
non-finite ``y`` or ``|y| > 1000`` are dropped. The number of points drawn varies by
batch; every equation of the batch is then cut to the smallest
number of valid points. The target is the skeleton of the instantiated equation: the
attached skeleton without its neutral placeholders.

A batch carries the points as their 16-bit half-precision codes (``codes``, int16,
``(B, N, d + 1)``), not as the encoder's ``(B, N, 16 (d + 1))`` float32 input: a
sixteenth of the bytes to pass from a loader worker and copy to the GPU.
:func:`points_from_codes` expands them where the model runs, to exactly what
:func:`~nesymres_sklearn.network.encoding.encode_points` gives.

Batch ``i`` of rank ``r`` is a pure function of ``(seed, r, i)``. A DataLoader with
``w`` workers lets worker ``k`` produce batches ``k, k + w, ...`` and yields them in
order, so the stream does not depend on the number of workers and resuming from
batch ``i`` reproduces it exactly.
"""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from nesymres_sklearn.expression.placeholders import EXISTING, neutral_constants, remove_placeholders
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.expression.tokens import variable_index, variable_token
from nesymres_sklearn.network.encoding import N_BITS, half_bits, point_columns
from nesymres_sklearn.network.vocabulary import Vocabulary

from .bank import SkeletonBank

WEIGHTINGS = ("frequency", "uniform")
CONSTANT_SIGNS = ("positive", "both")


@dataclass
class BatchConfig:
    """How equations are instantiated (defaults: the paper's).

    The ``data`` section of :class:`pretraining.config.TrainConfig`. The target length
    limit is the model's ``max_length``, given to :class:`EquationSampler`.

    Parameters
    ----------
    batch_size : int, default=150
        Equations per batch (per process when training with DDP).
    min_points, max_points : int, default=100, 500
        Points drawn per equation, uniformly in this range for each batch.
    min_valid_fraction : float, default=0.5
        An equation keeps at least this fraction of its points valid, or it is
        redrawn (new constants and support, then a new skeleton).
    max_constants : int, default=3
        At most this many placeholders get a sampled value; the others are neutral.
    constant_range : tuple, default=(1.0, 5.0)
        Sampled placeholder values are uniform in this range.
    constant_signs : {"positive", "both"}, default="positive"
        "both" flips the sign of each sampled value with probability 1/2, so the
        network also sees negative slopes, offsets and exponents.
    support_range : tuple, default=(-10.0, 10.0)
        Each variable's support ``S1 < S2`` is drawn uniformly in this range.
    max_abs_y : float, default=1000.0
        Points with a larger ``|y|`` are dropped.
    weighting : {"frequency", "uniform"}, default="frequency"
        How skeletons are drawn: in proportion to how often the generator produced
        them (the paper's data, where short skeletons are the most frequent), or
        uniformly over the bank's unique skeletons. Banks without counts are uniform.
    frequency_power : float, default=1.0
        With ``weighting="frequency"``, skeletons are drawn in proportion to
        ``count ** frequency_power``: below 1 the rare skeletons (most of a large
        bank) are drawn more often while the common ones stay frequent; 0 is uniform.
    """

    batch_size: int = 150
    min_points: int = 100
    max_points: int = 500
    min_valid_fraction: float = 0.5
    max_constants: int = 3
    constant_range: tuple[float, float] = (1.0, 5.0)
    constant_signs: str = field(default="positive", metadata={"choices": CONSTANT_SIGNS})
    support_range: tuple[float, float] = (-10.0, 10.0)
    max_abs_y: float = 1000.0
    weighting: str = field(default="frequency", metadata={"choices": WEIGHTINGS})
    frequency_power: float = 1.0

    def __post_init__(self):
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"Unknown weighting {self.weighting!r}; choose from {WEIGHTINGS}.")
        if self.constant_signs not in CONSTANT_SIGNS:
            raise ValueError(f"Unknown constant_signs {self.constant_signs!r}; choose from {CONSTANT_SIGNS}.")
        if not 0 <= self.frequency_power <= 1:
            raise ValueError(f"frequency_power must be in [0, 1], got {self.frequency_power}.")
        self.constant_range = tuple(self.constant_range)
        self.support_range = tuple(self.support_range)
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1.")
        if not 1 <= self.min_points <= self.max_points:
            raise ValueError("Need 1 <= min_points <= max_points.")
        for name in ("constant_range", "support_range"):
            bounds = getattr(self, name)
            if len(bounds) != 2 or not bounds[0] <= bounds[1]:
                raise ValueError(f"{name} must be (low, high) with low <= high.")

    def to_dict(self) -> dict:
        return asdict(self)


#: Draws of constants and points a skeleton gets before another one is drawn.
TRIES_PER_SKELETON = 4
_COMPILED_SKELETONS = 100_000


def model_variables(bank: SkeletonBank, n_variables: int | None) -> int:
    """The model inputs a sampler of ``bank`` fills (default: the bank's variables);
    errors for an empty bank or a bank with more variables than the model."""
    if len(bank) == 0:
        raise ValueError(f"The {bank.split} split of {bank.folder} is empty.")
    n_variables = n_variables or bank.n_variables
    if bank.n_variables > n_variables:
        raise ValueError(f"The bank has {bank.n_variables} variables, the model {n_variables}.")
    return n_variables


def model_vocabulary(bank: SkeletonBank, n_variables: int) -> Vocabulary:
    """The vocabulary of a model of ``n_variables`` inputs that reads ``bank``: the bank's,
    its variables ``x_1..x_k`` replaced in place by ``x_1..x_n`` (a model of 8 variables
    validated on a bank of 3 gets its own token ids in the targets)."""
    if n_variables == bank.n_variables:
        return bank.vocab
    tokens = bank.vocab.tokens
    first = next(i for i, token in enumerate(tokens) if variable_index(token) is not None)
    others = [token for token in tokens if variable_index(token) is None]
    return Vocabulary((*others[:first], *(variable_token(i) for i in range(n_variables)), *others[first:]))


def cumulative_counts(bank: SkeletonBank, config: BatchConfig) -> np.ndarray | None:
    """Cumulative (tempered) counts of the bank's skeletons for ``"frequency"``
    weighting; ``None`` for uniform draws."""
    if config.weighting != "frequency" or bank.counts is None:
        return None
    power = config.frequency_power
    return np.cumsum(bank.counts if power == 1 else bank.counts**power)


class EquationSampler:
    """Instantiates bank skeletons into encoded points and target token ids.

    Parameters
    ----------
    bank : SkeletonBank
    config : BatchConfig
    n_variables : int, optional
        Model inputs (default: the bank's variables).
    max_length : int, default=60
        The model's sequence length: targets (with start and end tokens) longer than
        this are skipped.
    """

    def __init__(self, bank: SkeletonBank, config: BatchConfig, n_variables: int | None = None, max_length: int = 60):
        self.n_variables = model_variables(bank, n_variables)
        self.bank = bank
        self.config = config
        self.max_length = max_length
        self.vocab = model_vocabulary(bank, self.n_variables)
        self._variable_ids = np.array([bank.vocab.ids.get(variable_token(i), -1) for i in range(self.n_variables)])
        # Compiled skeletons, reused every time an index is drawn again.
        self._skeleton = lru_cache(maxsize=_COMPILED_SKELETONS)(self._compile)
        self._cumulative_counts = cumulative_counts(bank, config)

    def draw_index(self, rng: np.random.Generator) -> int:
        """A bank index, drawn as ``config.weighting`` says."""
        if self._cumulative_counts is None:
            return int(rng.integers(len(self.bank)))
        total = self._cumulative_counts[-1]
        # Integer counts keep the exact integer draw; tempered ones are floats.
        position = rng.integers(total) if self.config.frequency_power == 1 else rng.random() * total
        return int(np.searchsorted(self._cumulative_counts, position, side="right"))

    def __getstate__(self):  # the cache holds closures: rebuild it in the new process
        state = self.__dict__.copy()
        del state["_skeleton"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._skeleton = lru_cache(maxsize=_COMPILED_SKELETONS)(self._compile)

    def _compile(self, index: int):
        """Tokens, placeholder kinds, compiled program, which kinds are pre-existing,
        and which variables are absent, for bank entry ``index``."""
        tokens, kinds = self.bank[index]
        ids = self.bank.ids(index)
        absent = ~(ids[:, None] == self._variable_ids).any(axis=0)
        existing = np.array([kind == EXISTING for kind in kinds], dtype=bool)
        return tokens, kinds, PrefixProgram(tokens), existing, absent

    def equation(self, rng: np.random.Generator, n_points: int):
        """One instantiated equation: ``(X (n, d), y (n,), target tokens)``, all points valid.

        ``n`` is at least ``min_valid_fraction * n_points``.
        """
        config = self.config
        while True:
            index = self.draw_index(rng)
            tokens, kinds, program, existing, absent = self._skeleton(index)
            for _ in range(TRIES_PER_SKELETON):
                values, keep = self.constants(rng, kinds, existing)
                bounds = self.support(rng)
                X = rng.uniform(bounds[0], bounds[1], size=(n_points, self.n_variables))
                X[:, absent] = 0.0
                y = program(X, values)
                valid = np.isfinite(y) & (np.abs(y) <= config.max_abs_y)
                if valid.sum() >= max(1, int(np.ceil(config.min_valid_fraction * n_points))):
                    target = remove_placeholders(tokens, kinds, keep)
                    if len(target) + 2 > self.max_length:
                        break
                    return X[valid], y[valid], target

    def constants(self, rng: np.random.Generator, kinds, existing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Placeholder values (``kinds``; ``existing`` marks the pre-existing ones) and
        which placeholders the target keeps."""
        n_total = len(kinds)
        values = neutral_constants(kinds)
        n_sampled = int(rng.integers(0, min(self.config.max_constants, n_total) + 1))
        chosen = rng.choice(n_total, size=n_sampled, replace=False) if n_sampled else []
        values[chosen] = rng.uniform(*self.config.constant_range, size=n_sampled)
        if self.config.constant_signs == "both":
            values[chosen] *= rng.choice((-1.0, 1.0), size=n_sampled)
        keep = existing.copy()
        keep[chosen] = True
        return values, keep

    def support(self, rng: np.random.Generator) -> np.ndarray:
        """Each variable's support: ``(2, d)``, lows then highs."""
        return np.sort(rng.uniform(*self.config.support_range, size=(2, self.n_variables)), axis=0)

    def points_count(self, rng: np.random.Generator) -> int:
        """The number of points drawn for a batch."""
        return int(rng.integers(self.config.min_points, self.config.max_points + 1))

    def batch(self, rng: np.random.Generator, batch_size: int | None = None) -> dict:
        """A batch: ``codes`` int16 (B, N, d + 1), the half-precision codes of the points
        (:func:`points_from_codes` gives the encoder input), ``targets`` long (B, T).

        ``targets`` are ``[sos] + tokens + [eos]`` padded with the pad id; the decoder
        reads ``targets[:, :-1]`` and predicts ``targets[:, 1:]``.
        """
        config = self.config
        batch_size = batch_size or config.batch_size
        n_points = self.points_count(rng)
        equations = [self.equation(rng, n_points) for _ in range(batch_size)]
        length = min(len(y) for _, y, _ in equations)
        X = np.stack([X[:length] for X, _, _ in equations])
        y = np.stack([y[:length] for _, y, _ in equations])
        codes = half_bits(point_columns(X, y, self.n_variables)).view(np.int16)
        ids = [[self.vocab.sos_id] + self.vocab.encode(t) + [self.vocab.eos_id] for _, _, t in equations]
        targets = np.full((batch_size, max(map(len, ids))), self.vocab.pad_id, dtype=np.int64)
        for row, sequence in enumerate(ids):
            targets[row, : len(sequence)] = sequence
        return {"codes": torch.from_numpy(codes), "targets": torch.from_numpy(targets)}


def points_from_codes(codes: torch.Tensor) -> torch.Tensor:
    """The encoder input of a batch's ``codes`` (int16 half-precision codes, shape
    ``(..., n, d + 1)``), on their device: float32 ``(..., n, 16 (d + 1))`` in {-1, +1},
    bit for bit what ``encode_points`` (``"ieee-half"``) gives for the same points."""
    # arange runs on the device: no copy from the host, which would wait for the GPU.
    shifts = torch.arange(N_BITS - 1, -1, -1, dtype=torch.int32, device=codes.device)
    bits = ((codes.to(torch.int32)[..., None] & 0xFFFF) >> shifts) & 1
    return (bits.to(torch.float32) * 2.0 - 1.0).flatten(-2)


def batch_rng(seed: int, stream: int, index: int) -> np.random.Generator:
    """The generator of batch ``index`` of stream ``stream`` (e.g. the rank)."""
    return np.random.default_rng([seed, stream, index])


class BatchStream(IterableDataset):
    """Batches ``start, start + 1, ...`` (to ``stop``, or forever) of one stream.

    With DataLoader workers, worker ``k`` of ``w`` makes batches ``start + k``,
    ``start + k + w``, ...; the DataLoader returns them in index order.
    """

    def __init__(self, sampler: EquationSampler, seed: int, stream: int = 0, start: int = 0, stop: int | None = None):
        self.sampler = sampler
        self.seed = seed
        self.stream = stream
        self.start = start
        self.stop = stop

    def batch(self, index: int) -> dict:
        return self.sampler.batch(batch_rng(self.seed, self.stream, index))

    def __iter__(self):
        info = get_worker_info()
        worker, n_workers = (0, 1) if info is None else (info.id, info.num_workers)
        index = self.start + worker
        while self.stop is None or index < self.stop:
            yield self.batch(index)
            index += n_workers


def seed_worker(worker_id: int) -> None:
    """DataLoader ``worker_init_fn``: per-worker torch seed (batches use their own RNG).

    Workers ignore SIGTERM and SIGINT: when a whole process group is signalled
    (Ctrl-C, ``kill -- -PGID``, a cluster scheduler), the training process alone
    handles it, checkpoints, and then shuts its workers down.
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    info = get_worker_info()
    torch.manual_seed(info.seed % 2**63)


def batch_loader(stream: BatchStream, num_workers: int = 0, pin_memory: bool = False) -> DataLoader:
    """A DataLoader over whole batches of ``stream`` with ``num_workers`` processes;
    ``pin_memory`` (for a GPU) lets the copies to the device run asynchronously."""
    return DataLoader(
        stream,
        batch_size=None,
        num_workers=num_workers,
        pin_memory=pin_memory,
        worker_init_fn=seed_worker if num_workers else None,
        prefetch_factor=4 if num_workers else None,
        persistent_workers=False,
    )
