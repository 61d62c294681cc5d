"""The authors' checkpoints: safe reading and strict conversion, from a file or the Hub.

The checkpoints are the synthetic ones of ``original_checkpoints.py``.
"""

from __future__ import annotations

import math
import os
import pickle
import sys
from collections import OrderedDict

import numpy as np
import pytest
import torch
from hub_server import FakeHub, fit_twice_script, run_python
from original_checkpoints import (
    CONFIGURATIONS,
    LIGHTNING_MODULE,
    REFERENCE_VOCABULARY,
    fake_modules,
    original_shapes,
    original_state,
    save_lightning_checkpoint,
)

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.network.model import ModelConfig, ModelLoadError
from nesymres_sklearn.network.weights import clear_cache, load_folder, load_model
from nesymres_sklearn.original.checkpoint import (
    PickledPlaceholder,
    convert_checkpoint,
    convert_state_dict,
    converted_folder,
    main,
    read_checkpoint,
)

pytestmark = pytest.mark.usefixtures("conversion_cache")


@pytest.mark.parametrize(
    "name, n_keys, n_numbers, spots",
    [
        (
            "100M",
            259,
            26_395_710,
            {
                127: ("enc.selfatt1.I", (1, 50, 512)),
                130: ("enc.selfatt1.mab0.fc_k.weight", (512, 64)),
                167: ("decoder_transfomer.layers.0.self_attn.in_proj_weight", (1536, 512)),
                257: ("fc_out.weight", (60, 512)),
            },
        ),
        (
            "10MPaper",
            130,
            12_113_982,
            {
                52: ("enc.selfatt1.I", (1, 50, 512)),
                65: ("enc.selfatt1.mab1.fc_q.weight", (512, 64)),
                128: ("fc_out.weight", (60, 512)),
            },
        ),
    ],
)
def test_synthetic_key_tables_match_the_original_counts(name, n_keys, n_numbers, spots):
    shapes = original_shapes(*CONFIGURATIONS[name])
    assert len(shapes) == n_keys
    assert sum(math.prod(shape) for shape in shapes.values()) == n_numbers
    keys = list(shapes.items())
    for index, spot in spots.items():
        assert keys[index] == spot


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_conversion_uses_every_key_and_loads_strictly(checkpoint, name, tmp_path):
    n_l_enc, n_layers = CONFIGURATIONS[name]
    convert_checkpoint(checkpoint(name), tmp_path / "model")
    model = load_folder(tmp_path / "model", torch.device("cpu"))
    config = model.config
    assert (config.n_isab, config.n_decoder_layers) == (n_l_enc + 1, n_layers)
    assert (config.encoding, config.encoder_attention_scale, config.search) == ("original", "hidden", "original")
    assert ModelConfig(**config.to_dict()) == config
    assert config.output_size == 60 and config.vocabulary == [REFERENCE_VOCABULARY[i] for i in range(34)]
    assert sum(p.numel() for p in model.parameters()) == sum(
        math.prod(shape) for key, shape in original_shapes(n_l_enc, n_layers).items() if shape
    )
    original = original_state(name)
    ours = model.state_dict()
    last = f"decoder_transfomer.layers.{n_layers - 1}"
    torch.testing.assert_close(ours["encoder.blocks.0.mab0.fc_k.weight"], original["enc.selfatt1.mab0.fc_k.weight"])
    torch.testing.assert_close(
        ours[f"encoder.blocks.{n_l_enc}.inducing_points"], original[f"enc.selfatt.{n_l_enc - 1}.I"]
    )
    torch.testing.assert_close(
        ours[f"decoder.layers.{n_layers - 1}.cross_attn.v_proj.bias"],
        original[f"{last}.multihead_attn.in_proj_bias"][1024:],
    )
    torch.testing.assert_close(ours["decoder.head.bias"], original["fc_out.bias"])


@pytest.mark.slow
def test_fit_with_the_full_size_checkpoint_converts_once(checkpoint, conversion_cache, xy):
    clear_cache()
    X, y = xy
    path = checkpoint("100M")
    # The network alone: Operon's search (seconds, twice) is not what this test reads.
    regressor = NeSymReSRegressor(
        model=str(path), beam_size=2, n_restarts=1, max_points=30, refine=None, random_state=0
    )
    regressor.fit(X, y)
    assert np.isfinite(regressor.equations_.loc[regressor.best_index_, "score_lower_is_better"])
    assert load_model(str(path), device="cpu").config.n_isab == 6
    (folder,) = conversion_cache.iterdir()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert converted_folder(path) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp  # not converted again
    with pytest.warns(UserWarning, match="wraps its exponent"):
        regressor.fit(X, np.where(np.arange(len(y)) % 2, y, 1e-7))  # below 2**-15, not 0; units in range


def strip_key(state, key):
    return OrderedDict((k, v) for k, v in state.items() if k != key)


@pytest.fixture(scope="module")
def small_state():
    return original_state("10MPaper")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda s: strip_key(s, "decoder_transfomer.layers.1.norm3.bias"),
            r"lacks 1 key \(decoder_transfomer\.layers\.1\.norm3\.bias\)",
        ),
        (lambda s: strip_key(s, "enc.std"), r"lacks 1 key \(enc\.std\)"),
        (lambda s: OrderedDict(s, **{"model.extra": torch.zeros(3)}), r"has 1 key \(model\.extra\) that the original"),
        (
            lambda s: OrderedDict(s, **{"enc.selfatt1.mab0.fc_k.weight": torch.zeros(512, 48)}),
            r"Key enc\.selfatt1\.mab0\.fc_k\.weight has shape \[512, 48\]; .* needs \[512, 64\]",
        ),
        (
            lambda s: OrderedDict(s, **{"decoder_transfomer.layers.0.self_attn.in_proj_bias": torch.zeros(512)}),
            r"in_proj_bias has shape \[512\]; .* needs \[1536\]",
        ),
        (
            lambda s: OrderedDict(s, **{"fc_out.bias": torch.zeros(60, dtype=torch.long)}),
            r"Key fc_out\.bias holds torch\.int64",
        ),
        (lambda s: OrderedDict((k, v) for k, v in s.items() if not k.startswith("decoder")), r"no decoder layers"),
    ],
)
def test_wrong_keys_and_shapes_are_named(small_state, change, message):
    with pytest.raises(ModelLoadError, match=message):
        convert_state_dict(change(small_state))


def test_a_bad_checkpoint_file_names_the_file_and_the_key(small_state, tmp_path):
    save_lightning_checkpoint(tmp_path / "bad.ckpt", strip_key(small_state, "fc_out.weight"))
    with pytest.raises(ModelLoadError, match=r"bad\.ckpt: The state_dict lacks 1 key \(fc_out\.weight\)"):
        NeSymReSRegressor(model=str(tmp_path / "bad.ckpt")).fit(np.ones((5, 1)), np.arange(5.0))


class RunsACommand:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def test_a_pickle_that_runs_code_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    torch.save({"state_dict": {}, "payload": RunsACommand(f"touch {marker}")}, tmp_path / "evil.ckpt")
    with pytest.raises(ModelLoadError, match=r"refers to posix\.system; loading it could run code, so it is refused"):
        read_checkpoint(tmp_path / "evil.ckpt")
    with pytest.raises(ModelLoadError, match="refused"):
        convert_checkpoint(tmp_path / "evil.ckpt", tmp_path / "out")
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_lightning_and_omegaconf_objects_become_inert_placeholders(tmp_path):
    marker = tmp_path / "called"

    def touch(path):
        open(path, "w").close()

    class Callback:
        def __reduce__(self):
            return touch, (str(marker),)

    ModelCheckpoint = type("ModelCheckpoint", (), {})
    DictConfig = type("DictConfig", (), {})
    hyper_parameters = DictConfig()
    hyper_parameters.__dict__["_content"] = {"lr": 1e-4}
    with fake_modules(
        {
            LIGHTNING_MODULE: {"ModelCheckpoint": ModelCheckpoint},
            "pytorch_lightning.utilities": {"touch": touch},
            "omegaconf.dictconfig": {"DictConfig": DictConfig},
        }
    ):
        torch.save(
            {
                "state_dict": {"w": torch.arange(3.0)},
                "callbacks": {ModelCheckpoint: {"k": Callback()}},
                "hyper_parameters": hyper_parameters,
            },
            tmp_path / "lightning.ckpt",
        )
    assert "pytorch_lightning" not in sys.modules and "omegaconf" not in sys.modules
    checkpoint = read_checkpoint(tmp_path / "lightning.ckpt")
    torch.testing.assert_close(checkpoint["state_dict"]["w"], torch.arange(3.0))
    ((key, value),) = checkpoint["callbacks"].items()
    assert key is PickledPlaceholder and isinstance(value["k"], PickledPlaceholder)
    assert value["k"].args == (str(marker),) and not marker.exists()  # the function was never called
    assert checkpoint["hyper_parameters"].state == {"_content": {"lr": 1e-4}}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not a zip file at all", "not a checkpoint written by torch.save"),
        (pickle.dumps({"state_dict": {}}), "not a checkpoint written by torch.save"),
    ],
)
def test_files_that_are_not_torch_checkpoints(tmp_path, content, message):
    (tmp_path / "x.ckpt").write_bytes(content)
    with pytest.raises(ModelLoadError, match=message):
        read_checkpoint(tmp_path / "x.ckpt")


def test_old_torch_is_told_to_upgrade(tmp_path, monkeypatch):
    monkeypatch.setattr(torch, "__version__", torch.torch_version.TorchVersion("2.5.1"))
    with pytest.raises(RuntimeError, match=r"needs torch >= 2\.6 \(this is torch 2\.5\.1\)"):
        read_checkpoint(tmp_path / "any.ckpt")


def test_a_checkpoint_without_state_dict(tmp_path):
    torch.save({"model": {}}, tmp_path / "x.ckpt")
    with pytest.raises(ModelLoadError, match="has no 'state_dict'"):
        read_checkpoint(tmp_path / "x.ckpt")


def test_command_line_converter(checkpoint, tmp_path, capsys):
    assert main([str(checkpoint("10MPaper")), str(tmp_path / "out")]) == 0
    assert "Wrote" in capsys.readouterr().out
    assert {"config.json", "model.safetensors"} <= set(os.listdir(tmp_path / "out"))
    assert main([str(tmp_path / "missing.ckpt"), str(tmp_path / "out2")]) == 1
    assert "error:" in capsys.readouterr().err


HUB_FIT = fit_twice_script("authors/nesymres/10M.ckpt")
MISSING_FILE = """
    import nesymres_sklearn.original  # registers the .ckpt converter
    from nesymres_sklearn.network.weights import resolve_folder
    try:
        resolve_folder("authors/nesymres/100M.ckpt")
    except Exception as error:
        print(type(error).__name__, "|", error)
"""


@pytest.mark.slow
def test_checkpoint_from_the_hub_is_downloaded_and_converted_once(checkpoint, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "10M.ckpt").symlink_to(checkpoint("10MPaper"))
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HOME": str(tmp_path / "home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    converted = tmp_path / "home" / "nesymres-sklearn" / "converted"
    with FakeHub({"authors/nesymres": repo}) as hub:
        result = run_python(HUB_FIT, {**env, "HF_ENDPOINT": hub.endpoint})
        assert result.returncode == 0, result.stderr
        assert "REFIT OK" in result.stdout
        assert hub.downloads == ["authors/nesymres/10M.ckpt"]
        missing = run_python(MISSING_FILE, {**env, "HF_ENDPOINT": hub.endpoint})
    assert missing.stdout.startswith(
        "ModelLoadError | Hub repository 'authors/nesymres' lacks a file the model needs (100M.ckpt)"
    ), missing.stderr
    (folder,) = converted.iterdir()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    offline = run_python(HUB_FIT, {**env, "HF_HUB_OFFLINE": "1"})  # the server is gone
    assert offline.returncode == 0, offline.stderr
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp and list(converted.iterdir()) == [folder]
