"""`train --track`: a W&B run (offline) holding the run's scalars, config, seed and policy."""

import glob
import json
import os
import subprocess
import sys

import pytest

from agents.config.errors import UsageError

pytest.importorskip("wandb")


def _records(path):
    """The protobuf records of a W&B run file (`run-<id>.wandb`): a LevelDB-style log of 32 KiB
    blocks after a 7-byte header, each record in chunks of checksum (4 bytes), length (2) and
    type (1: whole, 2: first, 3: middle, 4: last)."""
    from wandb.proto import wandb_internal_pb2

    with open(path, "rb") as handle:
        data = handle.read()
    position, block, pending = 7, 32768, b""
    while position < len(data):
        left = block - position % block
        length, kind = (
            int.from_bytes(data[position + 4 : position + 6], "little"),
            data[position + 6],
        )
        if left < 7 or (length == 0 and kind == 0):  # A block's zero-filled tail.
            position += left
            continue
        pending += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            yield record
            pending = b""


def _key(item):
    return "/".join(item.nested_key) if item.nested_key else item.key


@pytest.mark.slow
def test_track_writes_an_offline_wandb_run_with_scalars_config_seed_and_policy(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "agents.scripts.train", "--config=debug", "--seed=7", "--track",
         "--wandb_project=tests", "--logdir", "logs", "--set", "success_score=-1e9"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env=dict(os.environ, WANDB_MODE="offline", PYTHONPATH=os.getcwd()),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # W&B's own lines are silenced; one line on stdout says where.
    last = result.stdout.splitlines()[-1]
    assert last.startswith("W&B run (offline): ") and "wandb sync " in last
    (run_dir,) = glob.glob(str(tmp_path / "logs" / "*-debug-s7"))
    (path,) = glob.glob(os.path.join(run_dir, "wandb", "offline-run-*", "run-*.wandb"))
    history, config, kinds, summary = {}, {}, set(), {}
    for record in _records(path):
        kind = record.WhichOneof("record_type")
        kinds.add(kind)
        if kind == "run":
            config = {item.key: json.loads(item.value_json) for item in record.run.config.update}
            assert record.run.display_name == os.path.basename(run_dir)
        elif kind == "history":
            row = {_key(item): json.loads(item.value_json) for item in record.history.item}
            history[row["_step"]] = row
        elif kind == "summary":
            summary.update({_key(item): item.value_json for item in record.summary.update})
    assert config["seed"] == 7 and config["learning_rate"] == 3e-4 and config["num_agents"] == 2
    with open(os.path.join(run_dir, "metrics.jsonl")) as handle:
        evals = [json.loads(line) for line in handle if '"eval"' in line]
    assert sorted(history) == [record["env_steps"] for record in evals]  # Stepped by env steps.
    for record in evals:
        assert history[record["env_steps"]]["eval/score"] == pytest.approx(record["score"])
        # Every Pendulum return is above the success score set: all episodes succeeded.
        assert history[record["env_steps"]]["eval/success_rate"] == record["success_rate"] == 1.0
        assert "train/policy_loss" in history[record["env_steps"]]
    assert "artifact" in kinds and "final_eval" in summary  # The policy, and the final score.
    assert json.loads(summary["final_eval_success_rate"]) == 1.0


def test_track_without_wandb_is_one_line(monkeypatch):
    from agents.training import tracking

    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(UsageError, match=r"pip install -e \"\.\[track\]\""):
        tracking.WandbTracker()


def test_a_wandb_server_that_does_not_answer_logs_the_run_offline_with_one_warning(
    tmp_path, monkeypatch, capsys
):
    import math

    from agents.tools.loop import Report
    from agents.training import Trainer
    from agents.training.tracking import WandbTracker
    from agents.training.train_result import TrainResult

    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:1")  # Nothing listens there.
    monkeypatch.setenv("WANDB_API_KEY", "a" * 40)
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "2")
    tracker = WandbTracker(project="tests")
    run = Trainer("debug", str(tmp_path / "logdir"))
    tracker.on_start(run)
    tracker.on_report(run, Report("eval", 0, 1.5, 1, {}))
    tracker.on_end(run, TrainResult(str(tmp_path), 0, 1.5, best_eval_score=math.nan))
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("warning: W&B's server did not answer in 2 s (")
    assert out.startswith("W&B run (offline): ") and "wandb sync " in out
    assert glob.glob(os.path.join(run.run_dir, "wandb", "offline-run-*", "run-*.wandb"))
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="WANDB_INIT_TIMEOUT must be a number of seconds > 0"):
        WandbTracker(project="tests")  # Before the run starts, not in its first callback.
