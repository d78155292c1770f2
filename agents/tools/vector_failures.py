"""Which env of a vector env failed: read from gymnasium's logs and tracebacks."""

from __future__ import annotations

import linecache
import re
import warnings

# What gymnasium's async vector env logs when a worker fails (as warnings).
WORKER_ERROR = re.compile(r"from Worker-(\d+)|Traceback|ERROR:")


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
