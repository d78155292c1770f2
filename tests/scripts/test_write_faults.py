"""Writes that fail: a closed stdout pipe, a metrics file that cannot be written or was torn."""

import glob
import json
import os
import resource
import signal
import subprocess
import sys

import pytest

from agents.config import files
from agents.scripts import train
from tests.scripts import runs
from tests.scripts.capture import run_main, untimed


def _checkpoint_steps(run_dir):
    paths = glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*.index"))
    return sorted(int(os.path.basename(p)[len("ckpt-") : -len(".index")]) for p in paths)


def _records(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.slow
def test_training_outlives_a_closed_stdout_pipe(tmp_path):
    command = [sys.executable, "-m", "agents.scripts.train", "--config=debug"]
    command += [f"--logdir={tmp_path}", "--set", "train_steps=512"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline()  # As `| head -1` does: one line, then the pipe closes.
    process.stdout.close()
    _, stderr = process.communicate(timeout=300)
    assert untimed(first).startswith("Starting run ")
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert "warning: stdout is gone (Broken pipe); training goes on" in stderr
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert _checkpoint_steps(run_dir)[-1] == 512
    assert os.path.isfile(os.path.join(run_dir, "policy", "saved_model.pb"))
    assert _records(run_dir)[-1]["env_steps"] == 512


def test_a_metrics_file_that_cannot_be_written_saves_and_stops(run_copy):
    path = os.path.join(run_copy, "metrics.jsonl")
    os.remove(path)
    os.symlink("/dev/full", path)  # Every write fails with ENOSPC, as on a full disk.
    code, _, stderr = runs.resume(run_copy, "--set", "train_steps=384")
    assert code == 1
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert line.startswith(f"error: Cannot write '{path}' (No space left on device); stopped at")
    assert "checkpoint saved. Resume with: python -m agents.scripts.train" in line
    assert "Traceback" not in stderr
    assert _checkpoint_steps(run_copy)[-1] > 256  # The steps trained since are kept.


def test_a_torn_last_record_is_removed_on_resume(run_copy):
    path = os.path.join(run_copy, "metrics.jsonl")
    before = _records(run_copy)
    with open(path, "a") as handle:
        handle.write('{"ph')  # A process that died while writing a record.
    code, _, stderr = runs.resume(run_copy, "--set", "train_steps=384")
    assert code == 0, stderr
    assert f"warning: removed a partial last line (4 bytes) of {path}" in stderr
    records = _records(run_copy)  # Every line parses again.
    assert records[: len(before)] == before and records[-1]["env_steps"] == 384


def test_damaged_metrics_lines_are_moved_aside_on_resume(run_copy):
    path = os.path.join(run_copy, "metrics.jsonl")
    before = _records(run_copy)
    with open(path, "rb") as handle:
        lines = handle.read().splitlines(keepends=True)
    damage = [b"{garbled\n", b"\x00" * 40 + b"\n", b'{"phase": "\xff\xfe"}\n']
    with open(path, "wb") as handle:  # Between records, as a damaged disk block would be.
        handle.write(b"".join(lines[:1] + damage + lines[1:]))
    code, _, stderr = runs.resume(run_copy, "--set", "train_steps=384")
    assert code == 0, stderr
    assert f"warning: moved 3 damaged line(s) of {path} to {path}.damaged" in stderr
    assert "Traceback" not in stderr
    records = _records(run_copy)  # Every line parses again, none read before is lost.
    assert records[: len(before)] == before and records[-1]["env_steps"] == 384
    with open(f"{path}.damaged", "rb") as handle:
        assert handle.read() == b"".join(damage)


def test_a_config_that_cannot_be_written_leaves_a_resumed_runs_config_whole(run_copy):
    path = os.path.join(run_copy, "config.yaml")
    with open(path) as handle:
        before = handle.read()
    os.symlink("/dev/full", path + ".partial")  # Written beside config.yaml: the disk is full.
    code, _, stderr = runs.resume(run_copy, "--set", "train_steps=384")
    assert code == 1
    assert stderr.splitlines()[-1] == (
        f"error: Cannot write '{path}' (No space left on device); the run is unchanged."
    )
    with open(path) as handle:
        assert handle.read() == before
    assert not os.path.lexists(path + ".partial")


def test_a_new_run_that_cannot_write_its_config_leaves_no_directory(tmp_path, monkeypatch):

    def full_disk(config, run_dir, *args):
        raise OSError(28, "No space left on device", os.path.join(run_dir, "config.yaml"))

    monkeypatch.setattr(files, "save_config", full_disk)
    code, _, stderr = run_main(train.main, ["--config=debug", f"--logdir={tmp_path}"])
    assert code == 1
    assert "(No space left on device); removed the new run directory." in stderr.splitlines()[-1]
    assert os.listdir(tmp_path) == []


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return handle.read().split()
    except OSError:
        return []


def test_a_process_group_sigterm_while_env_processes_start_exits_143(tmp_path):
    import signal
    import time

    command = [sys.executable, "-m", "agents.scripts.train", "--config=debug", "--env_processes"]
    command += [f"--logdir={tmp_path}", "--set", "num_agents=8", "train_steps=100000"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while len(_children(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)  # Until env processes are being started.
    os.killpg(process.pid, signal.SIGTERM)  # As `timeout` or systemd stop a whole group.
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    # The watchdog thread announces the signal; the main thread may say how it ended first.
    assert any(line.startswith("Interrupted") for line in stderr.splitlines()[-2:]), stderr
    assert not glob.glob(os.path.join(tmp_path, "*", "metrics.jsonl"))  # Killed before training.


def test_summaries_the_disk_drops_silently_save_and_stop_as_metrics_do(run_copy, monkeypatch):
    """TensorFlow's event writer drops a write to a full disk without raising: the events file
    stops growing. The resumed run stops with one line naming the summaries, its checkpoint
    saved, as for metrics.jsonl."""
    import tensorflow as tf

    monkeypatch.setattr(tf.summary.experimental, "write_raw_pb", lambda protos: None)
    code, _, stderr = runs.resume(run_copy, "--set", "train_steps=384")
    assert code == 1
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert line.startswith(
        f"error: Cannot write summaries to '{run_copy}' (its events file stopped growing at "
    )
    assert "is the disk full?); stopped at env step " in line
    assert "checkpoint saved. Resume with: python -m agents.scripts.train" in line
    assert "Traceback" not in stderr
    assert _checkpoint_steps(run_copy)[-1] > 256  # The steps trained since are kept.


def _file_size_limit(size):
    def limit():  # In the child: writes past `size` bytes fail (EFBIG), as on a full disk.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@pytest.mark.slow
def test_an_events_file_that_cannot_grow_stops_the_cli_run_saved(tmp_path):
    command = [sys.executable, "-m", "agents.scripts.train", "--config=debug"]
    command += [f"--logdir={tmp_path}", "--set", "train_steps=8192"]
    env = dict(os.environ, AGENTS_XLA_CACHE="0")  # Only the run's own files are written.
    process = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_file_size_limit(40_000),
        timeout=300,
    )
    assert process.returncode == 1, process.stderr
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    (line,) = [line for line in process.stderr.splitlines() if line.startswith("error: ")]
    assert line.startswith(f"error: Cannot write summaries to '{run_dir}' (File too large)")
    stopped = int(line.split("stopped at env step ")[1].split(";")[0])
    assert 0 < stopped < 8192 and "checkpoint saved" in line
    assert "Traceback" not in process.stderr
    assert _checkpoint_steps(run_dir)[-1] == stopped
    assert _records(run_dir)[-1]["env_steps"] == stopped
