"""One command for a GPU window: bank, training to a deadline, export, one result folder.

A GPU host is lent for a fixed time (30 minutes here, 10 minutes per command). This
command spends it on training: it gets a skeleton bank (reused from ``--bank`` when
complete, else unpacked from ``--bank-pack`` files that travel with the checkout, else
built with every core), trains from ``--init-weights`` (or from scratch) with
``--max-time`` set to what is left of ``--minutes``, so that the cool-down ends and the
model is exported at the deadline, and leaves in ``--out``:

==================  =================================================================
``model/``          ``config.json``, ``model.safetensors`` (float16 when float32
                    would not fit in ``--max-file-mib``) and the Hub card ``README.md``
``log.csv``         the run's log (loss, validation, rate, elapsed time)
``train_config.json``  every training setting
``summary.json``    the run's summary (steps, equations, losses, checksums)
``window.json``     the window: its stages' seconds, equations/s, GPU utilisation
                    (sampled with ``nvidia-smi``), device, bank source
==================  =================================================================

Seven files, each under ``--max-file-mib`` (a device call brings back 8 files of
16 MiB at most); checkpoints stay in ``--work``, where rerunning the command resumes
the run. The training settings are those of
``pretraining/window-defaults.yaml`` (the H100 continuations' settings), or
``--config FILE``; any ``pretraining.train`` option overrides them::

    python -m pretraining.window --out window --minutes 25 --init-weights nesymres_sklearn/weights \\
        --bank-pack pretraining/banks/bank-1m-*.npz --work /tmp/window-work --num-workers 15

``--data device`` makes the training batches on the GPU itself
(:mod:`pretraining.device_data`) instead of in ``--num-workers`` host processes; the
log's ``data_fraction`` and ``gpu_utilisation`` columns and ``window.json`` say how busy
the GPU was. A bank built here has ``--n-variables`` variables (the model reads as many).

``docs/pretraining.md`` ("A GPU window") shows how to run it through 10-minute device
calls.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from pathlib import Path

import torch

from .bank import build_bank
from .bank_pack import unpack_bank
from .config import DATA_SOURCES, TrainConfig, command_line_parser, config_from_args
from .generator import GeneratorConfig
from .runtime import GpuSampler, available_cores
from .train import CONFIG_FILE, LOG, summary_json, train

DEFAULTS = Path(__file__).with_name("window-defaults.yaml")
RESULT_FILES = (LOG, CONFIG_FILE, "summary.json")


def bank_is_complete(folder: Path) -> bool:
    """Whether ``folder`` holds a finished bank."""
    metadata = folder / "metadata.json"
    return metadata.is_file() and json.loads(metadata.read_text()).get("complete", False)


def training_skeletons(folder: Path) -> int:
    """The number of training skeletons of the bank in ``folder``, from its metadata."""
    metadata = json.loads((folder / "metadata.json").read_text())
    return sum(shard["n"] for shard in metadata["shards"]["train"])


def prepare_bank(
    folder: Path,
    pack: list[Path] | None,
    n_skeletons: int,
    n_heldout: int,
    seed: int,
    n_jobs: int,
    generator: GeneratorConfig | None = None,
) -> str:
    """Make ``folder`` a complete bank; returns how: ``"reused"``, ``"unpacked"`` or ``"built"``
    (with ``generator``'s settings, by default 3 variables and SymPy's automatic simplification)."""
    if bank_is_complete(folder):
        return "reused"
    if pack:
        unpack_bank(pack, folder)
        return "unpacked"
    config = generator or GeneratorConfig(simplification="automatic")
    build_bank(folder, n_skeletons, n_heldout, seed, config, n_jobs=n_jobs)
    return "built"


def fitting_dtype(model_folder: Path, max_bytes: int) -> str:
    """``"float32"``, or ``"float16"`` when the float32 weights would exceed ``max_bytes``;
    raises when neither fits."""
    size = (model_folder / "model.safetensors").stat().st_size
    if size <= max_bytes:
        return "float32"
    if size // 2 + 64 * 1024 <= max_bytes:
        return "float16"
    raise ValueError(
        f"The model's weights ({size / 2**20:.1f} MiB in float32) do not fit in files of "
        f"{max_bytes / 2**20:.0f} MiB even in float16; take them from the work folder's checkpoint."
    )


def collect(run: Path, out: Path, max_bytes: int) -> str:
    """Copy the run's model, log, settings and summary to ``out``; returns the weights' dtype."""
    out.mkdir(parents=True, exist_ok=True)
    dtype = fitting_dtype(run / "model", max_bytes)
    if dtype == "float32":
        shutil.copytree(run / "model", out / "model", dirs_exist_ok=True)
    else:
        from .export import export_model

        export_model(run / "checkpoint.pt", out / "model", dtype=dtype)
    for name in RESULT_FILES:
        shutil.copy2(run / name, out / name)
    return dtype


def window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False
    )
    window = parser.add_argument_group("window")
    window.add_argument("-h", "--help", action="store_true")
    window.add_argument("--out", type=Path, required=True, help="result folder (files of at most --max-file-mib)")
    window.add_argument("--minutes", type=float, required=True, help="the window, from this command's start")
    window.add_argument("--work", type=Path, help="bank and run folders (default: OUT-work beside --out)")
    window.add_argument("--bank", type=Path, help="bank folder: reused when complete (default: WORK/bank)")
    window.add_argument("--bank-pack", type=Path, nargs="+", help="packed bank files to unpack (pretraining.bank)")
    window.add_argument("--n-skeletons", type=int, default=600_000, help="size of a bank built here")
    window.add_argument("--n-heldout", type=int, default=2_000)
    window.add_argument("--bank-seed", type=int, default=0)
    window.add_argument("--n-variables", type=int, default=3, help="variables of a bank built here (and the model's)")
    window.add_argument("--max-operators", type=int, default=5, help="operators per tree of a bank built here")
    window.add_argument(
        "--width-weights", type=float, nargs="+", help="weights of laws of 1..n variables in a bank built here"
    )
    window.add_argument(
        "--data",
        choices=DATA_SOURCES,
        default="host",
        help="training batches made by host workers or on the training device (pretraining.train --data-source)",
    )
    window.add_argument("--config", type=Path, default=DEFAULTS, help="training settings (YAML)")
    window.add_argument("--max-file-mib", type=float, default=16.0)
    window.add_argument("--collect-seconds", type=float, default=5.0, help="kept after training to copy results")
    return parser


def run_window(args: argparse.Namespace, train_options: list[str], clock=time.monotonic) -> dict:
    """The whole window (see the module docstring); returns what ``window.json`` holds."""
    started = clock()
    deadline = started + 60 * args.minutes
    work = args.work or args.out.with_name(args.out.name + "-work")
    bank = args.bank or work / "bank"
    run = work / "run"

    def settings(max_time: float) -> TrainConfig:
        options = ["--config", str(args.config), "--data-source", args.data, *train_options]
        options += ["--bank", str(bank), "--out", str(run)]
        return config_from_args([*options, "--max-time", f"{max_time:.3f}"])

    settings(60 * args.minutes)  # refuse bad options before the bank is made
    generator = GeneratorConfig(
        n_variables=args.n_variables,
        max_operators=args.max_operators,
        simplification="automatic",
        width_weights=args.width_weights,
    )
    source = prepare_bank(
        bank, args.bank_pack, args.n_skeletons, args.n_heldout, args.bank_seed, available_cores(), generator
    )
    bank_seconds = clock() - started
    max_time = deadline - clock() - args.collect_seconds
    if max_time <= 0:
        raise ValueError(f"The bank took {bank_seconds:.0f} s: nothing is left of the {args.minutes} minutes.")
    config = settings(max_time)
    training_started = clock()
    with GpuSampler() as gpu:
        summary = train(config, clock=clock)
    training_wall = clock() - training_started
    dtype = collect(run, args.out, int(args.max_file_mib * 2**20))
    equations = summary["equations"]
    result = dict(
        minutes=args.minutes,
        bank=str(bank),
        bank_source=source,
        bank_skeletons=training_skeletons(bank),
        data_source=config.run.data_source,
        bank_seconds=bank_seconds,
        max_time=max_time,
        training_wall_seconds=training_wall,
        training_seconds=summary["elapsed_seconds"],
        steps=summary["step"],
        equations=equations,
        equations_per_second=equations / max(summary["elapsed_seconds"], 1e-9),
        val_loss=summary["val_loss"],
        val_accuracy=summary["val_accuracy"],
        stopped=summary["stopped"],
        weights_dtype=dtype,
        device=torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        torch=torch.__version__,
        cores=available_cores(),
        **gpu.summary(),
    )
    result["total_seconds"] = clock() - started
    (args.out / "window.json").write_text(summary_json(result))
    return result


def main(argv=None) -> None:
    parser = window_parser()
    args, train_options = parser.parse_known_args(argv)
    if args.help:
        parser.print_help()
        print("\nTraining options (pretraining.train):")
        command_line_parser().print_help()
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    print(summary_json(run_window(args, train_options)))


if __name__ == "__main__":
    main()
