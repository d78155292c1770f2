"""Tests for the run directory's lock: who holds it, as the refusal names it."""

import os
import subprocess
import sys

import pytest

from agents.config.errors import UsageError
from agents.training.run_dirs import LOCK_FILE, acquire

_HOLD = (
    "import fcntl, sys, time; handle = open(sys.argv[1], 'a'); "
    "fcntl.flock(handle, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(120)"
)


def _hold(path):
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, path], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "locked"
    return holder


def test_the_running_trainer_holding_the_lock_is_named(tmp_path):
    lock = acquire(str(tmp_path))
    with open(tmp_path / LOCK_FILE) as handle:
        assert handle.read() == f"{os.getpid()}\n"
    code = f"from agents.training.run_dirs import acquire; acquire({str(tmp_path)!r})"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert f"is in use by process {os.getpid()} (it holds run.lock)" in result.stderr
    lock.close()


def test_a_foreign_holder_is_not_blamed_on_a_trainer_that_has_ended(tmp_path):
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], text=True, capture_output=True
    ).stdout.strip()
    (tmp_path / LOCK_FILE).write_text(f"{ended}\n")  # The last trainer's id; it has ended.
    holder = _hold(str(tmp_path / LOCK_FILE))  # Holds the lock without writing its id.
    try:
        with pytest.raises(UsageError) as caught:
            acquire(str(tmp_path))
    finally:
        holder.kill()
        holder.wait()
    message = str(caught.value)
    assert f"in use by another process (it holds run.lock, which names process {ended}, no " in (
        message
    )
    assert "`fuser " in message
    acquire(str(tmp_path)).close()  # Free again once the holder has ended.
