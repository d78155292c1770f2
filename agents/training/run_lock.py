"""RunLock: one process at a time owns a run directory (an OS lock; a killed owner frees it)."""

from __future__ import annotations

import contextlib
import fcntl
import os

from agents.config.errors import UsageError

LOCK_FILE = "run.lock"  # In the run directory; holds the owner's process id.


class RunLock:
    """An exclusive `flock` on `<run_dir>/run.lock`, held until `release` or the process ends.

    The kernel releases the lock when its owner dies, even by SIGKILL, so a stale file never
    blocks a resume. Env child processes are spawned, not forked, and do not inherit it.

    Args:
        run_dir: The run directory (existing).

    Raises:
        UsageError: Another process holds the lock; the message names its process id.
    """

    def __init__(self, run_dir: str) -> None:
        path = os.path.join(run_dir, LOCK_FILE)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise UsageError(f"Cannot open the run's lock {path!r}: {error.strerror}.") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = os.read(self._fd, 32).decode(errors="replace").strip()
            os.close(self._fd)
            raise UsageError(
                f"Run {run_dir!r} is in use by {_describe_owner(owner, path)}; wait for it to "
                "end or stop it, then resume."
            ) from None
        os.ftruncate(self._fd, 0)
        os.write(self._fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Release the lock (the file stays; its content is only a hint)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # Closing the only descriptor releases the flock.
            self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()


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
