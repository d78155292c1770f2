"""Tests for the learning-curve plot: reading summaries back, the PNG, and runs without events."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from agents.config.errors import UsageError
from agents.scripts import plot
from agents.training import curves

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# (env_steps, mean_score or None) per phase, as a run writes them: summaries are numbered by
# training env steps, and a log without finished episodes has no mean_score.
_TRAIN = [(64, None), (128, -1200.0), (192, -900.0), (256, -400.5)]
_EVAL = [(128, -1000.0), (256, -250.25)]


def _write(run_dir, phase, rows):
    writer = tf.summary.create_file_writer(str(run_dir / phase))
    with writer.as_default():
        for env_steps, score in rows:
            if score is not None:
                tf.summary.scalar(f"{phase}/mean_score", score, step=env_steps)
    writer.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    _write(run_dir, "train", _TRAIN)
    _write(run_dir, "eval", _EVAL)
    return str(run_dir)


def _png_size(path):
    """Width and height from the IHDR chunk, after checking the PNG signature."""
    with open(path, "rb") as handle:
        header = handle.read(24)
    assert header[:8] == _PNG_SIGNATURE
    assert header[12:16] == b"IHDR"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def test_read_scalars_returns_steps_and_values_in_order(run_dir):
    steps, values = curves.read_scalars(run_dir, "train", "train/mean_score")
    assert steps.tolist() == [128, 192, 256]
    np.testing.assert_allclose(values, [-1200.0, -900.0, -400.5])
    steps, values = curves.read_scalars(run_dir, "eval", "eval/mean_score")
    assert steps.tolist() == [128, 256]
    assert values.tolist() == [-1000.0, -250.25]


def test_read_scalars_of_a_missing_tag_is_empty(run_dir):
    steps, values = curves.read_scalars(run_dir, "train", "no_such_tag")
    assert steps.shape == values.shape == (0,)


def test_read_scalars_keeps_the_latest_value_of_a_step(tmp_path):
    _write(tmp_path, "train", [(64, -5.0), (128, -4.0)])
    _write(tmp_path, "train", [(128, -3.0), (192, -2.0)])  # A resumed run's second file.
    steps, values = curves.read_scalars(str(tmp_path), "train", "train/mean_score")
    assert steps.tolist() == [64, 128, 192]
    assert values.tolist() == [-5.0, -3.0, -2.0]


def test_read_curve_puts_scores_at_their_env_steps(run_dir):
    env_steps, values = curves.read_curve(run_dir, "eval")
    assert env_steps.tolist() == [128.0, 256.0]
    assert values.tolist() == [-1000.0, -250.25]
    env_steps, _ = curves.read_curve(run_dir, "train")
    assert env_steps.tolist() == [128.0, 192.0, 256.0]


def test_plot_runs_writes_a_png(run_dir, tmp_path):
    lines = {"seed 0": curves.read_curve(run_dir, "eval"), "empty": (np.zeros(0), np.zeros(0))}
    path = curves.plot_runs(lines, str(tmp_path / "sub" / "curve.png"), "title", target=-200.0)
    assert path == str(tmp_path / "sub" / "curve.png")
    width, height = _png_size(path)
    assert width > 100 and height > 100


def test_main_saves_the_curve_in_the_run_dir_by_default(run_dir, capsys):
    assert plot.main(["--run_dir", run_dir]) == 0
    path = os.path.join(run_dir, "learning_curve.png")
    assert capsys.readouterr().out == path + "\n"
    assert os.path.getsize(path) > 0
    _png_size(path)


def test_main_writes_to_out(run_dir, tmp_path, capsys):
    out = str(tmp_path / "out.png")
    assert plot.main(["--run_dir", run_dir, "--out", out]) == 0
    assert capsys.readouterr().out == out + "\n"
    _png_size(out)


@pytest.mark.slow
def test_main_in_a_fresh_process_prints_only_the_path(run_dir, tmp_path):
    # No TensorFlow log lines (absl's, CUDA's, oneDNN's) from the import the event reader makes.
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_XLA_FLAGS")}
    env["PYTHONPATH"] = str(pathlib.Path(__file__).parent.parent.parent)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    out = str(tmp_path / "out.png")
    command = [sys.executable, "-m", "agents.scripts.plot", "--run_dir", run_dir, "--out", out]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == (out + "\n", "")
    _png_size(out)


def test_a_dir_without_event_files_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "train").mkdir()
    assert plot.main(["--run_dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: No TensorBoard event files in")
    assert captured.err.count("\n") == 1
    assert not os.path.exists(tmp_path / "learning_curve.png")
    with pytest.raises(UsageError, match="No TensorBoard event files"):
        curves.read_scalars(str(tmp_path), "train", "mean_score")


def test_read_curve_of_tagged_summaries_on_env_steps(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path / "eval"))
    with writer.as_default():
        tf.summary.scalar("eval/mean_score", -3.0, step=128)
        tf.summary.scalar("eval/mean_score", -1.5, step=256)
    writer.close()
    env_steps, values = curves.read_curve(str(tmp_path), "eval")
    assert env_steps.tolist() == [128.0, 256.0] and values.tolist() == [-3.0, -1.5]
