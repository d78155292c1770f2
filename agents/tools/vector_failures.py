"""Which env of a vector env failed (read from gymnasium's logs, tracebacks and worker
processes), and ending an async vector env's workers after a failure."""

from __future__ import annotations

import contextlib
import linecache
import re
import time
import warnings
from typing import Any

from agents.tools.wrappers import ExternalProcessError, death_message

_DEATH_SECONDS = 1.0  # How long a pipe's end may precede its worker's exit being seen.
_JOIN_SECONDS = 5.0  # How long to wait for each killed worker to be reaped.

# What gymnasium's async vector env logs when a worker fails (as warnings).
WORKER_ERROR = re.compile(r"from Worker-(\d+)|Traceback|ERROR:")


def failure(
    vector_env: Any, error: BaseException, logged: list[str]
) -> tuple[int | None, BaseException]:
    """The env that failed in a vector env's call where it can be told, and what to report:
    the error raised, or, where a worker process died (its pipe ended), how it died in one line
    (gymnasium's traceback of the pipe's end says nothing more)."""
    if isinstance(error, (EOFError, OSError)):
        death = dead_worker(vector_env)
        if death is not None:
            return death[0], ExternalProcessError(death[1])
    return failing_env(error, logged), error


def failing_env(error: BaseException, logged: list[str]) -> int | None:
    """The index of the env that raised inside a vector env's call, where it can be told: an
    async worker's log line names it; a sync vector env's loop holds it in its frame."""
    for message in logged:
        found = re.search(r"from Worker-(\d+)", message)
        if found:
            return int(found.group(1))
    frame = error.__traceback__
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_filename.endswith("sync_vector_env.py") and code.co_name in ("step", "reset"):
            # Only a line that calls env i: after the loop, `i` is the last env, not the culprit.
            line = linecache.getline(code.co_filename, frame.tb_lineno)
            index = frame.tb_frame.f_locals.get("i")
            return index if isinstance(index, int) and "envs[i]" in line else None
        frame = frame.tb_next
    return None


# Where reissued warnings are remembered, so that one a worker repeats every step shows once.
_SHOWN: dict = {}


def reissue(logged: list) -> None:
    """Warn again what a vector env call warned (caught to read its worker errors), under the
    process's filters, each once as warnings are by default."""
    for message in logged:
        warnings.warn_explicit(
            message.message, message.category, message.filename, message.lineno, registry=_SHOWN
        )


def dead_worker(vector_env: Any) -> tuple[int, str] | None:
    """The first worker process of an async vector env found dead, and how it ended: (its
    index, one line), or None if all live (or the vector env has no processes).

    Called after a call met the end of a worker's pipe: the worker's exit may follow by a moment,
    so it is looked for during `_DEATH_SECONDS`.
    """
    processes = list(getattr(_unwrapped(vector_env), "processes", None) or ())
    deadline = time.monotonic() + _DEATH_SECONDS
    while processes:
        for index, process in enumerate(processes):
            if not process.is_alive():  # Reaps it: its exit code is known.
                return index, death_message(process.pid, process.exitcode)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return None


def end_workers(vector_env: Any) -> None:
    """End an async vector env's worker processes at once and close its pipes, never waiting
    on a pipe; the vector env then counts as closed (its own `close` does nothing).

    gymnasium's `close(terminate=True)` first reads the pending results, and a dead worker's pipe
    raises there, before any process is ended; and its SIGTERM does not end a forked worker that
    inherited the training process's handler of SIGTERM (which only asks the run to stop). So the
    workers are sent SIGKILL, which no handler catches, before their pipes close (a worker whose
    pipe closes first prints a broken pipe's traceback).
    """
    env = _unwrapped(vector_env)
    processes = list(getattr(env, "processes", None) or ())
    for process in processes:
        with contextlib.suppress(Exception):
            if process.is_alive():
                process.kill()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(_JOIN_SECONDS)
    for pipe in getattr(env, "parent_pipes", None) or ():
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    env.closed = True


def _unwrapped(vector_env: Any) -> Any:
    return getattr(vector_env, "unwrapped", vector_env)
