"""How a training process ends: exit_quickly as sys.exit does (status, atexit handlers, flushed
output), and a stop signal during start-up (a layout bank's build, an env's start) at once, with
nothing left behind."""

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from agents.runtime import tf_loading
from tests.scripts import faulty_envs, slow_start_envs
from tests.scripts.capture import read_lines, untimed


@pytest.mark.parametrize("status, expected", [(3, 3), (None, 0)])
def test_exit_quickly_keeps_status_atexit_handlers_and_buffered_output(tmp_path, status, expected):
    marker = tmp_path / "atexit.txt"
    code = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'ran')\n"
        "from agents.scripts.shutdown import exit_quickly\n"
        "sys.stdout.write('buffered')\n"  # Not flushed by hand: the exit must flush it.
        f"exit_quickly({status!r})\n"
        "print('not reached')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == expected, result.stderr
    assert result.stdout == "buffered"
    assert marker.read_text() == "ran"


def test_exit_quickly_leaves_objects_alive_out_of_later_collections():
    code = (
        "import gc\n"
        "from agents.scripts import shutdown\n"
        "try:\n"
        "    shutdown.exit_quickly(0)\n"
        "except SystemExit:\n"
        "    print(gc.get_freeze_count() > 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "True", result.stderr


def _processes_naming(text):
    """Pids of the live (not zombie) processes whose command line holds `text`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline, open(f"/proc/{pid}/stat") as stat:
                alive = stat.read().rsplit(")", 1)[1].split()[0] != "Z"
                if alive and text.encode() in cmdline.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def _failure(status, took, stderr: str) -> str:
    """The assertion's message: the status, the seconds, and stderr's end (where the process
    hung: its threads' stacks after SIGABRT), which pytest would otherwise cut."""
    return f"status {status} after {took:.1f} s; stderr ends:\n{stderr[-6000:]}"


def _stop_when_printed(tmp_path, argv, prefix, signum, hung=False, delay=0.0, again_when=None):
    """Train with `argv` (its cache and temporary folders in `tmp_path`) until it prints a line
    starting with `prefix` (and, if `hung`, until a `faulty_envs` env hangs), then, `delay` s
    later, send it `signum` (and again once a path matching the glob `again_when` under
    `tmp_path` appears, if given): (exit status, or None where it did not end within 30 s;
    seconds it took to end; stdout lines; stderr)."""
    (tmp_path / "tmp").mkdir()
    # Its own XLA scratch folder (not this test process's), which must not outlive it.
    env = dict(tf_loading.fresh_environ(), TF_CPP_MIN_LOG_LEVEL="3")
    env["AGENTS_CACHE"] = str(tmp_path / "cache")
    hang_file = tmp_path / "hang.txt"
    env[faulty_envs.HANG_FILE] = str(hang_file)
    env["PYTHONFAULTHANDLER"] = "1"  # SIGABRT prints where it hangs.
    env["TMPDIR"] = str(tmp_path / "tmp")
    command = [sys.executable, "-m", "agents.scripts.train", f"--logdir={tmp_path / 'logs'}"]
    with open(tmp_path / "stderr.txt", "w") as stderr:
        process = subprocess.Popen(
            [*command, *argv], stdout=subprocess.PIPE, stderr=stderr, env=env, text=True
        )
    lines, printed = queue.Queue(), []
    reader = threading.Thread(target=read_lines, args=(process.stdout, lines), daemon=True)
    reader.start()
    try:
        while not printed or not untimed(printed[-1]).startswith(prefix):
            printed.append(lines.get(timeout=120))
            assert printed[-1] is not None, (tmp_path / "stderr.txt").read_text()
        waited = time.monotonic()
        while hung and not hang_file.exists() and time.monotonic() - waited < 120:
            time.sleep(0.1)
        time.sleep(delay)
        process.send_signal(signum)
        sent = time.monotonic()
        while again_when is not None and process.poll() is None:
            if list(tmp_path.glob(again_when)):
                process.send_signal(signum)
                break
            time.sleep(0.01)
        try:
            status = process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # Its threads' stacks, on stderr, for the failure.
            process.send_signal(signal.SIGABRT)
            process.wait(timeout=10)
            status = None
        took = time.monotonic() - sent
    finally:
        process.kill()  # Only if still running.
        process.wait()
        reader.join(timeout=10)
        process.stdout.close()
    return status, took, printed, (tmp_path / "stderr.txt").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_layout_bank_build_ends_it_at_once_leaving_nothing(tmp_path, signum):
    """A signal while the bank's first layouts are built (before training starts): no partial
    bank cached (the next run builds it), the new run's directory removed: 128 + the signal
    within 10 s."""
    argv = ["--config=keycorridor_rnd", "--set", "env=MiniGrid-FourRooms-v0", "train_steps=1"]
    building = "Building the first 8,192 layouts of the layout bank of MiniGrid-FourRooms-v0"
    status, took, printed, stderr = _stop_when_printed(tmp_path, argv, building, signum)
    assert status == 128 + signum and took < 10, _failure(status, took, stderr)
    assert "Interrupted during start-up; removed the new run directory" in stderr
    assert _processes_naming(str(tmp_path)) == []
    assert os.listdir(tmp_path / "tmp") == []
    assert not list((tmp_path / "cache").rglob("*.npz*"))
    assert os.listdir(tmp_path / "logs") == []


@pytest.mark.slow
def test_a_signal_while_the_bank_grows_ends_its_workers_and_their_folder(tmp_path):
    """A signal while worker processes build the rest of the bank (training has started): the
    run ends within 10 s, its workers killed and their folder removed."""
    argv = ["--config=keycorridor_rnd", "--set", "env=MiniGrid-FourRooms-v0", "train_steps=1"]
    growing = "Building the layout bank of MiniGrid-FourRooms-v0 while training starts"
    status, took, printed, stderr = _stop_when_printed(tmp_path, argv, growing, signal.SIGTERM)
    assert status is not None and took < 10, _failure(status, took, stderr)
    assert _processes_naming(str(tmp_path)) == []
    assert not [name for name in os.listdir(tmp_path / "tmp") if "layouts" in name]


@pytest.mark.slow
def test_a_signal_in_the_first_call_ends_the_bank_builders_and_their_folder(tmp_path):
    """Ended at once in its first training call (which compiles for seconds), the process
    leaves no bank builder, layout folder or XLA scratch folder behind."""
    argv = ["--config=keycorridor_rnd", "--set", "env=MiniGrid-FourRooms-v0"]
    status, took, printed, stderr = _stop_when_printed(
        tmp_path, argv, "Starting run", signal.SIGTERM, delay=2.0
    )
    assert status == 128 + signal.SIGTERM and took < 10, _failure(status, took, stderr)
    assert "SIGTERM: stopped in the first training call" in stderr
    assert _processes_naming(str(tmp_path)) == []
    assert os.listdir(tmp_path / "tmp") == []
    assert os.listdir(tmp_path / "logs") == []


@pytest.mark.slow
def test_a_signal_while_an_env_starts_ends_the_start_up_at_once(tmp_path):
    argv = ["--config=cartpole_native", "--set", "env=tests.scripts.slow_start_envs:SlowStart-v0"]
    status, took, _, stderr = _stop_when_printed(
        tmp_path, argv, slow_start_envs.STARTING, signal.SIGTERM
    )
    assert status == 128 + signal.SIGTERM and took < 10, _failure(status, took, stderr)
    assert "SIGTERM: stopping the start-up (again to stop at once)." in stderr
    assert "Interrupted during start-up; removed the new run directory" in stderr
    assert os.listdir(tmp_path / "logs") == []


@pytest.mark.slow
def test_a_signal_in_the_first_training_call_ends_it_at_once(tmp_path):
    """The first call (it compiles the agent) saves nothing until it ends: a signal there ends
    the process within 10 s, its env processes killed and the new run's directory removed,
    even where the call would not end for an hour (an env hangs in it)."""
    env = f"env={faulty_envs.env_id('Faulty-hang-v0')}"
    argv = ["--config=debug", "--set", env, "env_timeout=None", "rollout_length=64"]
    argv.append("--env_processes")  # One call of 64 steps: the env hangs at its 40th.
    status, took, _, stderr = _stop_when_printed(
        tmp_path, argv, "Starting run", signal.SIGTERM, hung=True
    )
    assert status == 128 + signal.SIGTERM and took < 10, _failure(status, took, stderr)
    assert "SIGTERM: stopped in the first training call, which compiles; removed the new run" in (
        stderr
    )
    assert os.listdir(tmp_path / "logs") == []
    assert _processes_naming(str(tmp_path)) == []


@pytest.mark.slow
def test_two_signals_while_the_policy_is_exported_end_it_leaving_no_partial_export(tmp_path):
    """The second signal, once the export has begun writing, ends the process at once: the
    half-written policy folder goes with it (the checkpoint is written before the export)."""
    status, took, _, stderr = _stop_when_printed(
        tmp_path,
        ["--config=debug"],
        "Learning curve:",
        signal.SIGTERM,
        again_when="logs/*/policy.partial/*",
    )
    assert status == 128 + signal.SIGTERM and took < 10, _failure(status, took, stderr)
    assert "SIGTERM again: stopped at once at env step 256; checkpoint saved." in stderr
    (run_dir,) = (tmp_path / "logs").iterdir()
    assert not (run_dir / "policy.partial").exists()
    # Whole or absent: the export may have finished while the process was being ended.
    policy = run_dir / "policy"
    assert not policy.exists() or (policy / "saved_model.pb").exists()
    assert (run_dir / "checkpoints").is_dir()
