"""A native MiniGrid run on a fresh machine: seconds from the command to its first training line.

For each config, runs `python -m agents.scripts.train --config=<name>` with empty caches (the
layout banks' and XLA's: `AGENTS_CACHE` and `XDG_CACHE_HOME` in new folders, as on a fresh
machine), reads its stdout, and times its first line (what the run says first, e.g. the layouts
it builds before training) and its first training line (`train  env step ...`, after the first
training call); then stops the run with SIGTERM (it saves and exits) and its folders go. One run
at a time. By default one config per native MiniGrid id, its NovelD arm where it has one (RND's
networks and the episodic table: the most to compile), and E3B's.

Appends one record per config to `benchmarks/results/first_line.jsonl` (commit, machine, load,
date) and prints a table against `TARGET_SECONDS`.

Run: `python -m benchmarks.first_line [--configs keycorridor_noveld ...] [--timeout 900]`.
"""

from __future__ import annotations

import argparse
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchmarks import common
from benchmarks.pages.first_line_page import TARGET_SECONDS

RECORDS = os.path.join(common.RESULTS, "first_line.jsonl")
# A train report's line (`reporting.report_line`), after the date and time that stdout's lines
# carry where it is no terminal (`progress.write`).
TRAIN_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d )?\s*train\s+env step")
CONFIGS = (
    "doorkey_native",
    "doorkey16_noveld",
    "keycorridor_noveld",
    "keycorridor_s4_noveld",
    "keycorridor_s4_e3b",
    "keycorridor_s5_noveld",
    "keycorridor_s6_noveld",
    "multiroom_noveld",
    "multiroom_n6_noveld",
    "obstructedmaze_noveld",
    "obstructedmaze_1q_noveld",
    "obstructedmaze_full_noveld",
)


def first_lines(config: str, timeout: float) -> dict:
    """Seconds from spawning a fresh-cache training run of `config` to its first line and to
    its first training line (None if it did not come within `timeout`; then also the end of the
    run's stderr), and the last lines before it."""
    from agents.runtime import tf_loading

    scratch = tempfile.mkdtemp(prefix="first_line_")
    environ = tf_loading.fresh_environ()
    environ.update(
        AGENTS_CACHE=os.path.join(scratch, "layouts"),
        XDG_CACHE_HOME=os.path.join(scratch, "cache"),
        PYTHONUNBUFFERED="1",
    )
    command = [sys.executable, "-m", "agents.scripts.train", f"--config={config}"]
    command.append(f"--logdir={os.path.join(scratch, 'logdir')}")
    errors = open(os.path.join(scratch, "stderr.txt"), "w+", encoding="utf-8")  # noqa: SIM115
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=common.ROOT, env=environ, stdout=subprocess.PIPE, stderr=errors
    )
    first = trained = None
    before: list[str] = []
    try:
        for line in _lines(process, start + timeout):
            seconds = time.perf_counter() - start
            first = seconds if first is None else first
            if TRAIN_LINE.match(line):
                trained = seconds
                break
            before.append(line.rstrip())
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        errors.seek(0)
        stderr = errors.read()
        errors.close()
        shutil.rmtree(scratch, ignore_errors=True)
    result = dict(first_line_s=first, first_train_line_s=trained, lines_before=before[-8:])
    return result if trained is not None else dict(result, stderr_end=stderr[-2000:])


def _lines(process: subprocess.Popen, deadline: float):
    """The lines of `process`'s stdout until it ends or `deadline` (perf_counter) passes, read
    from the pipe itself (a file object's buffer would hold lines the selector cannot see)."""
    pipe, pending = process.stdout.fileno(), b""
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        while time.perf_counter() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.perf_counter())):
                continue
            chunk = os.read(pipe, 65536)
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            yield from (line.decode("utf-8", "replace") + "\n" for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), help="named configs")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run at most")
    args = parser.parse_args(argv)
    sitting = common.new_sitting()
    rows = []
    for config in args.configs:
        result = first_lines(config, args.timeout)
        common.append_record(RECORDS, sitting, config=config, timeout_s=args.timeout, **result)
        seconds = result["first_train_line_s"]
        met = seconds is not None and seconds <= TARGET_SECONDS
        shown = f"{seconds:.1f} s" if seconds is not None else f"none in {args.timeout:g} s"
        first = result["first_line_s"]
        rows.append([config, f"{first:.1f} s" if first else "-", shown, "yes" if met else "NO"])
        print(f"{config}: first training line {shown}", flush=True)
    print(common.machine_line())
    header = ["config", "first line", "first training line", f"<= {TARGET_SECONDS:g} s"]
    print(common.table(header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
