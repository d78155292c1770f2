"""Tests for `agents.Trainer`: a run owned by the library, its result from memory."""

import json
import math
import os
import signal

import numpy as np
import pytest
import yaml

from agents import Trainer
from agents.config.errors import UsageError
from agents.training import Callback, FinishedRunError, TrainResult


def _records(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as handle:
        return [json.loads(line) for line in handle]


class StopAfter(Callback):
    """A guard whose stop request (a signal) comes with the `reports`-th report."""

    every_rank = True

    def __init__(self, reports):
        self._left, self.watched = reports, None

    def on_start(self, run):
        self.watched = (list(run.batch_envs), run.config.env_timeout)

    def on_report(self, run, report):
        self._left -= 1
        if self._left == 0:
            self.signum = signal.SIGINT


class Lines(Callback):
    """A console that keeps its lines, and what the run started with."""

    def __init__(self):
        self.lines, self.started_at = [], None

    def on_start(self, run):
        self.started_at = run.env_steps

    def on_line(self, run, line):
        self.lines.append(line)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A debug run trained by a Trainer, with its result and printed lines."""
    logdir = str(tmp_path_factory.mktemp("logdir"))
    trainer = Trainer("debug", logdir, seed=5, overrides={"learning_rate": np.float32(2e-3)})
    progress = Lines()
    return trainer, trainer.train([progress]), progress


def test_the_result_comes_from_memory_and_matches_what_is_on_disk(finished):
    trainer, result, progress = finished
    assert isinstance(result, TrainResult) and not result.stopped
    assert result.run_dir == trainer.run_dir and result.env_steps == 256
    evals = [r for r in _records(result.run_dir) if r["phase"] == "eval"]
    score = evals[-1]["score"]
    assert (math.isnan(result.eval_score) and score is None) or result.eval_score == score
    assert os.path.isfile(os.path.join(result.run_dir, "policy", "saved_model.pb"))
    assert progress.started_at == 0
    assert progress.lines[0] == f"Starting run {result.run_dir} at env step 0."
    assert progress.lines[-1] == f"Done: 256 env steps in {result.run_dir}."


def test_the_run_records_its_seed_and_overrides_given_as_values(finished):
    trainer, result, _ = finished
    with open(os.path.join(result.run_dir, "config.yaml")) as handle:
        saved = yaml.safe_load(handle)
    assert saved["seed"] == 5 == trainer.seed and saved["name"] == "debug"
    value = saved["config"]["learning_rate"]
    assert type(value) is float and value == pytest.approx(2e-3)


def test_a_finished_run_is_refused_naming_the_key_that_continues_it(finished):
    _, result, _ = finished
    trainer = Trainer(resume=result.run_dir, config=None)
    with pytest.raises(FinishedRunError) as caught:
        trainer.train([Lines()])
    assert str(caught.value) == (
        f"Run {result.run_dir!r} is finished: it trained 256 env steps of train_steps=256. "
        "Continue it with --set train_steps=N (N > 256)."
    )


def test_a_stop_request_saves_exports_and_resumes_by_timestamp(tmp_path):
    trainer = Trainer("debug", str(tmp_path), overrides={"train_steps": 1024})
    guard = StopAfter(reports=3)  # train, eval, train: stops at env step 256.
    result = trainer.train([guard, Lines()])
    assert result.stopped and result.signum == signal.SIGINT and result.env_steps == 256
    assert guard.watched[1] == trainer.config["env_timeout"]
    assert os.path.isfile(os.path.join(result.run_dir, "policy", "saved_model.pb"))
    timestamp = os.path.basename(result.run_dir).split("-debug")[0]
    again = Trainer("debug", str(tmp_path), resume=timestamp, overrides={"train_steps": 384})
    assert again.run_dir == result.run_dir and again.resumed
    resumed = again.train([Lines()])
    assert not resumed.stopped and resumed.env_steps == 384
    assert [r["env_steps"] for r in _records(result.run_dir) if r["phase"] == "train"] == [
        128,
        256,
        384,
    ]


def test_train_reports_come_at_log_every_and_evaluations_at_train_every(tmp_path):
    # Calls of 32 env steps: a report at every 96 training env steps (3 calls), and at the end of
    # each phase of 128, before its evaluation.
    overrides = {"train_steps": 256, "log_every": 90}
    result = Trainer("debug", str(tmp_path), overrides=overrides).train([Lines()])
    records = _records(result.run_dir)
    phases = [(record["phase"], record["env_steps"]) for record in records]
    assert phases == [
        ("train", 96), ("train", 128), ("eval", 128), ("train", 192), ("train", 256), ("eval", 256),
    ]  # fmt: skip
    episodes = [record["episodes"] for record in records if record["phase"] == "eval"]
    assert episodes == [2, 2]  # No more evaluations than before.


def test_a_run_is_owned_by_one_trainer_and_an_unused_one_leaves_nothing(tmp_path):
    first = Trainer("debug", str(tmp_path))
    (name,) = os.listdir(tmp_path)
    # A second owner of the same run is refused while the first holds it.
    with open(os.path.join(first.run_dir, "config.yaml"), "w") as handle:
        yaml.safe_dump({"name": "debug", "config": {}, "seed": 0, "world_size": 1}, handle)
    with pytest.raises(UsageError, match="is in use by"):
        Trainer(resume=first.run_dir, config=None)
    first.close()
    assert os.listdir(tmp_path) == []  # Never trained: the new run directory is gone.


def test_bad_values_are_one_line_naming_the_key_and_create_no_directory(tmp_path):
    with pytest.raises(UsageError, match=r"^num_agents=0: num_agents must be"):
        Trainer("debug", str(tmp_path), overrides={"num_agents": np.int64(0)})
    with pytest.raises(UsageError, match=r"Unknown config key 'lerning_rate' \(did you mean"):
        Trainer("debug", str(tmp_path), overrides={"lerning_rate": 1e-3})
    with pytest.raises(UsageError, match="is no run directory"):
        Trainer(resume=str(tmp_path), config=None)
    assert os.listdir(tmp_path) == []


def test_an_odd_budget_trains_whole_calls_said_at_start_and_its_schedule_never_reaches_zero(
    tmp_path,
):
    # debug: calls of 2 envs x 16 steps; 200 env steps are 7 calls (224), the last phase cut.
    overrides = {"train_steps": 200, "learning_rate_schedule": "linear"}
    trainer = Trainer("debug", str(tmp_path), overrides=overrides)
    progress = Lines()
    result = trainer.train([progress])
    assert trainer.budget == 224 and result.env_steps == 224
    assert progress.lines[1] == (
        "train_steps 200 -> 224 env steps, rounded up to 7 training calls of 2 envs x 16 steps."
    )
    assert progress.lines[2] == (
        "Config debug with train_steps=200 (was 256), learning_rate_schedule='linear' "
        "(was 'constant')."
    )
    (summary,) = [line for line in progress.lines if line.startswith(("Final eval", "No eval"))]
    assert summary.startswith("Final eval ") and "; 224 env steps in 0:00:" in summary
    records = _records(result.run_dir)
    assert [(r["phase"], r["env_steps"]) for r in records] == [
        ("train", 128),
        ("eval", 128),
        ("train", 224),
        ("eval", 224),
    ]
    # The last of 7 updates trains at 1/7 of the rate, not at zero.
    rate = records[2]["learning_rate"]
    assert rate == pytest.approx(trainer.config.learning_rate / 7, rel=1e-5)


def test_run_names_carry_config_env_name_and_seed_and_resume_by_either(tmp_path):
    logdir = str(tmp_path)
    names = []
    for seed in (3, 4):
        trainer = Trainer(
            "debug", logdir, seed=seed, overrides={"env": "ALE/Pong-v5"}, name="lr3e-4"
        )
        names.append(os.path.basename(trainer.run_dir))
        trainer.started = True  # Keep the directory as a run (as training would).
        trainer.close()
    stamps = [name.split("-debug")[0] for name in names]
    assert names[0] == f"{stamps[0]}-debug-ALE_Pong-v5-lr3e-4-s3"
    assert names[1].endswith("-debug-ALE_Pong-v5-lr3e-4-s4")
    for name in names:  # config.yaml is written when training starts; a stand-in here.
        with open(os.path.join(logdir, name, "config.yaml"), "w") as handle:
            yaml.safe_dump({"name": "debug", "config": {"env": "ALE/Pong-v5"}}, handle)
    # The env is named only where it is not the config's own.
    plain = Trainer("debug", logdir)
    assert os.path.basename(plain.run_dir).endswith("-debug-s0") and "Pendulum" not in plain.run_dir
    plain.close()
    # Resumed by the directory's name, or by the timestamp where that names one run only.
    resumed = Trainer("debug", logdir, resume=names[1])
    assert resumed.run_dir == os.path.join(logdir, names[1])
    resumed.close()
    if stamps[0] == stamps[1]:  # Started in the same second: the timestamp is ambiguous.
        with pytest.raises(UsageError, match=r"names 2 runs of debug .*give one's directory"):
            Trainer("debug", logdir, resume=stamps[0])
    else:
        assert Trainer("debug", logdir, resume=stamps[0]).run_dir.endswith(names[0])
    with pytest.raises(UsageError, match=r"Bad run name 'a/b': 1-64 letters, digits"):
        Trainer("debug", logdir, name="a/b")
    with pytest.raises(UsageError, match="A resumed run keeps its name"):
        Trainer("debug", logdir, resume=names[0], name="other")


def test_a_trainer_trains_once(tmp_path):
    trainer = Trainer("debug", str(tmp_path), overrides={"train_steps": 64})
    trainer.train([Lines()])
    with pytest.raises(UsageError, match=r"This Trainer trained .* already: make a new one"):
        trainer.train([Lines()])
