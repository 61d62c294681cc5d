"""Where a training process runs: its rank in a ``torchrun`` job, its device, its
precision, its number of threads."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from nesymres_sklearn.network.weights import resolve_device


@dataclass
class Ranks:
    """This process's place in a DDP job (one process without ``torchrun``)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def setup_distributed(device: torch.device) -> Ranks:
    """Join the process group ``torchrun`` describes in the environment (NCCL on CUDA,
    gloo otherwise); one process without it."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return Ranks()
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return Ranks(dist.get_rank(), world_size, int(os.environ.get("LOCAL_RANK", "0")))


def process_device(device: str | torch.device, local_rank: int = 0) -> torch.device:
    """The device of this process: ``device`` resolved by
    :func:`~nesymres_sklearn.network.weights.resolve_device`, and on CUDA without an
    index the local rank's GPU (made the current one)."""
    resolved = resolve_device(device)
    if resolved.type == "cuda":
        if resolved.index is None:
            resolved = torch.device("cuda", local_rank)
        torch.cuda.set_device(resolved)
    return resolved


def available_cores() -> int:
    """The number of CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def training_threads(
    num_workers: int, cores: int, num_threads: int | None = None, omp_num_threads: str | None = None
) -> int | None:
    """The torch threads of a training process whose ``num_workers`` DataLoader workers
    compute with one thread each, so that together they do not oversubscribe ``cores``.

    ``num_threads`` (``--num-threads``) wins; with ``OMP_NUM_THREADS`` set, torch already
    follows it (``None``: leave it); otherwise ``max(1, cores - num_workers)``.
    """
    if num_threads is not None:
        return num_threads
    if omp_num_threads:
        return None
    return max(1, cores - num_workers)


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast type of ``precision`` on ``device`` (``None``: float32 throughout)."""
    if precision == "auto":
        if device.type != "cuda":
            return None
        precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def autocast(device: torch.device, dtype: torch.dtype | None):
    """Autocast to ``dtype`` on ``device``, or nothing when ``dtype`` is ``None``."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def sum_over_ranks(values: list[float], ranks: Ranks, device: torch.device) -> list[float]:
    """Element-wise sums of ``values`` over all ranks (float64)."""
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    if ranks.enabled:
        dist.all_reduce(tensor)
    return tensor.tolist()


def nvidia_smi_utilisation(index: int | None = None) -> float | None:
    """The utilisation (percent) ``nvidia-smi`` reports for GPU ``index`` (the first
    one by default); ``None`` where it is missing or does not answer."""
    command = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]
    if index is not None:
        command.insert(1, f"--id={index}")
    try:
        output = subprocess.run(command, capture_output=True, text=True, timeout=10, check=True).stdout
        return float(output.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


@dataclass
class GpuSampler:
    """Samples a GPU's utilisation (percent) with ``nvidia-smi`` every ``period`` seconds
    in a thread, while in its ``with`` block; no samples where ``nvidia-smi`` is missing.

    Parameters
    ----------
    period : float, default=5.0
    index : int, optional
        The GPU (default: the first one).
    """

    period: float = 5.0
    index: int | None = None
    samples: list[float] = field(default_factory=list)

    def __post_init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._taken = 0

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            sample = nvidia_smi_utilisation(self.index)
            if sample is None:
                return
            self.samples.append(sample)

    def __enter__(self) -> GpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def take(self) -> float | None:
        """The mean of the samples since the last call (``None`` when there are none)."""
        new = self.samples[self._taken :]
        self._taken += len(new)
        return sum(new) / len(new) if new else None

    def summary(self) -> dict:
        if not self.samples:
            return {"gpu_utilisation_mean": None, "gpu_utilisation_samples": 0}
        return {
            "gpu_utilisation_mean": sum(self.samples) / len(self.samples),
            "gpu_utilisation_samples": len(self.samples),
        }
