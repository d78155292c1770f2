"""Tests for callbacks: the built-in ones on scripted reports, and every seam through a real run
(`agents.train`, `Trainer.reports` and the command line)."""

import json
import math
import os

import gymnasium as gym
import pytest

import agents
from agents.scripts import configs
from agents.tools.checkpoints import list_checkpoints
from agents.tools.loop import Report
from agents.training import Trainer, callbacks


def _eval(score: float, env_steps: int = 128) -> Report:
    return Report("eval", env_steps, score, 2, {"env_steps": float(env_steps)})


def _train(score: float) -> Report:
    return Report("train", 128, score, 2, {"env_steps": 128.0})


def _handle(tmp_path) -> Trainer:
    return Trainer("debug", str(tmp_path))  # What callbacks are given; it trains nothing here.


def test_stop_on_score_looks_at_eval_reports_only(tmp_path):
    handle, callback = _handle(tmp_path), callbacks.StopOnScore(-200)
    callback.on_report(handle, _train(0.0))
    callback.on_report(handle, _eval(-200.5))
    callback.on_report(handle, _eval(math.nan))
    assert handle.stopped_by is None
    callback.on_report(handle, _eval(-200.0))
    assert handle.stopped_by == "eval score -200.00 reached stop_at_score=-200"


def test_stop_on_no_improvement_counts_evals_since_the_best(tmp_path):
    handle, callback = _handle(tmp_path), callbacks.StopOnNoImprovement(2)
    for score in (-5.0, -3.0, -4.0, math.nan):  # nan: no episode, not counted.
        callback.on_report(handle, _eval(score))
        assert handle.stopped_by is None
    callback.on_report(handle, _eval(-3.0))  # Equal to the best: no improvement.
    assert handle.stopped_by == ("no new best eval score in 2 evaluations (best -3.00, patience=2)")


def test_the_first_stop_reason_is_kept(tmp_path):
    handle = _handle(tmp_path)
    handle.stop("first")
    handle.stop("second")
    assert handle.stopped_by == "first"


def test_from_config_builds_what_the_keys_ask_for():
    assert callbacks.from_config({"stop_at_score": None, "patience": None}) == []
    found = callbacks.from_config({"stop_at_score": 1.5, "patience": 3, "keep_best_policy": True})
    assert [type(c).__name__ for c in found] == [
        "KeepBestPolicy",
        "StopOnScore",
        "StopOnNoImprovement",
    ]
    assert found[1].threshold == 1.5 and found[2].patience == 3


def test_a_raising_callback_is_named_and_the_later_ones_are_not_called(tmp_path):
    called = []

    class Boom(callbacks.Callback):
        def on_report(self, run, report):
            raise ValueError("bad value\nsecond line")

    class After(callbacks.Callback):
        def on_report(self, run, report):
            called.append(report)

    calls = callbacks.CallbackList([Boom(), After()], _handle(tmp_path))
    calls.call("on_report", _eval(0.0))
    calls.call("on_report", _eval(0.0))
    assert str(calls.error) == "Callback Boom.on_report raised ValueError: bad value"
    assert calls.stop_requested and called == []


def test_saving_holds_every_callbacks_lock_and_calls_back_only_when_the_write_succeeded(tmp_path):
    events = []

    class Lock:
        def __enter__(self):
            events.append("locked")

        def __exit__(self, *exc_info):
            events.append("released")

    class Guarded(callbacks.Callback):
        def saving(self):
            return Lock()

        def on_checkpoint(self, run, path):
            events.append(f"saved {path}")

    saving = callbacks.CallbackList([Guarded()], _handle(tmp_path)).saving()
    with saving:
        pass
    with pytest.raises(OSError), saving:
        raise OSError("disk full")
    assert events == ["locked", "released", "saved None", "locked", "released"]


def test_a_run_files_failure_stops_with_its_own_line_and_lines_still_reach_everyone(tmp_path):
    from agents.training.train_result import TrainingError

    lines = []

    class Full(callbacks.Callback):
        def on_report(self, run, report):
            raise TrainingError("Cannot write 'm' (No space left on device)")

    class Console(callbacks.Callback):
        def on_line(self, run, line):
            lines.append(line)

    calls = callbacks.CallbackList([Full(), Console()], _handle(tmp_path))
    calls.call("on_report", _eval(0.0))
    calls.say("Final eval")
    assert str(calls.error) == "Cannot write 'm' (No space left on device)"
    assert calls.stop_requested and lines == ["Final eval"]


def test_a_signal_to_any_consumer_asks_the_run_to_stop(tmp_path):
    guard = callbacks.Callback()
    calls = callbacks.CallbackList([callbacks.Callback(), guard], _handle(tmp_path))
    assert calls.signum is None and not calls.stop_requested
    guard.signum = 15
    assert calls.signum == 15 and calls.stop_requested


def test_a_damaged_best_score_record_reads_as_none(tmp_path):
    directory = tmp_path / callbacks.BEST_POLICY_DIR
    directory.mkdir()
    (directory / callbacks.BEST_SCORE_FILE).write_text("{not json")
    assert callbacks.read_best_score(str(tmp_path)) is None
    (directory / callbacks.BEST_SCORE_FILE).write_text('{"score": -3.5, "env_steps": 256}')
    assert callbacks.read_best_score(str(tmp_path)) == {"score": -3.5, "env_steps": 256}


# Through real runs: the debug config on Pendulum with 50-step episodes, which end in every
# evaluation phase (train 128, eval, train 256, eval).


def short_pendulum():
    return gym.make("Pendulum-v1", max_episode_steps=50)


def _run(logdir, **kwargs):
    config = configs.debug.differences()
    return agents.train(config, logdir=str(logdir), env=short_pendulum, verbose=0, **kwargs)


class Recorder(callbacks.Callback):
    def __init__(self):
        self.events = []

    def on_start(self, run):
        self.events.append(("start", run.env_steps))

    def on_report(self, run, report):
        self.events.append((report.phase, int(report.metrics["env_steps"])))

    def on_checkpoint(self, run, path):
        self.events.append(("checkpoint", os.path.basename(path)))

    def on_end(self, run, result):
        self.events.append(("end", result.env_steps))


def test_a_user_callback_sees_the_whole_run_in_order(tmp_path):
    recorder = Recorder()
    result = _run(tmp_path, callbacks=[recorder])
    assert recorder.events == [
        ("start", 0),
        ("checkpoint", "ckpt-128"),  # checkpoint_every=128: saved before the report.
        ("train", 128),
        ("eval", 128),
        ("checkpoint", "ckpt-256"),
        ("train", 256),
        ("eval", 256),
        ("checkpoint", "ckpt-256"),  # The final save.
        ("end", 256),
    ]
    assert result.stopped_by is None and not result.stopped


def test_stop_at_score_ends_the_run_saved_and_exported_with_the_best_policy(tmp_path):
    result = _run(tmp_path, stop_at_score=-1e9, keep_best_policy=True)  # Any episode reaches it.
    assert result.env_steps == 128 and not result.stopped  # Not a signal: no KeyboardInterrupt.
    assert result.stopped_by.startswith("eval score ")
    assert result.stopped_by.endswith("reached stop_at_score=-1e+09")
    assert os.path.isfile(os.path.join(result.run_dir, "policy", "saved_model.pb"))
    saved = list_checkpoints(os.path.join(result.run_dir, "checkpoints"))
    assert [os.path.basename(path) for path in saved] == ["ckpt-128"]
    assert result.best_eval_score == result.eval_score
    record = callbacks.read_best_score(result.run_dir)
    assert record == {"score": pytest.approx(result.best_eval_score), "env_steps": 128}
    best = agents.load_policy(os.path.join(result.run_dir, "best_policy"))
    assert best([0.0, 1.0, 0.0]).shape == (1,)


def test_a_raising_callback_stops_the_run_with_one_line_and_a_checkpoint(tmp_path):
    class Boom(callbacks.Callback):
        def on_report(self, run, report):
            if report.phase == "eval":
                raise KeyError("no such metric")

    with pytest.raises(RuntimeError) as raised:
        _run(tmp_path, callbacks=[Boom()])
    message = str(raised.value)
    assert message.startswith("Callback Boom.on_report raised KeyError: 'no such metric'")
    assert "checkpoint saved" in message and "\n" not in message
    (run_dir,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-128.index"))
    with open(os.path.join(run_dir, "metrics.jsonl")) as file:
        assert [json.loads(line)["phase"] for line in file] == ["train", "eval"]


@pytest.mark.slow
def test_leaving_the_reports_early_stops_the_run_saved_and_exported(tmp_path):
    overrides = {"env": "Pendulum-v1", "max_episode_steps": 50}
    trainer = Trainer(configs.debug.differences(), str(tmp_path), overrides=overrides)
    phases = []
    for report in trainer.reports():
        phases.append(report.phase)
        if report.phase == "eval":
            break
    assert phases == ["train", "eval"]
    result = trainer.result
    assert result.env_steps == 128
    assert result.stopped_by == "the caller stopped iterating over the reports"
    assert os.path.isfile(os.path.join(result.run_dir, "policy", "saved_model.pb"))


def test_the_command_line_stops_at_a_score_and_keeps_the_best_policy(tmp_path):
    from agents.scripts import train
    from tests.scripts.capture import run_main

    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", "max_episode_steps=50"]
    argv += ["stop_at_score=-1e9", "keep_best_policy=True"]
    code, stdout, stderr = run_main(train.main, argv)
    assert code == 0, stderr
    assert "Stopped at env step 128: eval score " in stdout
    (run_dir,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    assert callbacks.read_best_score(run_dir)["env_steps"] == 128
    assert os.path.isfile(os.path.join(run_dir, "best_policy", "saved_model.pb"))
    assert os.path.isfile(os.path.join(run_dir, "policy", "saved_model.pb"))
