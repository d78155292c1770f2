"""Tests for what a run shows in TensorBoard: one step counter, grouped tags, histograms, hparams.

One `debug` run (256 train env steps in turns of 128, reports and summaries every 64, eval
phases of 200 env steps) in-process.
"""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.summary.summary_iterator import summary_iterator

from agents.scripts import train
from agents.training import curves as plot
from agents.training import tensorboard_log
from tests.scripts.capture import run_main


def _events(directory):
    """Tag -> [(step, value proto)] of every summary under `directory` (not recursive)."""
    found = {}
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        for event in summary_iterator(path):
            for value in event.summary.value:
                found.setdefault(value.tag, []).append((event.step, value))
    return found


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("logdir"))
    code, _, _ = run_main(
        train.main,
        ["--config=debug", f"--logdir={logdir}", "--set", "max_episode_steps=50", "log_every=64"],
    )
    assert code == 0
    (run,) = os.listdir(logdir)
    return os.path.join(logdir, run)


def test_tags_are_grouped():
    assert tensorboard_log.tag("train", "policy_loss") == "loss/policy_loss"
    assert tensorboard_log.tag("train", "intrinsic_reward") == "rnd/intrinsic_reward"
    assert tensorboard_log.tag("eval", "mean_score") == "eval/mean_score"
    assert tensorboard_log.tag("train", "explained_variance") == "train/explained_variance"
    assert tensorboard_log.tag("train", "env_steps") is None  # The x axis, not a curve.


@pytest.mark.slow
def test_every_summary_and_checkpoint_is_on_training_env_steps(run_dir):
    # One TensorBoard entry: both phases' summaries in the run directory, told by their tags.
    train_events = eval_events = _events(run_dir)
    # log_every 64 over 256 training env steps; eval after each turn of 128.
    assert [step for step, _ in train_events["loss/policy_loss"]] == [64, 128, 192, 256]
    assert [step for step, _ in eval_events["eval/mean_score"]] == [128, 256]
    assert "train/env_steps" not in train_events and "env_steps" not in train_events
    checkpoints = glob.glob(f"{run_dir}/checkpoints/ckpt-*.index")
    assert sorted(os.path.basename(path) for path in checkpoints)[-1] == "ckpt-256.index"
    env_steps, _ = plot.read_curve(run_dir, "eval")
    assert env_steps.tolist() == [128.0, 256.0]


def test_histograms_of_the_rollout_and_the_policy_spread(run_dir):
    train_events = _events(run_dir)
    names = ("rollout_action", "rollout_value", "rollout_advantage", "rollout_log_prob")
    for name in (*names, "policy_log_std"):
        steps_values = train_events[f"train/{name}"]
        assert [step for step, _ in steps_values] == [64, 128, 192, 256], name
        buckets = tf.make_ndarray(steps_values[-1][1].tensor)
        assert buckets.shape[-1] == 3 and np.all(np.isfinite(buckets)), name
    # 16 steps x 2 envs x 1 action dimension of Pendulum in each rollout.
    assert tf.make_ndarray(train_events["train/rollout_action"][0][1].tensor)[:, 2].sum() == 32


def test_config_is_in_the_hparams_plugin(run_dir):
    from tensorboard.plugins.hparams import plugin_data_pb2

    (_, value), *_ = _events(run_dir)["_hparams_/session_start_info"]
    data = plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    hparams = data.session_start_info.hparams
    assert hparams["learning_rate"].number_value == pytest.approx(3e-4)
    assert hparams["env"].string_value == "Pendulum-v1"
    assert hparams["policy_layers"].string_value == "[8]"
