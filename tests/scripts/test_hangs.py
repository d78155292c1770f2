"""Faults met by a training process from outside: hung envs, signals, a killed trainer, two owners.

Each test drives `python -m agents.scripts.train --config=debug` in a child process. The faulty
env 1 of `faulty_envs` hangs in its 40th step, in the call from env step 64 to 96, after the
checkpoint at 64 (`checkpoint_every=64`).
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
from agents.training import results
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main, training_process

_HUNG_ENV = ["--set", f"env={faulty_envs.env_id('Faulty-hang-v0')}", "--set", "checkpoint_every=64"]


@contextlib.contextmanager
def _trainer(tmp_path, *argv, env=None, **popen):
    """The training process, its stderr going to `tmp_path/stderr.txt`; killed on exit. `env`
    adds to the environment."""
    command = [sys.executable, "-m", "agents.scripts.train", "--config=debug"]
    command += [f"--logdir={tmp_path / 'logs'}", *argv]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **(env or {}))
    env[faulty_envs.HANG_FILE] = str(tmp_path / "hang.txt")
    with open(tmp_path / "stderr.txt", "w") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=stderr, env=env, **popen
        )
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def _wait_for_hang(tmp_path, process, timeout=60):
    """The pid of the hung env's process, once it hangs."""
    path = tmp_path / "hang.txt"
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        assert process.poll() is None, (tmp_path / "stderr.txt").read_text()
        assert time.monotonic() < deadline, "the env never hung"
        time.sleep(0.1)
    return int(path.read_text())


def _is_gone(pid, timeout=5.0):
    """Whether process `pid` ends (or is a zombie) within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def _children(pid):
    """Pids of the child processes of `pid`."""
    found = []
    for path in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError), open(path) as stat:
            if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(path.split("/")[2]))
    return found


def _stderr(tmp_path):
    """What the trainer printed to stderr, but TensorFlow's start-up lines."""
    lines = (tmp_path / "stderr.txt").read_text().splitlines(keepends=True)
    noise = ("WARNING: All log messages before absl", "I0000 ", "W0000 ", "E0000 ")
    return "".join(line for line in lines if not line.startswith(noise))


def _run_dir(tmp_path):
    (run_dir,) = glob.glob(str(tmp_path / "logs" / "*-debug*"))
    return run_dir


@pytest.mark.slow
def test_hung_env_stops_training_after_env_timeout(tmp_path):
    with _trainer(tmp_path, *_HUNG_ENV, "--set", "env_timeout=1") as process:
        _wait_for_hang(tmp_path, process)
        hung = time.monotonic()
        assert process.wait(timeout=30) == 1
        assert time.monotonic() - hung < 10
    run_dir = _run_dir(tmp_path)
    stderr = _stderr(tmp_path)
    assert stderr.startswith(
        "error: Train environment 1 (Faulty-hang-v0) did not return from step within "
        f"env_timeout=1 s; stopped at env step 64; the latest checkpoint is {run_dir}/checkpoints"
        "/ckpt-64. Resume with: python -m agents.scripts.train --config=debug"
    )
    assert stderr.count("\n") == 1
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-64.index"))


@pytest.mark.slow
def test_second_signal_ends_a_hung_step_and_the_env_processes(tmp_path):
    argv = [*_HUNG_ENV, "--set", "env_timeout=None", "--env_processes"]
    (tmp_path / "tmp").mkdir()  # Its own TMPDIR: the XLA scratch folder must go with it.
    # Without this process's TF_XLA_FLAGS, which point at this process's scratch folder.
    scratch = dict(TMPDIR=str(tmp_path / "tmp"), TF_XLA_FLAGS="")
    with _trainer(tmp_path, *argv, env=scratch) as process:
        env_pid = _wait_for_hang(tmp_path, process)
        assert [name for name in os.listdir(tmp_path / "tmp") if name.startswith("agents-xla-")]
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert process.poll() is None  # The first signal waits for the step.
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 128 + signal.SIGINT
    stderr = _stderr(tmp_path)
    assert "SIGINT: stopping after this step (again to stop at once).\n" in stderr
    assert (
        "SIGINT again: stopped at once at env step 64; the latest checkpoint is "
        f"{_run_dir(tmp_path)}/checkpoints/ckpt-64. Resume with: " in stderr
    )
    assert _is_gone(env_pid)
    assert not [name for name in os.listdir(tmp_path / "tmp") if name.startswith("agents-xla-")]


@pytest.mark.slow
def test_env_processes_die_with_a_killed_trainer(tmp_path):
    argv = [*_HUNG_ENV, "--set", "env_timeout=None", "--env_processes"]
    with _trainer(tmp_path, *argv) as process:
        env_pid = _wait_for_hang(tmp_path, process)
        children = _children(process.pid)  # The envs and multiprocessing's resource tracker.
        assert env_pid in children and len(children) >= 5
        process.kill()
        process.wait()
    for pid in children:
        assert _is_gone(pid), f"process {pid} outlived the killed trainer"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_the_process_group_with_env_processes_saves(signum, tmp_path):
    argv = ["--env_processes", "--set", "train_steps=1000000"]
    with _trainer(tmp_path, *argv, start_new_session=True) as process:
        deadline = time.monotonic() + 60
        while not glob.glob(str(tmp_path / "logs" / "*-debug*" / "checkpoints" / "ckpt-*.index")):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        os.killpg(process.pid, signum)
        assert process.wait(timeout=30) == 128 + signum
    run_dir = _run_dir(tmp_path)
    stderr = _stderr(tmp_path)
    assert "Environment" not in stderr and "Traceback" not in stderr
    assert "; checkpoint saved. Resume with: python -m agents.scripts.train" in stderr
    assert os.path.isdir(os.path.join(run_dir, results.POLICY_DIR))


@pytest.mark.slow
def test_second_process_on_a_run_is_refused_naming_the_owner(tmp_path):
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", "train_steps=1000000"]
    with training_process(argv) as process:
        (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
        timestamp = os.path.basename(run_dir).split("-")[0]
        deadline = time.monotonic() + 120  # Until the owner has written all it writes.
        while not os.path.isdir(os.path.join(run_dir, "checkpoints")):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
        before = sorted(os.listdir(run_dir))
        code, stdout, stderr = run_main(train.main, [*argv, f"--timestamp={timestamp}"])
        assert code == 2 and stdout == ""
        assert stderr == (
            f"error: Run {run_dir!r} is in use by process {process.pid} (it holds run.lock); "
            "wait for it to end or stop it, then resume.\n"
        )
        assert sorted(os.listdir(run_dir)) == before
        process.kill()
        process.wait()
    from agents.training.run_dirs import acquire  # A killed owner leaves no lock behind.

    acquire(run_dir).close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_a_run_directory_moved_or_deleted_while_training_stops_it_with_one_line(how, tmp_path):
    import shutil

    argv = ["--config=debug", f"--logdir={tmp_path / 'logs'}", "--set", "train_steps=1000000"]
    stderr_path = tmp_path / "stderr.txt"
    with open(stderr_path, "w") as errors, training_process(argv, errors) as process:
        (run_dir,) = glob.glob(str(tmp_path / "logs" / "*-debug*"))
        if how == "moved":
            shutil.move(run_dir, tmp_path / "elsewhere")
        else:
            shutil.rmtree(run_dir)
        assert process.wait(timeout=60) == 1
    (line,) = stderr_path.read_text().splitlines()
    assert line.startswith(f"error: The run directory {run_dir} was moved or deleted during ")
    assert not os.path.exists(run_dir)  # Nothing written there again: no second, partial run.
    if how == "moved":
        assert os.path.isfile(tmp_path / "elsewhere" / "config.yaml")


@pytest.mark.slow
def test_an_env_hung_in_an_async_vector_env_stops_training_and_its_processes(tmp_path):
    argv = [*_HUNG_ENV, "--set", "env_timeout=1", "--set", "env_backend=gymnasium-async"]
    with _trainer(tmp_path, *argv) as process:
        hung_pid = _wait_for_hang(tmp_path, process)
        assert process.wait(timeout=30) == 1
    stderr = _stderr(tmp_path)
    assert stderr.startswith(
        "error: Train vector env (Faulty-hang-v0) did not return from step within "
        "env_timeout=1 s; stopped at env step 64; the latest checkpoint is "
    )
    assert stderr.count("\n") == 1
    assert _is_gone(hung_pid)  # The worker that hung was killed with the trainer's others.
