"""TensorBoard as a consumer of the report stream: what each report writes, and failed writes."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.summary.summary_iterator import summary_iterator

from agents.tools.loop import Report, SummaryError
from agents.training.tensorboard_log import TensorBoardLog


def _scalars(directory):
    """Tag -> [(step, value)] of every scalar, and histogram as its count of values."""
    found = {}
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        for event in summary_iterator(path):
            for value in event.summary.value:
                tensor = tf.make_ndarray(value.tensor)
                figure = float(tensor) if tensor.ndim == 0 else float(tensor[:, 2].sum())
                found.setdefault(value.tag, []).append((event.step, figure))
    return found


def test_each_report_is_written_at_the_training_env_steps(tmp_path):
    log = TensorBoardLog(str(tmp_path))
    metrics = {"policy_loss": 0.5, "env_steps": 128.0, "rollout_action": np.array([1.0, 2.0])}
    log.write(Report("train", 999, -5.0, 2, metrics, length=7.0), env_steps=128)
    log.write(Report("eval", 1199, float("nan"), 0, {"env_steps": 128.0}), env_steps=128)
    log.write(Report("eval", 1399, -3.0, 4, {}, length=9.5, success_rate=0.25), env_steps=256)
    log.close()
    assert _scalars(str(tmp_path)) == {
        "train/mean_score": [(128, -5.0)],
        "train/mean_length": [(128, 7.0)],
        "loss/policy_loss": [(128, 0.5)],
        "train/rollout_action": [(128, 2.0)],  # A histogram of the two actions.
        "eval/mean_score": [(256, -3.0)],  # None at 128: no episode ended.
        "eval/mean_length": [(256, 9.5)],
        "eval/success_rate": [(256, 0.25)],  # Only where a success score gave one.
    }


def test_a_write_the_disk_drops_without_an_error_stops_as_a_failed_write(tmp_path, monkeypatch):
    log = TensorBoardLog(str(tmp_path))
    log.write(Report("train", 1, -5.0, 1, {}), env_steps=64)
    # TensorFlow's writer drops a write to a full disk without raising: nothing reaches the file.
    monkeypatch.setattr(tf.summary.experimental, "write_raw_pb", lambda protos: None)
    with pytest.raises(SummaryError, match="its events file stopped growing at .* bytes"):
        log.write(Report("train", 2, -4.0, 1, {}), env_steps=128)
    log.close()


def test_a_writer_that_cannot_be_made_is_one_error_naming_the_directory(tmp_path):
    path = tmp_path / "a file"
    path.write_text("")
    with pytest.raises(SummaryError, match=f"Cannot write summaries to '{path}'"):
        TensorBoardLog(str(path))


def test_rank_other_than_0_writes_nothing(tmp_path):
    log = TensorBoardLog(None)
    log.write(Report("train", 1, -5.0, 1, {"policy_loss": 1.0}), env_steps=64)
    log.close()
    assert os.listdir(tmp_path) == []


def test_a_run_directory_moved_away_is_left_to_the_run_to_tell(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    log = TensorBoardLog(str(run_dir))
    log.write(Report("train", 1, -5.0, 1, {}), env_steps=64)
    os.rename(run_dir, tmp_path / "elsewhere")  # The run's loop finds it gone, and says so.
    log.write(Report("train", 2, -4.0, 1, {}), env_steps=128)
    log.close()
    assert _scalars(str(tmp_path / "elsewhere"))["train/mean_score"] == [(64, -5.0), (128, -4.0)]
