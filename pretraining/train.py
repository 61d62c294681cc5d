"""Training loop: CPU, one GPU, or many GPUs/nodes with DDP launched by ``torchrun``.

Adam (1e-4 by default, no schedule) on the cross-entropy of the skeleton tokens, with
gradient clipping; bf16 (or fp16 with loss scaling) autocast on CUDA. Rank 0 writes
``checkpoint.pt`` atomically every ``checkpoint_every`` steps, at the end, and when
any rank receives SIGTERM (or SIGINT); a restart with the same ``out`` folder resumes
exactly (model, optimiser, scaler, RNG states and data position). Validation loss
and token accuracy on the held-out split go to ``log.csv`` with the training loss.
At the end the model is exported in the Hub format to ``out/model``.

Command line::

    python -m pretraining.train --bank bank --out run --model-size small --max-steps 2000
    torchrun --nproc_per_node 4 -m pretraining.train --config run.yaml

Options come from :class:`TrainConfig`; ``--config`` reads a YAML file whose keys are
its field names, and command-line options override it.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import logging
import math
import os
import random
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from nesymres_sklearn.network.model import MODEL_SIZES, ModelConfig, NeSymReSModel, config_for_size
from nesymres_sklearn.network.weights import load_folder

from .bank import SkeletonBank
from .data import BatchConfig, BatchStream, EquationSampler, batch_loader, batch_rng
from .export import export_model

logger = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.pt"
LOG = "log.csv"
LOG_FIELDS = ("step", "equations", "train_loss", "val_loss", "val_accuracy", "learning_rate",
              "equations_per_second", "elapsed_seconds")
VALIDATION_STREAM = 1_000_003  # data stream of the validation batches (train streams are ranks)
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


@dataclass
class TrainConfig:
    """Settings of a training run.

    Parameters
    ----------
    bank : str
        Skeleton bank folder (see :mod:`pretraining.bank`).
    bank_size : int, optional
        Train on the first ``bank_size`` skeletons of the bank only (default: all).
    init_weights : str, optional
        Folder with ``config.json`` + ``model.safetensors`` (an exported model of the
        same configuration) whose weights start a new run; ignored when resuming.
    out : str
        Run folder: ``checkpoint.pt``, ``log.csv``, ``train_config.json``, ``model/``.
    model_size : str, default="small"
        One of ``nesymres_sklearn.model.MODEL_SIZES`` ("paper" is the paper's ~24M).
    model_overrides : dict
        ModelConfig fields that replace the size's values.
    batch_size : int, default=150
        Equations per step and per process (the paper: 150).
    min_points, max_points : int, default=100, 500
        Points drawn per equation, uniformly in this range for each batch.
    weighting : {"frequency", "uniform"}, default="frequency"
        How training skeletons are drawn (see :class:`pretraining.data.BatchConfig`).
    learning_rate : float, default=1e-4
        Adam's rate; a resumed run takes the rate of its new config (to decay it by hand).
    grad_clip : float, default=1.0
        Maximum gradient norm (0 disables clipping).
    max_steps : int, default=1000
    checkpoint_every : int, default=100
    eval_every : int, default=100
        Validation period in steps (0 disables validation).
    n_val_batches : int, default=4
    log_every : int, default=10
    num_workers : int, default=1
        DataLoader processes per training process (0: make batches in the loop).
    seed : int, default=0
    device : str, default="auto"
        "auto" (CUDA when available), "cpu", "cuda".
    precision : {"auto", "fp32", "bf16", "fp16"}, default="auto"
        "auto" is bf16 on CUDA when supported, else fp16 on CUDA, fp32 on CPU.
    export_dtype : {"float32", "float16"}, default="float32"
    push_to_hub : str, optional
        Hub repo id to push the exported model to at the end.
    progress : bool, default=True
        Progress bar on rank 0.
    """

    bank: str = ""
    bank_size: int | None = None
    init_weights: str | None = None
    out: str = ""
    model_size: str = "small"
    model_overrides: dict = field(default_factory=dict)
    batch_size: int = 150
    min_points: int = 100
    max_points: int = 500
    weighting: str = "frequency"
    learning_rate: float = 1e-4
    grad_clip: float = 1.0
    max_steps: int = 1000
    checkpoint_every: int = 100
    eval_every: int = 100
    n_val_batches: int = 4
    log_every: int = 10
    num_workers: int = 1
    seed: int = 0
    device: str = "auto"
    precision: str = "auto"
    export_dtype: str = "float32"
    push_to_hub: str | None = None
    progress: bool = True

    def __post_init__(self):
        if not self.bank or not self.out:
            raise ValueError("TrainConfig needs a bank folder and an out folder.")
        if self.model_size not in MODEL_SIZES:
            raise ValueError(f"Unknown model_size {self.model_size!r}; choose from {sorted(MODEL_SIZES)}.")
        if self.precision not in PRECISIONS:
            raise ValueError(f"Unknown precision {self.precision!r}; choose from {PRECISIONS}.")
        for name in ("max_steps", "checkpoint_every", "log_every", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1.")


@dataclass
class _Distributed:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def _setup_distributed(device_kind: str) -> _Distributed:
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return _Distributed()
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device_kind == "cuda" else "gloo")
    return _Distributed(dist.get_rank(), world_size, int(os.environ.get("LOCAL_RANK", "0")))


def _device(config: TrainConfig, local_rank: int) -> torch.device:
    kind = config.device
    if kind == "auto":
        kind = "cuda" if torch.cuda.is_available() else "cpu"
    if kind == "cuda":
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device(kind)


def _autocast_dtype(config: TrainConfig, device: torch.device) -> torch.dtype | None:
    precision = config.precision
    if precision == "auto":
        if device.type != "cuda":
            return None
        precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


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


def _atomic_save(obj, path: Path) -> None:
    temporary = path.with_name(path.name + ".tmp")
    torch.save(obj, temporary)
    os.replace(temporary, path)


def _rng_states() -> dict:
    states = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": np.random.get_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _set_rng_states(states: dict) -> None:
    torch.set_rng_state(states["torch"])
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def _read_log(path: Path, last_step: int) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return [row for row in csv.DictReader(handle) if int(row["step"]) <= last_step]


class _CsvLog:
    def __init__(self, path: Path, keep_rows: list[dict]):
        self.path = path
        temporary = path.with_name(path.name + ".tmp")
        with temporary.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, LOG_FIELDS)
            writer.writeheader()
            writer.writerows(keep_rows)
        os.replace(temporary, path)

    def write(self, row: dict) -> None:
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, LOG_FIELDS).writerow({k: row.get(k, "") for k in LOG_FIELDS})


def _mean_over_ranks(values: list[float], dist_info: _Distributed, device) -> list[float]:
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    if dist_info.enabled:
        dist.all_reduce(tensor)
    return tensor.tolist()


@torch.no_grad()
def validate(model, sampler: EquationSampler, seed: int, n_batches: int, device,
             autocast_dtype=None, dist_info: _Distributed | None = None) -> tuple[float, float]:
    """Mean token cross-entropy and token accuracy on validation batches ``0..n_batches-1``
    of ``seed`` (the same batches for every model given the same sampler settings)."""
    dist_info = dist_info or _Distributed()
    was_training = model.training
    model.eval()
    pad_id = sampler.vocab.pad_id
    totals = [0.0, 0.0, 0.0]  # loss sum, correct, tokens
    for index in range(dist_info.rank, n_batches, dist_info.world_size):
        batch = sampler.batch(batch_rng(seed, VALIDATION_STREAM, index))
        points = batch["points"].to(device)
        targets = batch["targets"].to(device)
        with _autocast(device, autocast_dtype):
            logits, loss = model(points, targets[:, :-1], targets[:, 1:])
        labels = targets[:, 1:]
        mask = labels != pad_id
        n_tokens = int(mask.sum())
        totals[0] += float(loss) * n_tokens
        totals[1] += float(((logits.argmax(-1) == labels) & mask).sum())
        totals[2] += n_tokens
    loss_sum, correct, tokens = _mean_over_ranks(totals, dist_info, device)
    model.train(was_training)
    return loss_sum / max(tokens, 1), correct / max(tokens, 1)


def _autocast(device, dtype):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def train(config: TrainConfig) -> dict:
    """Run (or resume) training; returns a summary with the final step and losses."""
    out = Path(config.out)
    device_kind = config.device if config.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    dist_info = _setup_distributed(device_kind)
    device = _device(config, dist_info.local_rank)
    autocast_dtype = _autocast_dtype(config, device)
    if dist_info.main:
        out.mkdir(parents=True, exist_ok=True)
        (out / "train_config.json").write_text(json.dumps(asdict(config), indent=2))

    train_bank = SkeletonBank(config.bank, "train", limit=config.bank_size)
    heldout_bank = SkeletonBank(config.bank, "heldout")
    model_config = config_for_size(config.model_size, train_bank.n_variables, **config.model_overrides)
    batch_config = BatchConfig(batch_size=config.batch_size, min_points=config.min_points,
                               max_points=config.max_points, max_length=model_config.max_length,
                               weighting=config.weighting)
    train_sampler = EquationSampler(train_bank, batch_config, model_config.n_variables)
    val_sampler = (EquationSampler(heldout_bank, batch_config, model_config.n_variables)
                   if len(heldout_bank) and config.eval_every else None)

    torch.manual_seed(config.seed)
    model = NeSymReSModel(model_config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    scaler = torch.amp.GradScaler(device.type, enabled=autocast_dtype == torch.float16)
    step, equations, elapsed = 0, 0, 0.0
    checkpoint_path = out / CHECKPOINT
    if checkpoint_path.exists():
        state = torch.load(checkpoint_path, map_location=device, weights_only=False)
        if ModelConfig(**state["model_config"]) != model_config:
            raise ValueError(f"{checkpoint_path} was trained with another model config.")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        for group in optimizer.param_groups:  # a run may continue at another rate
            group["lr"] = config.learning_rate
        scaler.load_state_dict(state["scaler"])
        _set_rng_states(state["rng"])
        step, equations, elapsed = state["step"], state["equations"], state["elapsed_seconds"]
        logger.info("Resumed from %s at step %d.", checkpoint_path, step)
    elif config.init_weights:
        initial = load_folder(Path(config.init_weights), torch.device("cpu"))
        if initial.config != model_config:
            raise ValueError(f"{config.init_weights} holds another model config than {config.model_size!r}.")
        model.load_state_dict(initial.state_dict())
        logger.info("Started from the weights in %s.", config.init_weights)
    if dist_info.main:
        log = _CsvLog(out / LOG, _read_log(out / LOG, step))
    wrapped = (DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
               if dist_info.enabled else model)
    n_parameters = sum(p.numel() for p in model.parameters())
    logger.info("Model %s: %d parameters; device %s; autocast %s; world size %d.",
                config.model_size, n_parameters, device, autocast_dtype, dist_info.world_size)

    def save_checkpoint():
        if dist_info.main:
            _atomic_save(dict(model=model.state_dict(), optimizer=optimizer.state_dict(),
                              scaler=scaler.state_dict(), rng=_rng_states(), step=step,
                              equations=equations, elapsed_seconds=elapsed,
                              model_config=model_config.to_dict(), train_config=asdict(config)),
                         checkpoint_path)
        if dist_info.enabled:
            dist.barrier()

    stream = BatchStream(train_sampler, config.seed, stream=dist_info.rank, start=step)
    loader = batch_loader(stream, config.num_workers)
    bar = None
    if config.progress and dist_info.main and step < config.max_steps:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.max_steps, initial=step, unit="step", dynamic_ncols=True)
    run_start, elapsed_at_start = time.perf_counter(), elapsed
    running_loss, running_steps, window_start, window_equations = 0.0, 0, time.perf_counter(), 0
    last = {"train_loss": math.nan, "val_loss": math.nan, "val_accuracy": math.nan}
    stopped = False
    model.train()
    with _StopRequest() as stop:
        batches = iter(loader)
        while step < config.max_steps:
            batch = next(batches)
            points = batch["points"].to(device, non_blocking=True)
            targets = batch["targets"].to(device, non_blocking=True)
            with _autocast(device, autocast_dtype):
                _, loss = wrapped(points, targets[:, :-1], targets[:, 1:])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if config.grad_clip:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            step += 1
            batch_equations = len(targets) * dist_info.world_size
            equations += batch_equations
            window_equations += batch_equations
            running_loss += loss.item()
            running_steps += 1
            if bar is not None:
                bar.update(1)
            evaluate = val_sampler is not None and config.eval_every and step % config.eval_every == 0
            if evaluate:
                last["val_loss"], last["val_accuracy"] = validate(
                    model, val_sampler, config.seed, config.n_val_batches, device, autocast_dtype, dist_info)
            if step % config.log_every == 0 or evaluate or step == config.max_steps:
                now = time.perf_counter()
                elapsed = elapsed_at_start + now - run_start
                (mean_loss,) = _mean_over_ranks([running_loss / running_steps], dist_info, device)
                last["train_loss"] = mean_loss / dist_info.world_size
                speed = window_equations / max(now - window_start, 1e-9)
                if dist_info.main:
                    log.write(dict(step=step, equations=equations, learning_rate=config.learning_rate,
                                   equations_per_second=f"{speed:.1f}", elapsed_seconds=f"{elapsed:.1f}",
                                   train_loss=f"{last['train_loss']:.5f}",
                                   val_loss=f"{last['val_loss']:.5f}" if evaluate else "",
                                   val_accuracy=f"{last['val_accuracy']:.5f}" if evaluate else ""))
                    if bar is not None:
                        bar.set_postfix(loss=f"{last['train_loss']:.3f}", eq_s=f"{speed:.0f}")
                running_loss, running_steps, window_start, window_equations = 0.0, 0, now, 0
            stop_now = stop.requested
            if dist_info.enabled:
                flag = torch.tensor([float(stop_now)], device=device)
                dist.all_reduce(flag, op=dist.ReduceOp.MAX)
                stop_now = bool(flag.item())
            if step % config.checkpoint_every == 0 or step == config.max_steps or stop_now:
                elapsed = elapsed_at_start + time.perf_counter() - run_start
                save_checkpoint()
            if stop_now:
                stopped = True
                break
    del batches, loader
    if bar is not None:
        bar.close()
    summary = dict(step=step, equations=equations, stopped=stopped, parameters=n_parameters,
                   world_size=dist_info.world_size, **last)
    # One weight checksum per rank: DDP replicas must agree.
    checksum = torch.stack([p.detach().double().sum() for p in model.parameters()]).sum().reshape(1)
    if dist_info.enabled:
        gathered = [torch.zeros_like(checksum) for _ in range(dist_info.world_size)]
        dist.all_gather(gathered, checksum)
        checksum = torch.cat(gathered)
    summary["weight_checksums"] = checksum.tolist()
    if not stopped and dist_info.main:
        if not checkpoint_path.exists():
            save_checkpoint()
        export_model(checkpoint_path, out / "model", dtype=config.export_dtype,
                     push_to_hub=config.push_to_hub)
        summary["export"] = str(out / "model")
    if dist_info.main:
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if dist_info.enabled:
        dist.barrier()
    return summary


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML file with TrainConfig fields")
    for item in dataclasses.fields(TrainConfig):
        name = "--" + item.name.replace("_", "-")
        default = TrainConfig.__dataclass_fields__[item.name].default
        if item.name == "model_overrides":
            parser.add_argument(name, type=json.loads, default=argparse.SUPPRESS,
                                help='JSON object, e.g. \'{"max_length": 80}\'')
        elif isinstance(default, bool):
            parser.add_argument(name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS)
        else:
            kind = {"int | None": int}.get(item.type) or (type(default) if default not in (None, "") else str)
            parser.add_argument(name, type=kind, default=argparse.SUPPRESS,
                                help=f"default: {default!r}")
    return parser


def config_from_args(argv=None) -> TrainConfig:
    """TrainConfig from ``--config file.yaml`` and command-line overrides."""
    args = vars(_parser().parse_args(argv))
    settings = {}
    path = args.pop("config", None)
    if path:
        import yaml

        settings.update(yaml.safe_load(Path(path).read_text()) or {})
    settings.update(args)
    return TrainConfig(**settings)


def main(argv=None) -> None:
    config = config_from_args(argv)
    rank = int(os.environ.get("RANK", "0"))
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,
                        format=f"%(asctime)s [rank {rank}] %(levelname)s %(message)s")
    summary = train(config)
    if rank == 0:
        print(json.dumps(summary, indent=2))
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
