import json
import os
import shutil
import socket
import time
import warnings

import pytest
import torch
from hub_server import COMMIT, FakeHub, fit_twice_script, run_python

from nesymres_sklearn.network.model import NeSymReSModel
from nesymres_sklearn.network.weights import (
    BUNDLED_FOLDER,
    ModelLoadError,
    clear_cache,
    load_folder,
    load_model,
    resolve_device,
    resolve_folder,
)


def test_bundled_model_loads_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model("bundled", device="cpu")
    assert isinstance(model, NeSymReSModel) and not model.training
    assert model.config.n_variables == 3
    assert (BUNDLED_FOLDER / "config.json").is_file()


def test_models_are_cached_per_source_and_device(tiny_model):
    clear_cache()
    first = load_model(tiny_model, device="cpu")
    assert load_model(str(tiny_model), device="cpu") is first
    assert load_model(tiny_model, device="auto") is first  # auto resolves to cpu here
    clear_cache()
    assert load_model(tiny_model, device="cpu") is not first


def test_rewritten_weights_are_reloaded(tiny_model, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model, folder)
    first = load_model(folder, device="cpu")
    torch.manual_seed(1)
    NeSymReSModel(first.config).save_pretrained(folder)
    os.utime(folder / "model.safetensors", ns=(1, 1))
    assert load_model(folder, device="cpu") is not first


def test_half_precision_weights_load_as_float32(tiny_model, tmp_path):
    from safetensors.torch import load_file, save_file

    shutil.copytree(tiny_model, tmp_path / "half")
    state = load_file(tmp_path / "half" / "model.safetensors")
    save_file({k: v.half() for k, v in state.items()}, tmp_path / "half" / "model.safetensors")
    model = load_folder(tmp_path / "half", torch.device("cpu"))
    assert all(p.dtype == torch.float32 for p in model.parameters())
    name = next(iter(state))
    torch.testing.assert_close(model.state_dict()[name], state[name].half().float())


def test_missing_files_are_named(tiny_model, tmp_path):
    (tmp_path / "config.json").write_text((tiny_model / "config.json").read_text())
    with pytest.raises(ModelLoadError, match="has no model.safetensors"):
        load_folder(tmp_path, torch.device("cpu"))


def test_corrupt_weights(tiny_model, tmp_path):
    shutil.copytree(tiny_model, tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ModelLoadError, match="corrupt"):
        load_folder(tmp_path / "m", torch.device("cpu"))


def test_weights_that_do_not_match_the_config(tiny_model, tmp_path):
    shutil.copytree(tiny_model, tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    config["n_decoder_layers"] += 1
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="does not match config.json"):
        load_folder(tmp_path / "m", torch.device("cpu"))


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(n_heads=0), "n_heads must be a positive integer, got 0"),
        (dict(hidden_size=-128), "hidden_size must be a positive integer, got -128"),
        (dict(hidden_size="128"), "hidden_size must be a positive integer, got '128'"),
        (dict(hidden_size=33), r"hidden_size \(33\) must be a multiple of n_heads"),
        (dict(vocabulary=None), "has no 'vocabulary' field"),
        (dict(hiden_size=64), r"unknown fields \['hiden_size'\]"),
    ],
)
def test_invalid_config_fields_are_named(tiny_model, tmp_path, change, message):
    shutil.copytree(tiny_model, tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    for field, value in change.items():
        if value is None:
            del config[field]
        else:
            config[field] = value
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=message):
        load_folder(tmp_path / "m", torch.device("cpu"))
    (tmp_path / "m" / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="is not valid JSON"):
        load_folder(tmp_path / "m", torch.device("cpu"))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_weights_with_non_finite_values_are_refused_by_name(tiny_model, tmp_path, bad):
    from safetensors.torch import load_file, save_file

    shutil.copytree(tiny_model, tmp_path / "m")
    state = load_file(tmp_path / "m" / "model.safetensors")
    name = sorted(state)[3]
    state[name].view(-1)[0] = bad
    save_file(state, tmp_path / "m" / "model.safetensors")
    with pytest.raises(ModelLoadError, match=f"NaN or infinite values in 1 tensor\\(s\\), first '{name}'"):
        load_folder(tmp_path / "m", torch.device("cpu"))


def test_degenerate_weights_load_with_a_warning(tiny_model, tmp_path):
    from safetensors.torch import load_file, save_file

    shutil.copytree(tiny_model, tmp_path / "m")
    state = load_file(tmp_path / "m" / "model.safetensors")
    save_file({name: torch.zeros_like(tensor) for name, tensor in state.items()}, tmp_path / "m" / "model.safetensors")
    with pytest.warns(UserWarning, match="holds degenerate weights: every tensor is constant"):
        load_folder(tmp_path / "m", torch.device("cpu"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_folder(tiny_model, torch.device("cpu"))


def test_unknown_sources_and_devices(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither 'bundled'"):
        resolve_folder(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="revision applies to Hub models only"):
        resolve_folder("bundled", revision="v1")
    with pytest.raises(ValueError, match="not a valid torch device"):
        resolve_device("gpu-please")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")
    with pytest.raises(ValueError, match="device='meta' holds no data"):
        resolve_device("meta")
    if not torch.backends.mps.is_available():
        with pytest.raises(ValueError, match="MPS is not available"):
            resolve_device("mps")


def test_a_missing_folder_beside_existing_ones_is_not_taken_for_a_hub_id(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="there is no folder .*models/mine .*not taken for a Hugging Face"):
        resolve_folder("models/mine")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_download_from_hub_then_offline_cache(tiny_model, tmp_path):
    cache = {"HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    with FakeHub({"org/tiny": tiny_model}) as hub:
        result = run_python(fit_twice_script("org/tiny"), {**cache, "HF_ENDPOINT": hub.endpoint})
        assert result.returncode == 0, result.stderr
        assert sorted(hub.downloads) == ["org/tiny/config.json", "org/tiny/model.safetensors"]
        assert "REFIT OK" in result.stdout  # the second fit reused the cached model
        pinned = run_python(fit_twice_script("org/tiny", COMMIT), {**cache, "HF_ENDPOINT": hub.endpoint})
        assert pinned.returncode == 0, pinned.stderr
        assert len(hub.downloads) == 2  # same commit: served from the cache
    snapshot = tmp_path / "cache" / "models--org--tiny" / "snapshots" / COMMIT
    assert (snapshot / "model.safetensors").is_file()
    # The server is gone: offline mode uses the cache.
    offline = run_python(fit_twice_script("org/tiny"), {**cache, "HF_HUB_OFFLINE": "1"})
    assert offline.returncode == 0, offline.stderr
    assert "EXPRESSION" in offline.stdout


def test_unreachable_hub_gives_a_clear_error(tmp_path, monkeypatch):
    from huggingface_hub import constants

    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    waits = []
    monkeypatch.setattr(time, "sleep", waits.append)  # huggingface_hub's retry back-off, not waited here
    with pytest.raises(ConnectionError, match=f"not a local folder .*the Hugging Face Hub at {endpoint} could not"):
        resolve_folder("org/tiny")
    assert not waits, "huggingface_hub retried: an unreachable Hub should cost one probe, not 24 s of retries"


def test_offline_mode_with_an_uncached_id_says_so(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ConnectionError, match="HF_HUB_OFFLINE=1 is set and it is not in the local Hub cache") as error:
        resolve_folder("org/tiny")
    assert "could not be reached" not in str(error.value)


@pytest.mark.slow
def test_hub_errors_name_the_problem(tiny_model, tmp_path):
    incomplete = tmp_path / "incomplete"
    incomplete.mkdir()
    shutil.copy(tiny_model / "config.json", incomplete / "config.json")
    code = """
        from nesymres_sklearn.network.weights import resolve_folder
        for repo, revision in [("org/missing", None), ("org/tiny", "v9"), ("org/incomplete", None)]:
            try:
                resolve_folder(repo, revision)
            except Exception as error:
                print(type(error).__name__, "|", error)
    """
    with FakeHub({"org/tiny": tiny_model, "org/incomplete": incomplete}) as hub:
        result = run_python(code, {"HF_HUB_CACHE": str(tmp_path / "cache"), "HF_ENDPOINT": hub.endpoint})
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, result.stderr
    assert lines[0].startswith("ValueError | Hub repository 'org/missing' was not found")
    assert lines[1].startswith("ValueError | Revision 'v9' does not exist")
    assert lines[2].startswith("ModelLoadError | Hub repository 'org/incomplete' lacks a file")


PUSH_AND_FIT = """
    import numpy as np
    from huggingface_hub import HfApi
    from nesymres_sklearn import NeSymReSRegressor
    from nesymres_sklearn.network.weights import load_folder
    from pathlib import Path
    import torch

    model = load_folder(Path({folder!r}), torch.device("cpu"))
    model.push_to_hub("org/pushed", token="hf_test")
    api = HfApi(token="hf_test")
    api.create_repo("org/bundled", exist_ok=True)
    api.upload_folder(folder_path={bundled!r}, repo_id="org/bundled")
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(40, 2))
    for repo in ("org/pushed", "org/bundled"):
        reg = NeSymReSRegressor(model=repo, beam_size=2, n_restarts=1, refine=None, random_state=0)
        reg.fit(X, X[:, 0] * X[:, 1])
        print("FITTED", repo, reg.predict(X).shape)
"""


@pytest.mark.slow
def test_push_to_hub_then_fit_from_the_pushed_repositories(tiny_model, tmp_path):
    env = {"HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    with FakeHub({}, upload_root=tmp_path / "uploads") as hub:
        code = PUSH_AND_FIT.format(folder=str(tiny_model), bundled=str(BUNDLED_FOLDER))
        result = run_python(code, {**env, "HF_ENDPOINT": hub.endpoint})
        assert result.returncode == 0, result.stderr
        assert hub.commits == ["org/pushed", "org/bundled"]
        assert "FITTED org/pushed (40,)" in result.stdout and "FITTED org/bundled (40,)" in result.stdout
        pushed, bundled = hub.repos["org/pushed"], hub.repos["org/bundled"]
    assert (pushed / "model.safetensors").read_bytes() == (tiny_model / "model.safetensors").read_bytes()
    # The bundled folder is a Hub repository as it stands: its model card travels with it.
    assert sorted(p.name for p in bundled.iterdir()) == ["README.md", "config.json", "model.safetensors"]


def test_bundled_model_card_has_hub_metadata():
    from huggingface_hub import ModelCard

    card = ModelCard.load(BUNDLED_FOLDER / "README.md")
    assert card.data.library_name == "nesymres-sklearn"
    assert card.data.license == "mit"
    assert "symbolic-regression" in card.data.tags
    config = json.loads((BUNDLED_FOLDER / "config.json").read_text())
    assert f"{config['hidden_size']}" in card.text  # the card describes these weights
