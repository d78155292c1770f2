"""Helpers of the benchmarks: the machine line, a timed command, and the child-process entry.

The per-run helpers (`run_child`, `table`, ...) live in `learning.py`; the other scripts import them
from there.
"""

from __future__ import annotations

import inspect
import json
import os
import platform
import subprocess
import sys
import time
import typing
from collections.abc import Callable


def cores() -> int:
    """The CPUs this process may run on: its affinity (`taskset`, a scheduler's binding), not
    every CPU of the host, which `os.cpu_count()` counts."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_line(seconds: float | None = None) -> str:
    """Date, CPUs, load and Python of this machine (and the benchmark's total time), one line."""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    cpu = _cpu_model()
    line = (
        f"{time.strftime('%Y-%m-%d %H:%M')} | {cores()} CPUs{f' ({cpu})' if cpu else ''}, "
        f"load {load} | Python {platform.python_version()}"
    )
    return line if seconds is None else f"{line} | {seconds:.0f} s in all"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def timed_process(command: list[str], log_path: str) -> tuple[str, float]:
    """Runs `command`; returns (its stdout, wall seconds from spawn to exit).

    Its stderr goes to `log_path`.

    Raises:
        RuntimeError: The command failed; the message holds the tail of its log.
    """
    with open(log_path, "w") as log:
        start = time.perf_counter()
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=log, text=True)
        seconds = time.perf_counter() - start
    if result.returncode:
        with open(log_path) as log:
            tail = "".join(log.readlines()[-20:])
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n{tail}")
    return result.stdout, seconds


def last_json(stdout: str) -> dict:
    """The JSON object on the last line of a child's stdout."""
    return json.loads(stdout.strip().splitlines()[-1])


def run_script(main: Callable[[], int | None], child: Callable[..., dict]) -> None:
    """The entry point of a benchmark that measures in fresh child processes.

    `python script.py --child ARG ...` calls `child` with the ARGs converted to the types its
    parameters are annotated with, and prints its result as JSON on the last line (rank 0's
    only, under mpirun); without `--child` the process exits with `main()`.
    """
    if sys.argv[1:2] != ["--child"]:
        sys.exit(main())
    hints = typing.get_type_hints(child)
    names = list(inspect.signature(child).parameters)
    values = [hints.get(name, str)(value) for name, value in zip(names, sys.argv[2:])]
    result = child(*values)
    if os.environ.get("PMI_RANK", "0") == "0":
        print(json.dumps(result), flush=True)


def new_sitting(root: str) -> dict:
    """What every record of one run of a benchmark shares: when it started, the checkout's
    commit (`speed_matrix.commit`) and the machine."""
    from speed_matrix import commit, machine

    return dict(started=time.strftime("%Y-%m-%d %H:%M:%S"), commit=commit(root), machine=machine())


def append_record(path: str, sitting: dict, **figures) -> None:
    """Appends one record to the JSON-lines file `path`: the sitting's keys, the date and load
    now, and `figures`."""
    record = dict(sitting, date=time.strftime("%Y-%m-%d %H:%M"), load=os.getloadavg()[0])
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(dict(record, **figures)) + "\n")


def sitting(records: list[dict]) -> list[dict]:
    """The records of the newest sitting (one run of a benchmark: same `started`), in order;
    records without `started` (kept from before benchmarks wrote it) belong to none."""
    dated = [record for record in records if "started" in record]
    if not dated:
        return []
    started = dated[-1]["started"]
    return [record for record in dated if record["started"] == started]
