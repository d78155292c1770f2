"""Tests for Loop: phases, cadences, score averaging, summaries and checkpoints."""

import glob
import math
import os

import numpy as np
import pytest
import tensorflow as tf

from agents import tools


class _Scripted:
    """Step function that returns a fixed sequence of (done, score) batches."""

    def __init__(self, dones, scores):
        self._items = list(zip(dones, scores))
        self.calls = 0
        self.resets = []

    def __call__(self, reset):
        self.resets.append(reset)
        done, score = self._items[self.calls % len(self._items)]
        self.calls += 1
        return np.array(done), np.array(score, np.float32), {"loss": float(self.calls)}


def test_report_cadence_global_step_and_score_averaging():
    loop = tools.Loop(None)
    step_fn = _Scripted([[True, False], [False, True], [True, True]], [[1, 9], [9, 3], [5, 7]])
    loop.add_phase("train", step_fn, steps=100, report_every=6)
    reports = list(loop.run(max_step=12))
    assert [r.step for r in reports] == [6, 12]
    assert loop.step == 12
    # Only scores of finished episodes count: (1 + 3 + 5 + 7) / 4.
    assert reports[0].score == pytest.approx(4.0) and reports[0].episodes == 4
    assert reports[0].metrics == {"loss": 3.0}


def test_success_rate_is_the_share_of_finished_episodes_above_the_success_score(tmp_path):
    dones, scores = [[True, True, False], [True, False, True]], [[0.5, 0.0, 9.0], [-1.0, 9.0, 2.0]]
    loop = tools.Loop(str(tmp_path), success_score=0.0)
    loop.add_phase("train", _Scripted(dones, scores), steps=100, report_every=6, log_every=6)
    reports = list(loop.run(max_step=12))
    # Finished: 0.5, 0.0, -1.0, 2.0; above 0: 0.5 and 2.0 (a score equal to it is no success).
    assert [r.success_rate for r in reports] == [0.5, 0.5] and reports[0].episodes == 4
    assert _summaries(str(tmp_path / "train"))["train/success_rate"] == [(6, 0.5), (12, 0.5)]
    plain = tools.Loop(None)
    plain.add_phase("train", _Scripted(dones, scores), steps=100, report_every=6)
    assert all(math.isnan(r.success_rate) for r in plain.run(max_step=12))
    none_ended = tools.Loop(None, success_score=0.0)
    none_ended.add_phase("train", _Scripted([[False]], [[1.0]]), steps=10, report_every=5)
    assert math.isnan(next(none_ended.run(max_step=5)).success_rate)


def test_a_turn_ends_on_a_report_where_the_cadence_does_not_divide_the_phase():
    loop = tools.Loop(None)
    train = _Scripted([[True, False]], [[1.0, 0.0]])  # Two env steps per call.
    evaluate = _Scripted([[True]], [[5.0]])
    loop.add_phase("train", train, steps=10, report_every=4)
    loop.add_phase("eval", evaluate, steps=1)
    reports = [(r.phase, r.step) for r in loop.run(max_step=22)]
    # Train steps 4 and 8, the turn's end at 10, then its next turn's 12 (phase step 12), ...
    assert reports == [
        ("train", 4), ("train", 8), ("train", 10), ("eval", 11),
        ("train", 13), ("train", 17), ("train", 21), ("eval", 22),
    ]  # fmt: skip


def test_report_without_finished_episodes_is_nan():
    loop = tools.Loop(None)
    loop.add_phase("train", _Scripted([[False]], [[1.0]]), steps=10, report_every=5)
    report = next(loop.run(max_step=5))
    assert math.isnan(report.score) and report.episodes == 0


def test_phases_alternate_and_average_separately():
    loop = tools.Loop(None)
    train = _Scripted([[True, True]], [[1.0, 1.0]])
    evaluate = _Scripted([[True, False]], [[10.0, 0.0]])
    loop.add_phase("train", train, steps=4)
    loop.add_phase("eval", evaluate, steps=2)
    reports = list(loop.run(max_step=12))
    assert [(r.phase, r.step) for r in reports] == [
        ("train", 4),
        ("eval", 6),
        ("train", 10),
        ("eval", 12),
    ]
    assert [r.score for r in reports] == [1.0, 10.0, 1.0, 10.0]
    assert (train.calls, evaluate.calls) == (4, 2)
    # Each turn of a phase starts with reset=True.
    assert train.resets == [True, False, True, False] and evaluate.resets == [True, True]


def test_batched_done_counts_every_step():
    loop = tools.Loop(None)
    # One call makes 3 simulation steps of 2 envs: done has shape [3, 2].
    step_fn = _Scripted([[[True, False], [False, False], [True, True]]], [[[2, 0], [0, 0], [4, 6]]])
    loop.add_phase("train", step_fn, steps=60, report_every=12)
    reports = list(loop.run(max_step=12))
    assert [r.step for r in reports] == [12] and step_fn.calls == 2
    assert reports[0].score == pytest.approx(4.0) and reports[0].episodes == 6


def test_summaries_and_checkpoints_and_resume(tmp_path):
    logdir = str(tmp_path)

    def make_loop():
        step = tf.Variable(0, dtype=tf.int64)
        weight = tf.Variable(0.0)
        checkpoint = tf.train.Checkpoint(step=step, weight=weight)
        return tools.Loop(logdir, step, checkpoint), weight

    loop, weight = make_loop()

    def step_fn(reset):
        weight.assign_add(1.0)
        return np.array([True, True]), np.array([1.0, 2.0]), {"loss": 0.5}

    loop.add_phase("train", step_fn, steps=100, log_every=4, checkpoint_every=6)
    list(loop.run(max_step=14))
    assert glob.glob(os.path.join(logdir, "train", "events.out.tfevents.*"))
    checkpoints = loop.checkpoint_manager.checkpoints
    assert [os.path.basename(c) for c in checkpoints] == ["ckpt-6", "ckpt-12"]

    resumed, weight = make_loop()
    assert resumed.step == 12 and weight.numpy() == 6.0
    resumed.add_phase("train", step_fn, steps=100)
    assert [r.step for r in resumed.run(max_step=16)] == []
    assert resumed.step == 16


def _summaries(directory):
    """Tag -> [(step, value)] of the scalar summaries written under `directory`."""
    from tensorflow.python.summary.summary_iterator import summary_iterator

    values = {}
    for path in glob.glob(os.path.join(directory, "events*")):
        for event in summary_iterator(path):
            for value in event.summary.value:
                values.setdefault(value.tag, []).append(
                    (event.step, float(tf.make_ndarray(value.tensor)))
                )
    return values


def test_summary_values_are_written(tmp_path):
    loop = tools.Loop(str(tmp_path))
    loop.add_phase("eval", _Scripted([[True]], [[3.0]]), steps=10, log_every=2)
    list(loop.run(max_step=4))
    values = _summaries(os.path.join(str(tmp_path), "eval"))
    assert values["eval/mean_score"] == [(2, 3.0), (4, 3.0)]
    assert [v for _, v in values["eval/loss"]] == [2.0, 4.0]
    assert "eval/mean_length" not in values  # The step function gave no lengths.


def test_mean_length_of_episodes_finished_since_the_last_log_per_phase(tmp_path):
    def scripted(dones, lengths):
        calls = iter(zip(dones, lengths))

        def step_fn(reset):
            done, length = next(calls)
            return np.array(done), np.zeros(len(done)), {"length": np.array(length), "x": 1.0}

        return step_fn

    loop = tools.Loop(str(tmp_path))
    # Two envs; the lengths where done is False are of running episodes and must not count.
    dones = [[True, False], [False, True], [True, True], [False, False]]
    train = scripted(dones, [[3, 1], [1, 5], [2, 8], [6, 9]])
    evaluate = scripted([[False, True]], [[9, 4]])
    loop.add_phase("train", train, steps=8, log_every=4)
    loop.add_phase("eval", evaluate, steps=2, log_every=2)
    reports = list(loop.run(max_step=10))
    assert all(report.metrics == {"x": 1.0} for report in reports)  # Lengths are no metric.
    train_values = _summaries(os.path.join(str(tmp_path), "train"))
    # The log after 4 steps counts the episodes of lengths 3 and 5; the next one, 2 and 8.
    assert [v for _, v in train_values["train/mean_length"]] == [4.0, 5.0]
    eval_values = _summaries(os.path.join(str(tmp_path), "eval"))
    assert [v for _, v in eval_values["eval/mean_length"]] == [4.0]


def test_rejects_empty_phase():
    loop = tools.Loop(None)
    with pytest.raises(ValueError, match="steps > 0"):
        loop.add_phase("train", lambda reset: None, steps=0)
    with pytest.raises(ValueError, match="add_phase"):
        next(loop.run(max_step=1))


def test_should_stop_ends_the_run_between_calls():
    loop = tools.Loop(None)
    step_fn = _Scripted([[False, True]], [[0.0, 1.0]])
    loop.add_phase("train", step_fn, steps=100, report_every=2)
    reports = list(loop.run(max_step=100, should_stop=lambda: step_fn.calls == 3))
    assert [r.step for r in reports] == [2, 4, 6]
    assert loop.step == 6 and step_fn.calls == 3


def test_a_save_cut_short_never_becomes_the_latest_checkpoint(tmp_path, monkeypatch):
    # The process dies after a checkpoint's files were written but before TensorFlow recorded
    # it in the `checkpoint` state file: a resumed run must start from the previous checkpoint.
    logdir = str(tmp_path)
    step, weight = tf.Variable(0, dtype=tf.int64), tf.Variable(0.0)
    loop = tools.Loop(logdir, step, tf.train.Checkpoint(step=step, weight=weight))

    def step_fn(reset):
        weight.assign_add(1.0)
        return np.array([True]), np.array([1.0]), {}

    loop.add_phase("train", step_fn, steps=100, checkpoint_every=4)
    record_state = tf.train.CheckpointManager._record_state

    def dying_record_state(manager):
        if os.path.basename(manager.latest_checkpoint) == "ckpt-8":
            raise KeyboardInterrupt("killed while saving")
        record_state(manager)

    monkeypatch.setattr(tf.train.CheckpointManager, "_record_state", dying_record_state)
    with pytest.raises(KeyboardInterrupt):
        list(loop.run(max_step=12))
    directory = os.path.join(logdir, "checkpoints")
    assert glob.glob(os.path.join(directory, "ckpt-8.index"))  # Written, but not recorded.
    assert os.path.basename(tf.train.latest_checkpoint(directory)) == "ckpt-4"

    monkeypatch.setattr(tf.train.CheckpointManager, "_record_state", record_state)
    step, weight = tf.Variable(0, dtype=tf.int64), tf.Variable(0.0)
    resumed = tools.Loop(logdir, step, tf.train.Checkpoint(step=step, weight=weight))
    assert resumed.step == 4 and weight.numpy() == 4.0


def test_count_phase_numbers_summaries_and_checkpoints_by_its_env_steps(tmp_path):
    # Turns of 4 train steps and 2 eval steps, one env: eval summaries sit at the train step
    # they follow, and checkpoints count train steps only.
    logdir = str(tmp_path)
    step = tf.Variable(0, dtype=tf.int64)
    loop = tools.Loop(logdir, step, tf.train.Checkpoint(step=step), count_phase="train")
    loop.add_phase("train", _Scripted([[True]], [[1.0]]), steps=4, log_every=4, checkpoint_every=4)
    loop.add_phase("eval", _Scripted([[True]], [[2.0]]), steps=2, log_every=2)
    list(loop.run(max_step=12))
    assert loop.step == 12 and loop.count == 8
    train_values = _summaries(os.path.join(logdir, "train"))
    eval_values = _summaries(os.path.join(logdir, "eval"))
    assert [s for s, _ in train_values["train/mean_score"]] == [4, 8]
    assert eval_values["eval/mean_score"] == [(4, 2.0), (8, 2.0)]
    checkpoints = loop.checkpoint_manager.checkpoints
    assert [os.path.basename(c) for c in checkpoints] == ["ckpt-4", "ckpt-8"]


def test_tag_function_renames_and_skips_summaries(tmp_path):
    def tag(phase, name):
        return None if name == "loss" else f"custom/{phase}_{name}"

    loop = tools.Loop(str(tmp_path), tag=tag)
    loop.add_phase("train", _Scripted([[True]], [[3.0]]), steps=10, log_every=1)
    list(loop.run(max_step=1))
    assert set(_summaries(os.path.join(str(tmp_path), "train"))) == {"custom/train_mean_score"}


def test_array_metrics_are_written_as_histograms(tmp_path):
    from tensorflow.python.summary.summary_iterator import summary_iterator

    def step_fn(reset):
        return np.array([False]), np.zeros(1), {"action": np.array([1.0, 2.0, 2.0, 5.0])}

    loop = tools.Loop(str(tmp_path))
    loop.add_phase("train", step_fn, steps=10, log_every=1)
    list(loop.run(max_step=1))
    (path,) = glob.glob(os.path.join(str(tmp_path), "train", "events*"))
    values = [v for event in summary_iterator(path) for v in event.summary.value]
    (histogram,) = [v for v in values if v.tag == "train/action"]
    buckets = tf.make_ndarray(histogram.tensor)  # [bucket, (left, right, count)]
    assert buckets[:, 2].sum() == 4 and buckets[0, 0] == 1.0 and buckets[-1, 1] == 5.0


def test_count_limit_cuts_the_last_turn_and_a_raised_limit_continues_in_step(tmp_path):
    # Turns of 10 train env steps (calls of 5 envs) and 4 eval steps; the train count is kept
    # by the caller, as a run keeps its agent's env steps.
    logdir = str(tmp_path)
    counted = tf.Variable(0, dtype=tf.int64)
    step = tf.Variable(0, dtype=tf.int64)

    def train(reset):
        del reset
        counted.assign_add(5)
        return np.ones(5, bool), np.ones(5, np.float32), {"loss": 1.0}

    def make_loop():
        checkpoint = tf.train.Checkpoint(step=step, counted=counted)
        loop = tools.Loop(
            logdir, step, checkpoint, count_phase="train", counter=lambda: int(counted.numpy())
        )
        loop.add_phase("train", train, steps=10, log_every=10)
        loop.add_phase("eval", _Scripted([[True, True]], [[2.0, 2.0]]), steps=4, log_every=4)
        return loop

    loop = make_loop()
    reports = [(r.phase, loop.count) for r in loop.run(count_limit=25)]
    # 10 + 10 + a turn cut at 5: it reports, the eval after it runs, then the run ends.
    assert reports == [("train", 10), ("eval", 10), ("train", 20), ("eval", 20)] + [
        ("train", 25),
        ("eval", 25),
    ]
    assert loop.count == 25 and loop.step == 3 * 14  # The cut turn's place is kept.
    train_steps = [s for s, _ in _summaries(os.path.join(logdir, "train"))["train/mean_score"]]
    assert train_steps == [10, 20, 25]
    loop.save()
    # A later run with a higher limit starts a whole train turn, and its count goes on from 25.
    loop = make_loop()
    reports = [(r.phase, loop.count) for r in loop.run(count_limit=40)]
    assert reports == [("train", 35), ("eval", 35), ("train", 40), ("eval", 40)]
    loop.save()
    # A limit already reached runs nothing.
    assert list(make_loop().run(count_limit=40)) == []
    uncounted = tools.Loop(None)
    uncounted.add_phase("train", train, steps=10)
    with pytest.raises(ValueError, match="count_limit needs a count_phase"):
        next(uncounted.run(count_limit=1))
