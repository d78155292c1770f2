"""Run a script's `main` in this process and capture what it prints."""

import contextlib
import io


def run_main(main, argv):
    """`main(argv)` with stdout and stderr captured; returns (exit code, stdout, stderr)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return code, stdout.getvalue(), stderr.getvalue()


def read_lines(stream, lines):
    """Put each line of `stream` on the queue `lines`, then None; run it in a thread."""
    for line in stream:
        lines.put(line)
    lines.put(None)  # End of output.
