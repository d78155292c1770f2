"""The metrics file of a run: one JSON line per report, for reading results with pandas.

`<run dir>/metrics.jsonl` gets a line per train and eval report, e.g.
`{"phase": "eval", "env_steps": 20480, "score": -180.2, "episodes": 16, ...}`; a resumed run
appends to it. `pandas.read_json(path, lines=True)` reads it as a table.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from typing import Any

from agents.training.callbacks import Callback, RunHandle
from agents.training.train_result import TrainingError

METRICS_FILE = "metrics.jsonl"


class MetricsLog(Callback):
    """Appends reports to `<run_dir>/metrics.jsonl` (a no-op when `run_dir` is None); as a
    consumer of the run's reports, a failed write stops the run (saved) with one line.

    Every record is written whole or not at all: a write that fails part-way (a full disk) is
    cut back to the file's previous end before the error is raised, and a partial last line
    left by a process that died while writing is removed when the file is opened again (a
    resumed run), so the file always parses as JSON lines. A complete line that is no JSON record
    (garbled, NUL-filled, bad UTF-8: a damaged disk or a stray write) is moved to
    `metrics.jsonl.damaged` when the file is opened, so nothing read before is lost.

    Args:
        run_dir: The run directory, or None (e.g. on MPI ranks other than 0).

    Raises:
        OSError: The file cannot be opened; `append` raises when a record cannot be written.
    """

    def __init__(self, run_dir: str | None) -> None:
        # Open for the whole run; MetricsLog itself is the context manager that closes it.
        self.path = os.path.join(run_dir, METRICS_FILE) if run_dir else None
        self.repaired = 0  # Bytes of a partial last line removed on opening.
        self.damaged = 0  # Damaged lines moved aside on opening.
        self._fd = None
        if self.path is not None:
            self.damaged = _move_damaged_lines(self.path)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            self.repaired = _drop_partial_line(self._fd)

    def append(self, report) -> None:
        """Write one `tools.loop.Report` as a line: phase, env steps, score, episodes, scalars."""
        if self._fd is None:
            return
        record: dict[str, Any] = {
            "phase": report.phase,
            "env_steps": int(report.metrics.get("env_steps", report.step)),
            "score": None if math.isnan(report.score) else report.score,
            "episodes": report.episodes,
        }
        if not math.isnan(report.success_rate):
            record["success_rate"] = report.success_rate
        for key, value in report.metrics.items():
            if isinstance(value, float) and key not in record and math.isfinite(value):
                record[key] = value
        data = (json.dumps(record) + "\n").encode()
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError:
            with contextlib.suppress(OSError):  # E.g. a device that cannot be truncated.
                os.ftruncate(self._fd, end)  # No half record for a reader or a resumed run.
            raise

    def on_report(self, run: RunHandle, report) -> None:
        try:
            self.append(report)
        except OSError as error:
            raise TrainingError(
                f"Cannot write {self.path!r} ({error.strerror}); stopped at env step "
                f"{run.env_steps}"
            ) from None

    def on_close(self, run: RunHandle) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> MetricsLog:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _drop_partial_line(fd: int) -> int:
    """Cut the file after its last newline; returns the number of bytes removed."""
    size = os.lseek(fd, 0, os.SEEK_END)
    keep = size
    while keep > 0:
        start = max(0, keep - 4096)
        os.lseek(fd, start, os.SEEK_SET)
        block = os.read(fd, keep - start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        keep = start
    if keep < size:
        os.ftruncate(fd, keep)
    return size - keep


def read_metrics(run_dir: str) -> list[dict[str, Any]]:
    """The records of a run's metrics file, oldest first (empty if it has none); a partial last
    line and damaged lines are left out."""
    path = os.path.join(run_dir, METRICS_FILE)
    if not os.path.isfile(path):
        return []
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")[:-1]  # The last piece is partial (or empty).
    return [record for record in map(_record, lines) if record is not None]


def _record(line: bytes) -> dict[str, Any] | None:
    """The record of a complete line, or None for a blank or damaged one."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _move_damaged_lines(path: str) -> int:
    """Move the complete lines of `path` that hold no record to `<path>.damaged` (appended);
    returns their number. The file is rewritten beside and swapped in only if there are any."""
    if not os.path.isfile(path):
        return 0
    with open(path, "rb") as handle:
        pieces = handle.read().split(b"\n")
    complete, partial = pieces[:-1], pieces[-1]
    damaged = [line for line in complete if line.strip() and _record(line) is None]
    if not damaged:
        return 0
    with open(f"{path}.damaged", "ab") as handle:
        handle.write(b"\n".join(damaged) + b"\n")
    kept = [line for line in complete if not line.strip() or _record(line) is not None]
    with open(f"{path}.partial", "wb") as handle:
        handle.write(b"".join(line + b"\n" for line in kept) + partial)
    os.replace(f"{path}.partial", path)
    return len(damaged)
