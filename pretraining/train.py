"""Training loop: CPU, one GPU, or many GPUs/nodes with DDP launched by ``torchrun``.

Adam (1e-4 by default, no schedule) on the cross-entropy of the skeleton tokens, with
gradient clipping; bf16 (or fp16 with loss scaling) autocast on CUDA. A run ends after
``max_steps``, or, with ``max_time``, at a wall-clock deadline: its warmup, constant
and cool-down schedule is then planned in time (see
:class:`~pretraining.config.ScheduleConfig`). Rank 0 writes
``checkpoint.pt`` atomically every ``checkpoint_every`` steps, at the end, and when
any rank receives SIGTERM (or SIGINT; at the next control step), keeping the one before as
``checkpoint-previous.pt``; a restart with the same ``out`` folder resumes exactly
(model, optimiser, scaler, RNG states and data position), from the previous
checkpoint when the latest cannot be read. A restart with settings the checkpoint
cannot resume (another model) is refused before anything is written to the folder.
Validation loss and token accuracy on the held-out split go to ``log.csv`` with the
training loss. At the end the model is exported in the Hub format to ``out/model``;
``summary.json`` is strict JSON (a loss never measured is ``null``).

Host work per step is kept small, so that a GPU is not left waiting: batches hold
the points' 16-bit codes (:mod:`pretraining.data`), pinned and copied asynchronously
and expanded on the device; the optimiser is fused AdamW/Adam; the host reads the
loss, the clock and the stop signals only on *control steps* (a log row, a
validation, a checkpoint or the end), so nothing waits for the GPU in between;
``--compile`` runs the loss through ``torch.compile`` (dynamic shapes). With
``--data-source device`` the batches are made on the training device instead
(:mod:`pretraining.device_data`: no loader workers, no copies; the generator waits
for the GPU a few times per batch). Each log row says which share of its wall time
went to making or waiting for batches (``data_fraction``) and, on CUDA, how busy the
GPU was (``gpu_utilisation``: the mean of ``nvidia-smi``'s samples, one a second).

Threads: DataLoader workers compute with one torch thread each (as torch's DataLoader
sets them), and the training process with ``--num-threads``, else ``OMP_NUM_THREADS``
when set (``torchrun`` sets it to 1 for several processes per node), else the cores
its workers leave: ``max(1, cores - num_workers)``. More threads than cores make
throughput swing by an order of magnitude.

Command line::

    python -m pretraining.train --bank bank --out run --model-size small --max-steps 2000
    torchrun --nproc_per_node 4 -m pretraining.train --config run.yaml

Settings are those of :class:`pretraining.config.TrainConfig`, one option each;
``--config`` reads a YAML file of them (in sections, or by option name), and
command-line options override it.

:func:`train` runs the stages in order: :func:`setup` (device, DDP, threads),
:func:`make_data` (banks, model config, samplers), :func:`make_state` (model,
optimiser, grad scaler), :func:`restore` (a checkpoint, or initial weights),
:func:`start_run` (the run folder and ``train_config.json``), :func:`run_steps` (the
step loop, with :func:`~pretraining.evaluation.validate` and checkpoints) and
:func:`finish` (checksums, export, summary).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import gc
import json
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from nesymres_sklearn.network.model import ModelConfig, NeSymReSModel, config_for_size
from nesymres_sklearn.network.weights import load_folder, resolve_device

from .bank import SkeletonBank
from .checkpoint import (
    CHECKPOINT,
    PREVIOUS_CHECKPOINT,
    load_run_checkpoint,
    rng_states,
    save_checkpoint,
    set_rng_states,
)
from .config import TrainConfig, config_from_args, load_train_config  # noqa: F401 (re-exported)
from .data import BatchStream, EquationSampler, batch_loader, points_from_codes
from .device_data import DeviceBatchStream, DeviceSampler
from .evaluation import validate
from .export import export_model
from .runtime import (
    GpuSampler,
    Ranks,
    autocast,
    autocast_dtype,
    available_cores,
    process_device,
    setup_distributed,
    sum_over_ranks,
    training_threads,
)
from .widen import widen, widening

logger = logging.getLogger(__name__)

CONFIG_FILE = "train_config.json"
LOG = "log.csv"
LOG_FIELDS = (
    "step",
    "equations",
    "train_loss",
    "val_loss",
    "val_accuracy",
    "learning_rate",
    "equations_per_second",
    "elapsed_seconds",
    "data_fraction",
    "gpu_utilisation",
)


@dataclass
class Runtime:
    """Where this process trains."""

    ranks: Ranks
    device: torch.device
    autocast_dtype: torch.dtype | None
    out: Path
    #: Seconds of a monotonic clock; tests inject one (the schedule of ``max_time``
    #: reads it once per step).
    clock: Callable[[], float] = field(default=time.perf_counter)


@dataclass
class Data:
    """The model configuration and the samplers of the training and held-out splits
    (validation batches are always made on the host)."""

    model_config: ModelConfig
    train: EquationSampler | DeviceSampler
    validation: EquationSampler | None


@dataclass
class State:
    """Everything a checkpoint restores."""

    model: NeSymReSModel
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    step: int = 0
    equations: int = 0
    elapsed_seconds: float = 0.0


# --- setup -------------------------------------------------------------------------


def setup(config: TrainConfig, clock: Callable[[], float] = time.perf_counter) -> Runtime:
    """Resolve the device, join the DDP group and set the number of torch threads;
    writes nothing."""
    if not config.run.bank or not config.run.out:
        raise ValueError("A training run needs a bank folder (run.bank) and a run folder (run.out).")
    requested = resolve_device(config.run.device)
    ranks = setup_distributed(requested)
    device = process_device(requested, ranks.local_rank)
    workers = config.run.num_workers if config.run.data_source == "host" else 0
    threads = training_threads(workers, available_cores(), config.run.num_threads, os.environ.get("OMP_NUM_THREADS"))
    if threads is not None:
        torch.set_num_threads(threads)
    return Runtime(ranks, device, autocast_dtype(config.optimisation.precision, device), Path(config.run.out), clock)


# --- data --------------------------------------------------------------------------


def make_data(config: TrainConfig, device: torch.device | None = None) -> Data:
    """Open the bank's splits and make the samplers for the model the bank calls for;
    with ``run.data_source="device"`` the training batches are made on ``device``."""
    train_bank = SkeletonBank(config.run.bank, "train", limit=config.run.bank_size)
    heldout_bank = SkeletonBank(config.run.bank, "heldout")
    model_config = config_for_size(config.model.size, train_bank.n_variables, **config.model.overrides)
    options = dict(n_variables=model_config.n_variables, max_length=model_config.max_length)
    if config.run.data_source == "device":
        train = DeviceSampler(train_bank, config.data, device=device or torch.device("cpu"), **options)
    else:
        train = EquationSampler(train_bank, config.data, **options)
    validates = len(heldout_bank) and config.schedule.eval_every
    return Data(model_config, train, EquationSampler(heldout_bank, config.data, **options) if validates else None)


# --- model and optimiser -----------------------------------------------------------


def make_state(config: TrainConfig, model_config: ModelConfig, runtime: Runtime) -> State:
    """A new model (initialised from ``run.seed``), its optimiser (fused: one kernel
    for all parameters, on CPU and CUDA) and grad scaler."""
    torch.manual_seed(config.run.seed)
    model = NeSymReSModel(model_config).to(runtime.device)
    settings = config.optimisation
    if settings.optimizer == "adamw":
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay, fused=True
        )
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate, fused=True)
    scaler = torch.amp.GradScaler(runtime.device.type, enabled=runtime.autocast_dtype == torch.float16)
    return State(model, optimizer, scaler)


# --- resume ------------------------------------------------------------------------


def restore(state: State, config: TrainConfig, model_config: ModelConfig, runtime: Runtime) -> Path | None:
    """Resume from the run folder's checkpoint (see
    :func:`~pretraining.checkpoint.load_run_checkpoint`), or else start from
    ``model.init_weights``; returns the checkpoint resumed from. Reads only."""
    loaded = load_run_checkpoint(runtime.out, map_location=runtime.device)
    if loaded is not None:
        saved, path = loaded
        trained = ModelConfig(**saved["model_config"])
        if trained != model_config:
            differences = [
                item.name
                for item in dataclasses.fields(ModelConfig)
                if getattr(trained, item.name) != getattr(model_config, item.name)
            ]
            raise ValueError(
                f"{path} was trained with another model config (it differs in {', '.join(differences)}); "
                f"resume with the settings of {runtime.out / CONFIG_FILE}, or train in another run folder."
            )
        state.model.load_state_dict(saved["model"])
        state.optimizer.load_state_dict(saved["optimizer"])
        state.scaler.load_state_dict(saved["scaler"])
        set_rng_states(saved["rng"])
        state.step, state.equations = saved["step"], saved["equations"]
        state.elapsed_seconds = saved["elapsed_seconds"]
        logger.info("Resumed from %s at step %d.", path, state.step)
        return path
    if config.model.init_weights:
        initial = load_folder(Path(config.model.init_weights), torch.device("cpu"))
        if widening(initial.config, model_config):
            widen(initial, state.model)
            logger.info(
                "Started from the weights in %s, widened from %d to %d variables.",
                config.model.init_weights,
                initial.config.n_variables,
                model_config.n_variables,
            )
            return None
        if initial.config != model_config:
            raise ValueError(f"{config.model.init_weights} holds another model config than {config.model.size!r}.")
        state.model.load_state_dict(initial.state_dict())
        logger.info("Started from the weights in %s.", config.model.init_weights)
    return None


def start_run(config: TrainConfig, runtime: Runtime, resumed_from: Path | None) -> None:
    """Once every check has passed, rank 0 creates the run folder and writes
    ``train_config.json``. After resuming from the previous checkpoint it renames an
    unreadable ``checkpoint.pt`` to ``checkpoint.pt.corrupt``, so that the next save
    keeps the readable one."""
    if runtime.ranks.enabled:
        dist.barrier()  # every rank has read the checkpoint
    if not runtime.ranks.main:
        return
    runtime.out.mkdir(parents=True, exist_ok=True)
    latest = runtime.out / CHECKPOINT
    if resumed_from is not None and resumed_from != latest and latest.exists():
        kept = latest.with_name(latest.name + ".corrupt")
        os.replace(latest, kept)
        logger.warning("Renamed the unreadable %s to %s.", latest, kept)
    (runtime.out / CONFIG_FILE).write_text(json.dumps(config.to_dict(), indent=2))


# --- checkpoints -------------------------------------------------------------------


def checkpoint(state: State, config: TrainConfig, model_config: ModelConfig, runtime: Runtime) -> None:
    """Rank 0 writes ``checkpoint.pt`` (the one before becomes ``checkpoint-previous.pt``);
    all ranks wait for it."""
    if runtime.ranks.main:
        save_checkpoint(
            dict(
                model=state.model.state_dict(),
                optimizer=state.optimizer.state_dict(),
                scaler=state.scaler.state_dict(),
                rng=rng_states(),
                step=state.step,
                equations=state.equations,
                elapsed_seconds=state.elapsed_seconds,
                model_config=model_config.to_dict(),
                train_config=config.to_dict(),
            ),
            runtime.out / CHECKPOINT,
            previous=runtime.out / PREVIOUS_CHECKPOINT,
        )
    if runtime.ranks.enabled:
        dist.barrier()


# --- the step loop -----------------------------------------------------------------


class _StopRequest:
    """Records SIGTERM/SIGINT so the loop can checkpoint and exit cleanly."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def __enter__(self):
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame):
        logger.warning("Received signal %d: checkpointing and stopping.", signum)
        self.requested = True

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def _agree(requested: bool, elapsed: float, runtime: Runtime) -> tuple[bool, float]:
    """Whether any rank was asked to stop, and the largest elapsed time of the ranks:
    every rank gets the same answers, so they stop at the same step and follow the
    same learning rate."""
    if not runtime.ranks.enabled:
        return requested, elapsed
    values = torch.tensor([float(requested), elapsed], dtype=torch.float64, device=runtime.device)
    dist.all_reduce(values, op=dist.ReduceOp.MAX)
    flag, agreed = values.tolist()
    return bool(flag), agreed


class _CsvLog:
    """``log.csv``: rows after ``last_step`` (from an interrupted run) are dropped."""

    def __init__(self, path: Path, last_step: int):
        self.path = path
        keep = []
        if path.exists():
            with path.open(newline="") as handle:
                keep = [row for row in csv.DictReader(handle) if int(row["step"]) <= last_step]
        temporary = path.with_name(path.name + ".tmp")
        with temporary.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, LOG_FIELDS)
            writer.writeheader()
            writer.writerows(keep)
        os.replace(temporary, path)

    def write(self, row: dict) -> None:
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, LOG_FIELDS).writerow({k: row.get(k, "") for k in LOG_FIELDS})


class _Meter:
    """Training loss (summed on the device, read at log rows) and speed since the last
    log row, the share of its wall time spent waiting for batches, the last learning
    rate, and the run's elapsed time."""

    def __init__(self, elapsed_at_start: float, now: float):
        self.start, self.elapsed_at_start = now, elapsed_at_start
        self.rate = math.nan
        self.reset(now)

    def reset(self, now: float) -> None:
        self.loss, self.steps, self.window_start, self.equations = 0.0, 0, now, 0
        self.data_seconds, self.wall_start = 0.0, time.perf_counter()

    def data_fraction(self) -> float:
        return self.data_seconds / max(time.perf_counter() - self.wall_start, 1e-9)

    def add(self, loss: torch.Tensor, equations: int, rate: float) -> None:
        self.loss = self.loss + loss
        self.steps += 1
        self.equations += equations
        self.rate = rate

    def mean_loss(self) -> float:
        return float(self.loss) / self.steps

    def elapsed(self, now: float) -> float:
        return self.elapsed_at_start + now - self.start


def loss_function(model, compile: bool = False) -> Callable:
    """``loss(codes, targets)``: the token cross-entropy of ``model`` on a batch whose
    points are half-precision codes (expanded here, on the device); through
    ``torch.compile`` with dynamic shapes when ``compile``."""

    def loss(codes: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return model(points_from_codes(codes), targets[:, :-1], targets[:, 1:])[1]

    return torch.compile(loss, dynamic=True) if compile else loss


def train_step(batch: dict, loss, state: State, config: TrainConfig, runtime: Runtime, rate: float) -> tuple:
    """One optimiser step at learning rate ``rate``; returns the loss (a detached tensor
    on the device, not read here) and the batch's number of equations."""
    codes = batch["codes"].to(runtime.device, non_blocking=True)
    targets = batch["targets"].to(runtime.device, non_blocking=True)
    with autocast(runtime.device, runtime.autocast_dtype):
        value = loss(codes, targets)
    for group in state.optimizer.param_groups:
        group["lr"] = rate
    state.optimizer.zero_grad(set_to_none=True)
    state.scaler.scale(value).backward()
    if config.optimisation.grad_clip:
        state.scaler.unscale_(state.optimizer)
        torch.nn.utils.clip_grad_norm_(state.model.parameters(), config.optimisation.grad_clip, foreach=True)
    state.scaler.step(state.optimizer)
    state.scaler.update()
    return value.detach(), len(targets)


def learning_rate(state: State, config: TrainConfig) -> float:
    """The rate of the next step: planned in steps, or with ``max_time`` in the elapsed
    time agreed at the last control step."""
    schedule, optimisation = config.schedule, config.optimisation
    if schedule.max_time is None:
        return optimisation.rate_at(state.step, schedule.max_steps)
    return optimisation.rate_at_time(state.step, state.elapsed_seconds, schedule.training_seconds)


def finished(state: State, config: TrainConfig) -> bool:
    """Whether the run has reached ``max_steps``, or with ``max_time`` its deadline."""
    schedule = config.schedule
    if schedule.max_time is None:
        return state.step >= schedule.max_steps
    return state.elapsed_seconds >= schedule.training_seconds


def _log_row(
    log: _CsvLog | None,
    bar,
    meter: _Meter,
    last: dict,
    state: State,
    runtime: Runtime,
    validated: bool,
    now: float,
    gpu: GpuSampler | None,
) -> None:
    """Average the training loss over the ranks; rank 0 writes a row of ``log.csv``."""
    (loss_sum,) = sum_over_ranks([meter.mean_loss()], runtime.ranks, runtime.device)
    last["train_loss"] = loss_sum / runtime.ranks.world_size
    speed = meter.equations / max(now - meter.window_start, 1e-9)
    if log is not None:
        log.write(
            dict(
                step=state.step,
                equations=state.equations,
                learning_rate=f"{meter.rate:.4g}",
                equations_per_second=f"{speed:.1f}",
                elapsed_seconds=f"{state.elapsed_seconds:.1f}",
                data_fraction=f"{meter.data_fraction():.3f}",
                gpu_utilisation="" if gpu is None or (busy := gpu.take()) is None else f"{busy:.0f}",
                train_loss=f"{last['train_loss']:.5f}",
                val_loss=f"{last['val_loss']:.5f}" if validated else "",
                val_accuracy=f"{last['val_accuracy']:.5f}" if validated else "",
            )
        )
        if bar is not None:
            bar.set_postfix(loss=f"{last['train_loss']:.3f}", eq_s=f"{speed:.0f}")
    meter.reset(now)


def _progress_bar(config: TrainConfig, runtime: Runtime, state: State):
    if not (config.run.progress and runtime.ranks.main and not finished(state, config)):
        return None
    from tqdm.auto import tqdm

    total = config.schedule.max_steps if config.schedule.max_time is None else None
    return tqdm(total=total, initial=state.step, unit="step", dynamic_ncols=True)


def _batches(data: Data, config: TrainConfig, runtime: Runtime, start: int):
    """The training batches from batch ``start`` of this rank's stream: a DataLoader
    over host batches, or the device stream."""
    if isinstance(data.train, DeviceSampler):
        return DeviceBatchStream(data.train, config.run.seed, stream=runtime.ranks.rank, start=start)
    stream = BatchStream(data.train, config.run.seed, stream=runtime.ranks.rank, start=start)
    return batch_loader(stream, config.run.num_workers, pin_memory=runtime.device.type == "cuda")


def run_steps(state: State, data: Data, config: TrainConfig, runtime: Runtime) -> tuple[bool, dict]:
    """Train to ``schedule.max_steps``, the ``max_time`` deadline or a stop signal: log,
    validate and checkpoint on schedule. Returns whether a signal stopped it and the
    last losses.

    The clock is read once per step; the loss, the signals and (with DDP) the ranks'
    agreement only on control steps, which also end a ``max_time`` run."""
    schedule, ranks = config.schedule, runtime.ranks
    log = _CsvLog(runtime.out / LOG, state.step) if ranks.main else None
    wrapped = (
        DistributedDataParallel(
            state.model, device_ids=[runtime.device.index] if runtime.device.type == "cuda" else None
        )
        if ranks.enabled
        else state.model
    )
    loss = loss_function(wrapped, config.run.compile)
    loader = _batches(data, config, runtime, state.step)
    bar = _progress_bar(config, runtime, state)
    meter = _Meter(state.elapsed_seconds, runtime.clock())
    last = {"train_loss": math.nan, "val_loss": math.nan, "val_accuracy": math.nan}
    stopped = False
    state.model.train()
    # Device batches wait for the GPU anyway: the wait for the step before is not theirs.
    synchronise = config.run.data_source == "device" and runtime.device.type == "cuda"
    gpu = GpuSampler(period=1.0, index=runtime.device.index) if runtime.device.type == "cuda" else None
    with _StopRequest() as stop, gpu or contextlib.nullcontext():
        batches = iter(loader)
        while not finished(state, config):
            rate = learning_rate(state, config)
            waited = time.perf_counter()
            if synchronise:
                torch.cuda.synchronize(runtime.device)
            batch = next(batches)
            meter.data_seconds += time.perf_counter() - waited
            value, n_equations = train_step(batch, loss, state, config, runtime, rate)
            now = runtime.clock()
            state.step += 1
            state.equations += n_equations * ranks.world_size
            meter.add(value, n_equations * ranks.world_size, rate)
            if bar is not None:
                bar.update(1)
            validated = bool(
                data.validation is not None and schedule.eval_every and state.step % schedule.eval_every == 0
            )
            if validated:
                last["val_loss"], last["val_accuracy"] = validate(
                    state.model,
                    data.validation,
                    config.run.seed,
                    schedule.n_val_batches,
                    runtime.device,
                    runtime.autocast_dtype,
                    ranks,
                )
            checkpoint_due = state.step % schedule.checkpoint_every == 0
            last_step = schedule.max_time is None and state.step >= schedule.max_steps
            if not (state.step % schedule.log_every == 0 or validated or checkpoint_due or last_step):
                continue
            stopped, state.elapsed_seconds = _agree(stop.requested, meter.elapsed(now), runtime)
            _log_row(log, bar, meter, last, state, runtime, validated, now, gpu)
            if checkpoint_due or stopped or finished(state, config):
                checkpoint(state, config, data.model_config, runtime)
            if stopped:
                break
    del batches, loader
    if bar is not None:
        bar.close()
    return stopped, last


# --- end of the run ----------------------------------------------------------------


def weight_checksums(model: torch.nn.Module, ranks: Ranks) -> list[float]:
    """The sum of the weights on every rank (DDP replicas must agree)."""
    checksum = torch.stack([p.detach().double().sum() for p in model.parameters()]).sum().reshape(1)
    if ranks.enabled:
        gathered = [torch.zeros_like(checksum) for _ in range(ranks.world_size)]
        dist.all_gather(gathered, checksum)
        checksum = torch.cat(gathered)
    return checksum.tolist()


def summary_json(summary: dict) -> str:
    """``summary`` as strict JSON: non-finite numbers (a loss never measured) are ``null``."""

    def strict(value):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, list):
            return [strict(item) for item in value]
        return value

    return json.dumps({key: strict(value) for key, value in summary.items()}, indent=2, allow_nan=False)


def finish(state: State, data: Data, config: TrainConfig, runtime: Runtime, stopped: bool, last: dict) -> dict:
    """Export ``out/model`` (unless stopped by a signal) and write ``summary.json``."""
    ranks = runtime.ranks
    summary = dict(
        step=state.step,
        equations=state.equations,
        elapsed_seconds=state.elapsed_seconds,
        stopped=stopped,
        parameters=sum(p.numel() for p in state.model.parameters()),
        world_size=ranks.world_size,
        **last,
    )
    summary["weight_checksums"] = weight_checksums(state.model, ranks)
    if not stopped and ranks.main:
        if not (runtime.out / CHECKPOINT).exists():
            checkpoint(state, config, data.model_config, runtime)
        export_model(
            runtime.out / CHECKPOINT,
            runtime.out / "model",
            dtype=config.export.dtype,
            push_to_hub=config.export.push_to_hub,
        )
        summary["export"] = str(runtime.out / "model")
    if ranks.main:
        (runtime.out / "summary.json").write_text(summary_json(summary))
    if ranks.enabled:
        dist.barrier()
    return summary


def train(config: TrainConfig, clock: Callable[[], float] = time.perf_counter) -> dict:
    """Run (or resume) training; returns a summary with the final step and losses.

    ``clock`` (seconds) times the run and, with ``max_time``, plans its schedule."""
    runtime = setup(config, clock)
    data = make_data(config, runtime.device)
    state = make_state(config, data.model_config, runtime)
    start_run(config, runtime, restore(state, config, data.model_config, runtime))
    logger.info(
        "Model %s: %d parameters; device %s; autocast %s; world size %d; %d torch threads.",
        config.model.size,
        sum(p.numel() for p in state.model.parameters()),
        runtime.device,
        runtime.autocast_dtype,
        runtime.ranks.world_size,
        torch.get_num_threads(),
    )
    stopped, last = run_steps(state, data, config, runtime)
    return finish(state, data, config, runtime, stopped, last)


def main(argv=None) -> None:
    config = config_from_args(argv, description=__doc__)
    rank = int(os.environ.get("RANK", "0"))
    logging.basicConfig(
        level=logging.INFO if rank == 0 else logging.WARNING,
        format=f"%(asctime)s [rank {rank}] %(levelname)s %(message)s",
    )
    distributed = False
    try:
        summary = train(config)
    finally:
        # Every rank leaves the process group itself, also when its run raised: a gloo
        # group torn down by the interpreter at exit can abort the process. Unreferenced
        # DDP objects go first, while the group and the interpreter are whole.
        if dist.is_initialized():
            distributed = True
            gc.collect()
            dist.destroy_process_group()
    if rank == 0:
        print(summary_json(summary))
    if distributed:
        # Gloo's worker threads can still abort the interpreter's finalisation (SIGABRT,
        # "terminate called without an active exception", seen once in 30-odd runs after
        # a finished run): every file is written and closed, so the process ends here.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
