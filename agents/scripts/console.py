"""A console that outlives its reader: a closed stdout pipe or a lost terminal ends no run."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import Any

# Errors of a write whose reader is gone: a closed pipe (`| head`, a dead `| tee`) or a lost
# terminal.
_READER_GONE = (errno.EPIPE, errno.EIO)


class SurvivingStream:
    """A text stream that goes quiet, instead of raising, once its reader is gone.

    Training outlives its console: when `train ... | head -2` closes the pipe or the terminal is
    lost, the run goes on (its reports are in metrics.jsonl and TensorBoard) and ends as it would
    have. The stream's file descriptor is pointed at /dev/null then, so that the interpreter's
    final flush finds nothing to fail on. Other write errors are raised.

    Args:
        stream: The stream to write to, e.g. `sys.stdout`.
        on_lost: Called once with the error when the reader is found gone.
    """

    def __init__(self, stream: Any, on_lost=None) -> None:
        self._stream = stream
        self._on_lost = on_lost
        self.lost = False

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                return self._stream.write(text)
            except OSError as error:
                self._lose(error)
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except OSError as error:
                self._lose(error)

    def isatty(self) -> bool:
        return not self.lost and self._stream.isatty()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, ...
        return getattr(self._stream, name)

    def _lose(self, error: OSError) -> None:
        if error.errno not in _READER_GONE:
            raise error
        self.lost = True
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        if self._on_lost is not None:
            self._on_lost(error)


@contextlib.contextmanager
def surviving_console() -> Iterator[None]:
    """Within the block, stdout and stderr are `SurvivingStream`s; a lost stdout is told on
    stderr once."""

    def stdout_lost(error: OSError) -> None:
        print(
            f"warning: stdout is gone ({error.strerror}); training goes on, its reports are in "
            "metrics.jsonl and TensorBoard.",
            file=sys.stderr,
            flush=True,
        )

    saved = sys.stdout, sys.stderr
    sys.stderr = SurvivingStream(sys.stderr)
    sys.stdout = SurvivingStream(sys.stdout, stdout_lost)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
