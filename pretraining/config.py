"""The settings of a training run: one :class:`TrainConfig` in sections, each setting once.

===================  ====================================================================
section              settings (command-line flag = the name in the *flag* column)
===================  ====================================================================
``run``              ``bank``, ``bank_size``, ``out``, ``seed``, ``device``,
                     ``data_source``, ``num_workers``, ``num_threads``, ``compile``,
                     ``progress``
``model``            ``size`` (``--model-size``), ``overrides`` (``--model-overrides``),
                     ``init_weights``
``data``             :class:`pretraining.data.BatchConfig`: ``batch_size``,
                     ``min_points``, ``max_points``, ``min_valid_fraction``,
                     ``max_constants``, ``constant_range``, ``constant_signs``, ``support_range``,
                     ``max_abs_y``, ``weighting``
``optimisation``     ``optimizer``, ``learning_rate``, ``weight_decay``,
                     ``warmup_steps``, ``cooldown_fraction``, ``grad_clip``, ``precision``
``schedule``         ``max_steps``, ``max_time``, ``export_reserve``,
                     ``checkpoint_every``, ``eval_every``, ``n_val_batches``, ``log_every``
``export``           ``dtype`` (``--export-dtype``), ``push_to_hub``
===================  ====================================================================

Every setting has one *flat name* (the field name, or the ``flag`` in its metadata):
``--batch-size 64`` on the command line, ``batch_size`` in the flat layout. The target
length limit is the model's (``--model-overrides '{"max_length": 80}'``).

A run folder's ``train_config.json`` holds :meth:`TrainConfig.to_dict`, one object per
section. :meth:`TrainConfig.from_dict` (and :func:`load_train_config` for files) also
reads the flat layout, one key per setting, that runs wrote before the sections
existed; a YAML file given with ``--config`` may use either layout.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nesymres_sklearn.network.model import MODEL_SIZES

from .data import BatchConfig
from .export import DTYPES

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
DATA_SOURCES = ("host", "device")


def _flag(name: str, **metadata) -> dict:
    """Field metadata: the setting's flat name when it differs from the field's."""
    return {"flag": name, **metadata}


@dataclass
class RunConfig:
    """What to train on, where to write, and how to run.

    Parameters
    ----------
    bank : str
        Skeleton bank folder (see :mod:`pretraining.bank`).
    bank_size : int, optional
        Train on the first ``bank_size`` skeletons of the bank only (default: all).
    out : str
        Run folder: ``checkpoint.pt``, ``log.csv``, ``train_config.json``, ``model/``.
    seed : int, default=0
        Seeds the model's initial weights and the batch streams.
    device : str, default="auto"
        "auto" (CUDA when available), "cpu", "cuda" (with DDP: the local rank's GPU).
    data_source : {"host", "device"}, default="host"
        Where training batches are made: by ``num_workers`` DataLoader processes with
        NumPy (:mod:`pretraining.data`), or on the training device with PyTorch
        (:mod:`pretraining.device_data`; the workers are then not started). The two
        draw the same distributions but not the same numbers; validation batches are
        always the host's.
    num_workers : int, default=1
        DataLoader processes per training process (0: make batches in the loop).
    num_threads : int, optional
        Torch threads of the training process (default: ``OMP_NUM_THREADS`` when set,
        else the cores the workers leave; see :mod:`pretraining.train`).
    compile : bool, default=False
        Run the model's loss through ``torch.compile`` (dynamic shapes): fewer kernel
        launches per step on a GPU, after a compilation of a minute or so.
    progress : bool, default=True
        Progress bar on rank 0.
    """

    bank: str = ""
    bank_size: int | None = None
    out: str = ""
    seed: int = 0
    device: str = "auto"
    data_source: str = field(default="host", metadata={"choices": DATA_SOURCES})
    num_workers: int = 1
    num_threads: int | None = None
    compile: bool = False
    progress: bool = True

    def __post_init__(self):
        if self.num_workers < 0:
            raise ValueError("num_workers must be at least 0.")
        if self.data_source not in DATA_SOURCES:
            raise ValueError(f"Unknown data_source {self.data_source!r}; choose from {DATA_SOURCES}.")
        if self.num_threads is not None and self.num_threads < 1:
            raise ValueError("num_threads must be at least 1.")


@dataclass
class ModelSection:
    """The model to train.

    Parameters
    ----------
    size : str, default="small"
        One of ``nesymres_sklearn.network.model.MODEL_SIZES`` ("paper" is the paper's
        ~24M parameters).
    overrides : dict
        ``ModelConfig`` fields that replace the size's values (``max_length`` among them).
    init_weights : str, optional
        Folder with ``config.json`` + ``model.safetensors`` (an exported model of the
        same configuration) whose weights start a new run; ignored when resuming.
    """

    size: str = field(default="small", metadata=_flag("model_size", choices=tuple(MODEL_SIZES)))
    overrides: dict = field(default_factory=dict, metadata=_flag("model_overrides"))
    init_weights: str | None = None

    def __post_init__(self):
        if self.size not in MODEL_SIZES:
            raise ValueError(f"Unknown model_size {self.size!r}; choose from {sorted(MODEL_SIZES)}.")
        self.overrides = dict(self.overrides)


OPTIMIZERS = ("adam", "adamw")


@dataclass
class OptimisationConfig:
    """Optimiser, learning-rate schedule planned in advance, gradient clipping, precision.

    The rate rises linearly over ``warmup_steps``, stays at ``learning_rate``, and falls
    linearly to 0 over the last ``cooldown_fraction`` of ``schedule.max_steps``
    (:meth:`rate_at`), or, for a run with ``schedule.max_time``, over the last
    ``cooldown_fraction`` of its training time (:meth:`rate_at_time`). The defaults
    (Adam, no warmup, no cool-down) are a constant rate.

    Parameters
    ----------
    optimizer : {"adam", "adamw"}, default="adam"
    learning_rate : float, default=1e-4
        Peak rate; a resumed run follows the schedule of its new config.
    weight_decay : float, default=0.0
        AdamW's decoupled weight decay (Adam: must be 0).
    warmup_steps : int, default=0
    cooldown_fraction : float, default=0.0
        Share of ``max_steps`` over which the rate falls to 0 at the end.
    grad_clip : float, default=1.0
        Maximum gradient norm (0 disables clipping).
    precision : {"auto", "fp32", "bf16", "fp16"}, default="auto"
        "auto" is bf16 on CUDA when supported, else fp16 on CUDA, fp32 on CPU.
    """

    optimizer: str = field(default="adam", metadata={"choices": OPTIMIZERS})
    learning_rate: float = 1e-4
    weight_decay: float = 0.0
    warmup_steps: int = 0
    cooldown_fraction: float = 0.0
    grad_clip: float = 1.0
    precision: str = field(default="auto", metadata={"choices": PRECISIONS})

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"Unknown precision {self.precision!r}; choose from {PRECISIONS}.")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"Unknown optimizer {self.optimizer!r}; choose from {OPTIMIZERS}.")
        if self.optimizer == "adam" and self.weight_decay:
            raise ValueError("weight_decay needs optimizer='adamw' (Adam's decay is not decoupled).")
        if self.warmup_steps < 0 or not 0.0 <= self.cooldown_fraction <= 1.0:
            raise ValueError("Need warmup_steps >= 0 and 0 <= cooldown_fraction <= 1.")

    def rate_at(self, step: int, max_steps: int) -> float:
        """Learning rate of the optimiser step that follows ``step`` completed steps."""
        return self._rate(step, max_steps - step, round(self.cooldown_fraction * max_steps))

    def rate_at_time(self, step: int, elapsed: float, duration: float) -> float:
        """Learning rate of the step that follows ``step`` completed steps and ``elapsed``
        seconds of a run planned to train for ``duration`` seconds (warmup in steps)."""
        return self._rate(step, duration - elapsed, self.cooldown_fraction * duration)

    def _rate(self, step: int, remaining: float, cooldown: float) -> float:
        """Warmup over the first steps, then the peak, then a linear fall to 0 over the
        last ``cooldown`` of the run (``remaining`` left), in steps or in seconds."""
        if step < self.warmup_steps:
            return self.learning_rate * (step + 1) / self.warmup_steps
        if cooldown and remaining <= cooldown:
            return self.learning_rate * max(remaining, 0) / cooldown
        return self.learning_rate


@dataclass
class ScheduleConfig:
    """How long to train, and when to log, validate and checkpoint (in steps).

    Parameters
    ----------
    max_steps : int, default=1000
        Length of the run, unless ``max_time`` is given.
    max_time : float, optional
        Wall-clock seconds of the whole run, its final checkpoint and export included
        (resumed runs count the time of their earlier parts). The run trains for
        :attr:`training_seconds`, with the cool-down planned in time, and ignores
        ``max_steps``. The clock and the deadline are checked on control steps (every
        ``log_every`` steps, validations and checkpoints).
    export_reserve : float, default=0.02
        Share of ``max_time`` kept after training for the final checkpoint, the
        export and the summary.
    checkpoint_every : int, default=100
    eval_every : int, default=100
        Validation period (0 disables validation).
    n_val_batches : int, default=4
    log_every : int, default=10
    """

    max_steps: int = 1000
    max_time: float | None = None
    export_reserve: float = 0.02
    checkpoint_every: int = 100
    eval_every: int = 100
    n_val_batches: int = 4
    log_every: int = 10

    def __post_init__(self):
        for name in ("max_steps", "checkpoint_every", "log_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1.")
        if self.eval_every < 0 or self.n_val_batches < 0:
            raise ValueError("eval_every and n_val_batches must be at least 0.")
        if self.max_time is not None and not self.max_time > 0:
            raise ValueError(f"max_time must be a positive number of seconds, got {self.max_time!r}.")
        if not 0 <= self.export_reserve < 1:
            raise ValueError(f"export_reserve must be in [0, 1), got {self.export_reserve!r}.")

    @property
    def training_seconds(self) -> float | None:
        """Seconds of training in a ``max_time`` run: the part not kept for the export."""
        return None if self.max_time is None else self.max_time * (1 - self.export_reserve)


@dataclass
class ExportConfig:
    """The model exported at the end of the run (``out/model``).

    Parameters
    ----------
    dtype : {"float32", "float16"}, default="float32"
    push_to_hub : str, optional
        Hub repo id to push the exported model to.
    """

    dtype: str = field(default="float32", metadata=_flag("export_dtype", choices=tuple(DTYPES)))
    push_to_hub: str | None = None

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"Unknown export_dtype {self.dtype!r}; choose from {sorted(DTYPES)}.")


#: Section name -> its dataclass, in the order of ``train_config.json``.
SECTIONS = {
    "run": RunConfig,
    "model": ModelSection,
    "data": BatchConfig,
    "optimisation": OptimisationConfig,
    "schedule": ScheduleConfig,
    "export": ExportConfig,
}


def _flat_names() -> dict[str, tuple[str, str]]:
    names = {}
    for section, cls in SECTIONS.items():
        for item in dataclasses.fields(cls):
            flat = item.metadata.get("flag", item.name)
            if flat in names or flat in SECTIONS:
                raise RuntimeError(f"Setting name {flat!r} is not unique.")
            names[flat] = (section, item.name)
    return names


#: Flat name of every setting (command-line flag, key of the flat layout) ->
#: ``(section, field)``.
FLAT_NAMES = _flat_names()


@dataclass
class TrainConfig:
    """Settings of a training run, in sections (see the module docstring for the fields).

    Sections may be given as dicts. ``TrainConfig.from_dict({"batch_size": 64, ...})``
    builds one from flat names; ``config.flat()`` lists the settings by flat name.
    """

    run: RunConfig = field(default_factory=RunConfig)
    model: ModelSection = field(default_factory=ModelSection)
    data: BatchConfig = field(default_factory=BatchConfig)
    optimisation: OptimisationConfig = field(default_factory=OptimisationConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    export: ExportConfig = field(default_factory=ExportConfig)

    def __post_init__(self):
        for section, cls in SECTIONS.items():
            value = getattr(self, section)
            if isinstance(value, dict):
                unknown = set(value) - {item.name for item in dataclasses.fields(cls)}
                if unknown:
                    raise ValueError(f"Unknown settings {sorted(unknown)} in section {section!r}.")
                setattr(self, section, cls(**value))
            elif not isinstance(value, cls):
                raise TypeError(f"Section {section!r} must be a {cls.__name__} or a dict.")

    def to_dict(self) -> dict:
        """Nested plain dict (section -> field -> value), as saved in ``train_config.json``."""
        return {section: asdict(getattr(self, section)) for section in SECTIONS}

    def flat(self) -> dict:
        """Every setting by its flat name (the layout of files written before sections)."""
        return {flat: getattr(getattr(self, section), name) for flat, (section, name) in FLAT_NAMES.items()}

    @classmethod
    def from_dict(cls, settings: dict) -> TrainConfig:
        """A config from sections (``{"data": {"batch_size": 64}}``), flat names
        (``{"batch_size": 64}``, the layout of ``train_config.json`` files written before
        sections existed) or both; settings not given keep their defaults."""
        nested = {section: {} for section in SECTIONS}
        flat = {}
        for key, value in settings.items():
            if key in SECTIONS:
                if not isinstance(value, dict):
                    raise ValueError(f"Section {key!r} must be a mapping, not {value!r}.")
                nested[key].update(value)
            else:
                flat[key] = value
        unknown = sorted(set(flat) - set(FLAT_NAMES))
        if unknown:
            raise ValueError(f"Unknown settings {unknown}; known: {sorted(FLAT_NAMES)}.")
        for key, value in flat.items():
            section, name = FLAT_NAMES[key]
            nested[section][name] = value
        return cls(**nested)


def load_train_config(path) -> TrainConfig:
    """The :class:`TrainConfig` of a run's ``train_config.json``, in either layout."""
    return TrainConfig.from_dict(json.loads(Path(path).read_text()))


def _argument(parser, flat: str, cls, item: dataclasses.Field, section: str) -> None:
    """A command-line option for one setting, typed from its field."""
    flag = "--" + flat.replace("_", "-")
    default = item.default_factory() if item.default is dataclasses.MISSING else item.default
    kind = typing.get_type_hints(cls)[item.name]
    arguments = [k for k in typing.get_args(kind) if k is not type(None)]
    kind = arguments[0] if typing.get_origin(kind) is not tuple and arguments else kind
    help_text = f"[{section}] default: {default!r}"
    if kind is bool:
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text)
    elif kind is dict:
        parser.add_argument(
            flag,
            type=json.loads,
            default=argparse.SUPPRESS,
            metavar="JSON",
            help=f"{help_text}; a JSON object, e.g. '{{\"max_length\": 80}}'",
        )
    elif typing.get_origin(kind) is tuple:
        items = typing.get_args(kind)
        parser.add_argument(
            flag,
            type=items[0],
            nargs=len(items),
            default=argparse.SUPPRESS,
            metavar=("LOW", "HIGH") if len(items) == 2 else None,
            help=help_text,
        )
    else:
        parser.add_argument(
            flag, type=kind, choices=item.metadata.get("choices"), default=argparse.SUPPRESS, help=help_text
        )


def add_section_arguments(parser: argparse.ArgumentParser, section: str) -> None:
    """Add an option for every setting of one section (``--batch-size``, ...)."""
    cls = SECTIONS[section]
    for item in dataclasses.fields(cls):
        _argument(parser, item.metadata.get("flag", item.name), cls, item, section)


def command_line_parser(description: str | None = None) -> argparse.ArgumentParser:
    """The training command line: ``--config`` and one option per setting."""
    result = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    result.add_argument("--config", help="YAML file of settings (sections, or flat names as the options)")
    for section in SECTIONS:
        add_section_arguments(result.add_argument_group(section), section)
    return result


def config_from_args(argv=None, description: str | None = None) -> TrainConfig:
    """TrainConfig from ``--config file.yaml`` and command-line overrides."""
    command_line = command_line_parser(description)
    args = vars(command_line.parse_args(argv))
    path = args.pop("config", None)
    settings = {}
    if path:
        import yaml

        settings = TrainConfig.from_dict(yaml.safe_load(Path(path).read_text()) or {}).to_dict()
    for key, value in args.items():
        section, name = FLAT_NAMES[key]
        settings.setdefault(section, {})[name] = value
    config = TrainConfig.from_dict(settings)
    if not config.run.bank or not config.run.out:
        command_line.error("a bank folder (--bank) and a run folder (--out) are needed.")
    return config
