"""How a process loads TensorFlow: quietly, with the compile cache and the process defaults set.

TensorFlow reads `TF_CPP_MIN_LOG_LEVEL` when it loads, and some of its libraries print before
absl's logging starts (oneDNN, CUDA stubs), so the level is set and those lines are caught before
the import. A value the user set is kept, and then nothing is hidden.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

from agents.training import compile_cache, tf_defaults

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
