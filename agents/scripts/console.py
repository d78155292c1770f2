"""A quiet console: TensorFlow's and absl's log lines stay off the terminal unless asked for.

TensorFlow reads `TF_CPP_MIN_LOG_LEVEL` when it loads, and some of its libraries print before
absl's logging starts (oneDNN, CUDA stubs), so the level is set and those lines are caught before
the import. A value the user set is kept, and then nothing is hidden.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from agents.scripts import compile_cache, tf_defaults

LOG_LEVEL = "TF_CPP_MIN_LOG_LEVEL"


def import_tensorflow(verbose: bool = False, agent: str = "ppo") -> None:
    """Import TensorFlow, Keras and TensorFlow Probability, silently unless `verbose`.

    Args:
        verbose: Show TensorFlow's log lines (its C++ logs, absl's and its Python logger's).
        agent: The agent family to be trained, whose process settings TensorFlow loads with
            (see `tf_defaults`).
    """
    if "tensorflow" in sys.modules:
        return
    compile_cache.enable()
    tf_defaults.configure(agent=agent)
    quiet = not verbose and LOG_LEVEL not in os.environ
    if quiet:
        os.environ[LOG_LEVEL] = "3"  # Also read by env processes and MPI ranks spawned later.
    with _captured_stderr(quiet):
        import keras  # noqa: F401
        import tensorflow as tf
        import tensorflow_probability  # noqa: F401
    if quiet:
        tf.get_logger().setLevel("ERROR")
        from absl import logging

        logging.set_verbosity(logging.ERROR)


@contextlib.contextmanager
def _captured_stderr(enabled: bool) -> Iterator[None]:
    """Within the block, what is written to file descriptor 2 goes to a file, not the terminal.

    On an error the captured text is written back to stderr, so a failing import still explains
    itself.
    """
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            capture.seek(0)
            sys.stderr.write(capture.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


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
