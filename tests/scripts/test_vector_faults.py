"""Faults of environments stepped by a vector backend (`env_backend`), through the command line.

The faulty env 1 of `faulty_envs` misbehaves in its 40th step, in the call from train env step 64
to 96; the message names the vector env, the env in it where that can be told, the step and what
came, as for the python backend.
"""

import contextlib
import glob
import os
import signal
import subprocess
import sys
import time

import pytest

from agents.scripts import train
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main

_FAILED_AT = 2 * (faulty_envs.FAULT_AFTER - 1)  # Train env steps made before the fault.


def _train(tmp_path, fault, backend):
    env = faulty_envs.env_id(f"Faulty-{fault}-v0")
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"]
    argv += ["--set", f"env_backend={backend}", "--set", "checkpoint_every=64"]
    code, stdout, stderr = run_main(train.main, argv)
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert "Done" not in stdout
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-64.index"))
    assert not glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-96*"))
    return code, stderr


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["gymnasium-sync", "gymnasium-async"])
def test_an_env_that_raises_in_a_vector_env_is_named_with_its_traceback(backend, tmp_path):
    code, stderr = _train(tmp_path, "step", backend)
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train vector env, environment 1 "
        "(Faulty-step-v0) failed in step: Traceback (most recent call last)"
    )
    assert "RuntimeError: injected fault in step 40" in stderr
    assert "Worker" not in stderr  # gymnasium's own log lines of the failure are not repeated.


def test_a_non_finite_observation_of_a_vector_env_is_one_line(tmp_path):
    code, stderr = _train(tmp_path, "nan_observ", "gymnasium-sync")
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train vector env, environment 1 "
        "(Faulty-nan_observ-v0) returned from step a non-finite observation"
    )
    assert stderr.count("\n") == 1


def test_a_wrong_shape_in_a_vector_env_is_named(tmp_path):
    code, stderr = _train(tmp_path, "bad_shape", "gymnasium-sync")
    assert code == 1
    assert stderr.startswith(f"error: Stopped at env step {_FAILED_AT}: Train vector env")
    assert "(Faulty-bad_shape-v0) failed in step" in stderr
    assert stderr.rstrip().splitlines()[-1].startswith("ValueError")  # gymnasium's stacking.


def test_an_id_envpool_lacks_is_one_line_naming_the_other_backends(tmp_path):
    pytest.importorskip("envpool")
    env = faulty_envs.env_id("Faulty-none-v0")
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"]
    code, stdout, stderr = run_main(train.main, [*argv, "--set", "env_backend=envpool"])
    assert code == 2 and stderr.count("\n") == 1
    assert "EnvPool has no 'tests.scripts.faulty_envs:Faulty-none-v0'" in stderr
    assert "gymnasium-sync or gymnasium-async" in stderr


def _marked_processes(marker: str) -> list[int]:
    """Pids of the live processes whose environment holds `marker` (forked and spawned env
    processes inherit it; a zombie's environment reads empty)."""
    found = []
    for path in glob.glob("/proc/[0-9]*/environ"):
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            if marker.encode() in handle.read().split(b"\0"):
                found.append(int(path.split("/")[2]))
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    "fault, backend, seed",
    [
        ("exit", "gymnasium-async", 1),  # Env 0 dies: its pipe is the first one read.
        ("kill", "gymnasium-async", 0),
        ("exit", "python", 1),  # An ExternalProcess per env (`--env_processes`).
    ],
)
def test_a_dead_env_process_ends_the_run_within_a_minute_with_one_line(
    fault, backend, seed, tmp_path
):
    """An env process that dies mid-step (`os._exit`, SIGKILL): the process ends with status 1
    within a minute of the death, in one line naming the env and how its process ended; the
    checkpoint written before stays, and no env process survives it."""
    env = faulty_envs.env_id(f"Faulty-{fault}-v0")
    command = [sys.executable, "-m", "agents.scripts.train", "--config=debug", f"--seed={seed}",
               f"--logdir={tmp_path / 'logs'}", "--set", f"env={env}", f"env_backend={backend}",
               "checkpoint_every=64"]  # fmt: skip
    if backend == "python":
        command.append("--env_processes")
    environ = dict(os.environ, PYTHONPATH=os.getcwd(), TF_CPP_MIN_LOG_LEVEL="3")
    environ[faulty_envs.KILL_TIME_FILE] = str(tmp_path / "died.txt")
    environ["VECTOR_FAULTS_RUN"] = str(tmp_path)  # Marks this run's processes.
    marker = f"VECTOR_FAULTS_RUN={tmp_path}"
    # A file, not a pipe: a surviving env process holding it open must not hide the exit.
    with open(tmp_path / "stderr.txt", "w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environ)
    try:
        status = process.wait(timeout=180)  # Start-up and 39 steps first.
        ended = time.time()
        # The other env processes see their pipe close and end on their own: a moment later
        # under load, so they get a few seconds.
        deadline = time.monotonic() + 10
        while (survivors := _marked_processes(marker)) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        for pid in [process.pid, *_marked_processes(marker)]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        process.wait()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert ended - float((tmp_path / "died.txt").read_text()) < 60, stderr
    assert status == 1, stderr
    index = 1 - seed  # The env reset with seed 1 is the faulty one.
    name = f"Train vector env, environment {index}" if backend != "python" else (
        f"Train environment {index}"
    )  # fmt: skip
    how = "was killed by SIGKILL." if fault == "kill" else "died with exit code 3."
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: {name} (Faulty-{fault}-v0) failed in step: "
        "Environment process "
    ), stderr
    assert stderr.endswith(f" {how}\n") and stderr.count("\n") == 1, stderr
    (run_dir,) = glob.glob(str(tmp_path / "logs" / "*-debug*"))
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-64.index"))
    assert survivors == []
