"""Resuming past damaged checkpoints: a missing or garbled index, truncated files, a full disk.

All start from copies of one finished debug run with a checkpoint every 64 train env steps; it
keeps the last three, numbered by training env steps: 128, 192 and 256 (the final save after the
last evaluation phase rewrites the 256 saved before it).
"""

import errno
import glob
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from agents.config.errors import UsageError
from agents.config.files import load_config
from agents.envs.python.environments import make_env
from agents.scripts import visualize
from tests.scripts import runs


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):  # Checkpoints every 64 steps; `run_copy` copies this one.
    return runs.finished_run(tmp_path_factory.mktemp("logdir"), "checkpoint_every=64")


def _checkpoints(run_dir):
    paths = glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*.index"))
    return sorted(
        (os.path.basename(p)[: -len(".index")] for p in paths), key=lambda n: int(n.split("-")[1])
    )


def _truncate(run_dir, name):
    (data,) = glob.glob(os.path.join(run_dir, "checkpoints", f"{name}.data-*"))
    with open(data, "r+b") as handle:
        handle.truncate(10)


@pytest.mark.parametrize("index", ["missing", "garbled"])
def test_resume_without_a_readable_index_finds_the_latest_checkpoint(index, run_copy):
    path = os.path.join(run_copy, "checkpoints", "checkpoint")
    if index == "missing":
        os.remove(path)
    else:
        with open(path, "w") as handle:
            handle.write("model_checkpoint_path: {{{ garbled")
    code, stdout, stderr = runs.resume(run_copy, "--set", "train_steps=320")
    assert code == 0, stderr
    assert stdout.startswith(f"Resuming run {run_copy} at env step 256.\n")
    # The final checkpoint covers every record: none is set aside, none made again.
    assert "Moved" not in stdout
    assert not os.path.exists(os.path.join(run_copy, "metrics.jsonl.superseded"))
    steps = [(record["env_steps"], record["phase"]) for record in _records(run_copy)]
    assert steps[-3:] == [(256, "eval"), (320, "train"), (320, "eval")]
    # The index lists the checkpoints again: for TensorFlow, and for the rotation that keeps the
    # last three, the old ones among them.
    latest = tf.train.latest_checkpoint(os.path.join(run_copy, "checkpoints"))
    assert os.path.basename(latest) == "ckpt-320"  # The budget ends the phase: 256 to 320.
    assert _checkpoints(run_copy) == ["ckpt-192", "ckpt-256", "ckpt-320"]


def _records(run_dir, name="metrics.jsonl"):
    with open(os.path.join(run_dir, name)) as handle:
        return [json.loads(line) for line in handle]


def test_resume_falls_back_past_corrupt_checkpoints_and_keeps_them(run_copy):
    _truncate(run_copy, "ckpt-256")
    _truncate(run_copy, "ckpt-192")
    before = _records(run_copy)
    code, stdout, stderr = runs.resume(run_copy)
    assert code == 0, stderr
    assert stdout.startswith(f"Resuming run {run_copy} at env step 128.\n")
    # The records of 129-256, which training made again, are set aside, not read twice.
    path = os.path.join(run_copy, "metrics.jsonl")
    later = [record for record in before if record["env_steps"] > 128]
    assert f"Moved {len(later)} record(s) of {path} past env step 128, which training " in stdout
    # The checkpoint of 128 was saved before the evaluation at 128, which is made again.
    (again,) = [r for r in before if r["env_steps"] == 128 and r["phase"] == "eval"]
    assert _records(run_copy, "metrics.jsonl.superseded") == later + [again]
    records = _records(run_copy)
    kept = [r for r in before if r["env_steps"] < 128 or r["env_steps"] == 128 and r is not again]
    assert records[: len(kept)] == kept
    steps = [(record["env_steps"], record["phase"]) for record in records]
    assert len(set(steps)) == len(steps) and records[-1]["env_steps"] == 256
    assert [r["env_steps"] for r in records] == sorted(r["env_steps"] for r in records)
    walls = [record["wall_time"] for record in records if "wall_time" in record]
    assert walls == sorted(walls)  # It goes on from the last record kept.
    directory = os.path.join(run_copy, "checkpoints")
    for name in ("ckpt-256", "ckpt-192"):
        assert f"warning: Checkpoint {directory}/{name} cannot be read (" in stderr
        assert f"warning: Kept the unreadable checkpoint as {directory}/{name}.*.corrupt." in stderr
        assert os.path.isfile(os.path.join(directory, f"{name}.index.corrupt"))
    assert "Traceback" not in stderr
    # Training went on from 128 to 256 and saved at 192 and 256, next to the two set aside.
    assert _checkpoints(run_copy) == ["ckpt-128", "ckpt-192", "ckpt-256"]


def test_resume_with_no_readable_checkpoint_stops_with_one_line(run_copy):
    for name in _checkpoints(run_copy):
        _truncate(run_copy, name)
    before = sorted(os.listdir(os.path.join(run_copy, "checkpoints")))
    code, stdout, stderr = runs.resume(run_copy)
    assert code == 1 and stdout == ""
    assert stderr.splitlines()[-1] == (
        f"error: No checkpoint of '{run_copy}/checkpoints' can be read (ckpt-256, ckpt-192, "
        "ckpt-128); restore one from a backup, or move the directory aside to start over."
    )
    assert "Traceback" not in stderr
    assert sorted(os.listdir(os.path.join(run_copy, "checkpoints"))) == before


def test_visualize_falls_back_past_a_corrupt_checkpoint_and_changes_nothing(run_copy, capsys):
    _truncate(run_copy, "ckpt-256")
    before = sorted(os.listdir(os.path.join(run_copy, "checkpoints")))
    visualize.restore_policy(run_copy, None, make_env("Pendulum-v1"), load_config(run_copy))
    out, err = capsys.readouterr()
    directory = os.path.join(run_copy, "checkpoints")
    assert out == f"Restored {directory}/ckpt-192\n"
    assert err.startswith(f"warning: Checkpoint {directory}/ckpt-256 cannot be read (")
    assert sorted(os.listdir(directory)) == before


def test_visualize_of_a_named_corrupt_checkpoint_is_one_line(run_copy):
    _truncate(run_copy, "ckpt-192")
    path = os.path.join(run_copy, "checkpoints", "ckpt-192")
    with pytest.raises(UsageError, match=rf"^Checkpoint {path} cannot be read \([^\n]*\)\.$"):
        visualize.restore_policy(run_copy, path, make_env("Pendulum-v1"), load_config(run_copy))


def test_full_disk_while_saving_is_one_line_and_keeps_the_last_checkpoint(run_copy, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    _truncate(run_copy, "ckpt-256")  # So that the resumed run trains from 128, and saves.
    _truncate(run_copy, "ckpt-192")
    monkeypatch.setattr(tf.train.CheckpointManager, "save", full_disk)
    code, stdout, stderr = runs.resume(run_copy)
    assert code == 1
    directory = os.path.join(run_copy, "checkpoints")
    assert stderr.splitlines()[-1] == (
        f"error: Stopped at env step 192: Cannot write checkpoint {directory}/ckpt-192: "
        "No space left on device"
    )
    assert _checkpoints(run_copy) == ["ckpt-128"]
    assert os.path.basename(tf.train.latest_checkpoint(directory)) == "ckpt-128"


@pytest.mark.parametrize("cut", ["variables", "saved_model.pb"])
def test_a_policy_dir_cut_short_is_named_once_and_the_newest_checkpoint_stands_in(
    cut, run_copy, capsys
):
    from agents.policy import load_policy

    policy_dir = os.path.join(run_copy, "policy")
    if cut == "variables":
        (path,) = glob.glob(os.path.join(policy_dir, "variables", "variables.data-*"))
    else:
        path = os.path.join(policy_dir, "saved_model.pb")
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 3)
    policy = load_policy(run_copy)
    err = capsys.readouterr().err
    assert err.startswith(f"warning: The exported policy {policy_dir} cannot be loaded (")
    assert err.count("\n") == 1 and "using the run's newest checkpoint instead" in err
    observ = make_env("Pendulum-v1").observation_space.sample()
    assert np.all(np.isfinite(policy(observ)))
    with pytest.raises(ValueError, match=f"The exported policy {policy_dir} cannot be loaded"):
        load_policy(policy_dir)  # A SavedModel directory alone: nothing to stand in.
