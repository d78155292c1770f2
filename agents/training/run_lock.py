"""The run directory's lock: one process at a time owns a run (an OS lock; a killed owner frees
it)."""

from __future__ import annotations

import fcntl
import os
from typing import BinaryIO

from agents.config.errors import UsageError

LOCK_FILE = "run.lock"  # In the run directory; holds the owner's process id.


def acquire(run_dir: str) -> BinaryIO:
    """An exclusive `flock` on `<run_dir>/run.lock`, held until the returned file is closed or
    the process ends.

    The kernel releases the lock when its owner dies, even by SIGKILL, so a stale file never
    blocks a resume. Env child processes are spawned, not forked, and do not inherit it.

    Args:
        run_dir: The run directory (existing).

    Returns:
        The lock file, open: closing it releases the lock (the file stays; its content, the
        owner's process id, is only a hint).

    Raises:
        UsageError: Another process holds the lock; the message names its process id.
    """
    path = os.path.join(run_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise UsageError(f"Cannot open the run's lock {path!r}: {error.strerror}.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        owner = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise UsageError(
            f"Run {run_dir!r} is in use by {_describe_owner(owner, path)}; wait for it to end "
            "or stop it, then resume."
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return os.fdopen(fd, "rb", buffering=0)  # Closing the only descriptor frees the flock.


def _describe_owner(recorded: str, path: str) -> str:
    """Who holds the lock: the process the file names if it runs, else another one.

    A process that locked the file without writing its id (not a trainer) leaves the previous
    trainer's id there, which may have ended long ago.
    """
    if recorded.isdigit():
        try:
            os.kill(int(recorded), 0)
        except ProcessLookupError:
            return (
                f"another process (it holds {LOCK_FILE}, which names process {recorded}, no "
                f"longer running; `fuser {path}` shows the holder)"
            )
        except PermissionError:  # Runs, under another user.
            pass
        return f"process {recorded} (it holds {LOCK_FILE})"
    return f"another process (it holds {LOCK_FILE}; `fuser {path}` shows which)"
