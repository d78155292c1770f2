"""TensorFlow's load-time lines, shown as its log level asks (see `tf_loading.import_tensorflow`).

TensorFlow's libraries print a few lines while they load, before absl's logging starts (oneDNN,
the CUDA stubs), and those ignore `TF_CPP_MIN_LOG_LEVEL`. Where the level hides info lines
(`import agents` sets 3 unless you set it), they are caught here; with the level unset or 0
they show.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator

LOG_LEVEL = "TF_CPP_MIN_LOG_LEVEL"


@contextlib.contextmanager
def captured_stderr(enabled: bool, keep: Callable[[str], bool] | None = None) -> Iterator[None]:
    """Within the block, what is written to file descriptor 2 goes to a file, not the terminal.

    After the block, the captured lines for which `keep` is true are written to stderr; on an
    error all of them are, so a failing import still explains itself.
    """
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines = capture.read().decode(errors="replace").splitlines(keepends=True)
            shown = [line for line in lines if failed or (keep is not None and keep(line))]
            if shown:
                sys.stderr.write("".join(shown))
                sys.stderr.flush()
