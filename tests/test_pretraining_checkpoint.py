"""Checkpoints: the last two kept, a truncated latest one falls back to the previous."""

import logging

import pytest
import torch

from pretraining.checkpoint import (
    CHECKPOINT,
    PREVIOUS_CHECKPOINT,
    UnreadableCheckpointError,
    load_checkpoint,
    load_run_checkpoint,
    save_checkpoint,
)


def _save(folder, step):
    state = {"step": step, "weights": torch.full((3,), float(step))}
    save_checkpoint(state, folder / CHECKPOINT, previous=folder / PREVIOUS_CHECKPOINT)


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def test_saving_keeps_the_checkpoint_before(tmp_path):
    _save(tmp_path, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == [CHECKPOINT]
    _save(tmp_path, 2)
    _save(tmp_path, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [PREVIOUS_CHECKPOINT, CHECKPOINT]
    assert load_checkpoint(tmp_path / CHECKPOINT)["step"] == 3
    assert load_checkpoint(tmp_path / PREVIOUS_CHECKPOINT)["step"] == 2
    state, path = load_run_checkpoint(tmp_path)
    assert state["step"] == 3 and path == tmp_path / CHECKPOINT


def test_a_folder_with_only_checkpoint_pt_resumes_from_it(tmp_path, caplog):
    """Run folders written before two checkpoints were kept."""
    torch.save({"step": 7}, tmp_path / CHECKPOINT)
    with caplog.at_level(logging.WARNING):
        state, path = load_run_checkpoint(tmp_path)
    assert state == {"step": 7} and path == tmp_path / CHECKPOINT and not caplog.records
    assert load_run_checkpoint(tmp_path / "empty") is None


def test_a_truncated_latest_checkpoint_falls_back_to_the_previous_with_a_warning(tmp_path, caplog):
    _save(tmp_path, 1)
    _save(tmp_path, 2)
    _truncate(tmp_path / CHECKPOINT)
    with pytest.raises(UnreadableCheckpointError, match="truncated or corrupt"):
        load_checkpoint(tmp_path / CHECKPOINT)
    with caplog.at_level(logging.WARNING, logger="pretraining.checkpoint"):
        state, path = load_run_checkpoint(tmp_path)
    assert state["step"] == 1 and path == tmp_path / PREVIOUS_CHECKPOINT
    (warning,) = caplog.records
    assert warning.levelno == logging.WARNING
    message = warning.getMessage()
    assert f"{tmp_path / CHECKPOINT} is truncated or corrupt" in message
    assert f"Resuming from the checkpoint before it, {tmp_path / PREVIOUS_CHECKPOINT} (step 1)" in message


def test_a_missing_latest_checkpoint_falls_back_to_the_previous(tmp_path, caplog):
    """A crash between the two renames of a save leaves only the previous checkpoint."""
    _save(tmp_path, 1)
    _save(tmp_path, 2)
    (tmp_path / CHECKPOINT).unlink()
    with caplog.at_level(logging.WARNING, logger="pretraining.checkpoint"):
        state, _ = load_run_checkpoint(tmp_path)
    assert state["step"] == 1 and f"{tmp_path / CHECKPOINT} is missing" in caplog.text


@pytest.mark.parametrize("previous", [True, False])
def test_no_readable_checkpoint_is_a_clear_error_naming_the_files(tmp_path, previous):
    _save(tmp_path, 1)
    if previous:
        _save(tmp_path, 2)
        (tmp_path / PREVIOUS_CHECKPOINT).write_bytes(b"")
    _truncate(tmp_path / CHECKPOINT)
    with pytest.raises(UnreadableCheckpointError, match="No readable checkpoint") as error:
        load_run_checkpoint(tmp_path)
    assert f"{tmp_path / CHECKPOINT} is truncated or corrupt" in str(error.value)
    assert (f"{tmp_path / PREVIOUS_CHECKPOINT} is truncated or corrupt" in str(error.value)) == previous
