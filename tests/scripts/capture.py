"""Run the training script, in this process or a child one, and capture what it prints."""

import contextlib
import io
import os
import queue
import re
import subprocess
import sys
import threading

# What `agents.training.progress.write` puts before each line on a file or a pipe.
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", re.MULTILINE)


def untimed(text):
    """`text` (a line or several) without the timestamps a pipe's lines start with."""
    return TIMESTAMP.sub("", text)


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


@contextlib.contextmanager
def training_process(argv, stderr=subprocess.DEVNULL):
    """`python -m agents.scripts.train *argv` in a child process, from its first train report.

    Yields the `subprocess.Popen` once the child printed its first train report (so that its
    first checkpoint is on disk), for the caller to signal or kill; the child is killed on exit.
    """
    command = [sys.executable, "-m", "agents.scripts.train", *argv]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, env=env, text=True)
    lines = queue.Queue()  # Filled by a thread, so that waiting for a line can time out.
    reader = threading.Thread(target=read_lines, args=(process.stdout, lines), daemon=True)
    reader.start()
    try:
        line = ""
        while not untimed(line).startswith("train  env step"):
            line = lines.get(timeout=60)
            assert line is not None, "The training process exited before its first report."
        yield process
    finally:
        process.kill()  # Only if still running.
        process.wait()
        reader.join(timeout=10)
        process.stdout.close()
