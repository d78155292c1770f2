"""checkpoints: the checkpoint to resume from, found from the files and past unreadable ones."""

import os

import pytest
import tensorflow as tf

from agents.tools import checkpoints


@pytest.fixture
def saved(tmp_path):
    """A directory with checkpoints 1, 2 and 3 of a variable holding their number."""
    value = tf.Variable(0.0)
    checkpoint = tf.train.Checkpoint(value=value)
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=3)
    for number in (1, 2, 3):
        value.assign(float(number))
        manager.save(checkpoint_number=number)
    value.assign(0.0)
    return str(tmp_path), checkpoint, value


def _restore(checkpoint):
    return lambda path: checkpoint.restore(path).assert_existing_objects_matched()


def _truncate(directory, number):
    for name in os.listdir(directory):
        if name.startswith(f"ckpt-{number}.data-"):
            with open(os.path.join(directory, name), "r+b") as handle:
                handle.truncate(3)


def test_lists_checkpoints_with_index_and_data_by_number(saved, tmp_path):
    directory = saved[0]
    open(os.path.join(directory, "ckpt-10.index"), "w").close()  # No data: not listed.
    names = [os.path.basename(path) for path in checkpoints.list_checkpoints(directory)]
    assert names == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert checkpoints.list_checkpoints(str(tmp_path / "missing")) == []


def test_restores_the_newest_without_an_index(saved):
    directory, checkpoint, value = saved
    os.remove(os.path.join(directory, "checkpoint"))
    warnings = []
    path = checkpoints.restore_latest(directory, _restore(checkpoint), True, warnings.append)
    assert os.path.basename(path) == "ckpt-3" and value.numpy() == 3.0 and warnings == []
    state = tf.train.get_checkpoint_state(directory)
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "ckpt-1",
        "ckpt-2",
        "ckpt-3",
    ]
    assert len(state.all_model_checkpoint_timestamps) == 3


def test_skips_unreadable_ones_and_sets_them_aside(saved):
    directory, checkpoint, value = saved
    _truncate(directory, 3)
    warnings = []
    path = checkpoints.restore_latest(directory, _restore(checkpoint), True, warnings.append)
    assert os.path.basename(path) == "ckpt-2" and value.numpy() == 2.0
    assert warnings[0].startswith(f"warning: Checkpoint {directory}/ckpt-3 cannot be read (")
    assert os.path.isfile(os.path.join(directory, "ckpt-3.index.corrupt"))
    assert os.path.basename(tf.train.latest_checkpoint(directory)) == "ckpt-2"


def test_without_set_aside_changes_nothing(saved):
    directory, checkpoint, _ = saved
    _truncate(directory, 3)
    before = sorted(os.listdir(directory))
    checkpoints.restore_latest(directory, _restore(checkpoint), warn=lambda line: None)
    assert sorted(os.listdir(directory)) == before


def test_none_readable_is_an_error_naming_them(saved):
    directory, checkpoint, _ = saved
    for number in (1, 2, 3):
        _truncate(directory, number)
    with pytest.raises(checkpoints.CheckpointError, match=r"\(ckpt-3, ckpt-2, ckpt-1\)"):
        checkpoints.restore_latest(directory, _restore(checkpoint), warn=lambda line: None)


def test_an_index_naming_only_missing_files_is_an_error(saved):
    directory, checkpoint, _ = saved
    for name in os.listdir(directory):
        if name.startswith("ckpt-"):
            os.remove(os.path.join(directory, name))
    with pytest.raises(checkpoints.CheckpointError, match="names ckpt-3, but no checkpoint files"):
        checkpoints.restore_latest(directory, _restore(checkpoint))


def test_mismatching_variables_are_not_taken_for_corruption(saved):
    directory, _, _ = saved
    other = tf.train.Checkpoint(value=tf.Variable([0.0, 0.0]))
    with pytest.raises(ValueError):
        checkpoints.restore_latest(directory, _restore(other))
    assert not any(name.endswith(".corrupt") for name in os.listdir(directory))


def test_empty_directory_restores_nothing(tmp_path):
    assert checkpoints.restore_latest(str(tmp_path), lambda path: None) is None
