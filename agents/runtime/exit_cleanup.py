"""Clean-ups that run however this process ends: at its normal exit (as `atexit` handlers) and
when the run guard ends it at once with `os._exit`, which runs no `atexit` handler (`run_now`).

Each leaves nothing of the process behind: a worker it started, a temporary folder.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Callable

_cleanups: list[Callable[[], None]] = []
_lock = threading.Lock()


def register(cleanup: Callable[[], None]) -> None:
    """Run `cleanup` at exit (normal or at once) unless `unregister`ed first."""
    with _lock:
        _cleanups.append(cleanup)
    atexit.register(cleanup)


def unregister(cleanup: Callable[[], None]) -> None:
    """Forget `cleanup` (the very object given to `register`)."""
    with _lock:
        if cleanup in _cleanups:
            _cleanups.remove(cleanup)
    atexit.unregister(cleanup)


def run_now() -> None:
    """Run every registered clean-up, the latest first, before an exit that runs no `atexit`
    handler; a clean-up that fails does not keep the others from running."""
    with _lock:
        cleanups = _cleanups[::-1]
        _cleanups.clear()
    for cleanup in cleanups:
        atexit.unregister(cleanup)
        with contextlib.suppress(Exception):
            cleanup()
