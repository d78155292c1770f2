"""The metrics file of a run: one JSON line per report, for reading results with pandas.

`<run dir>/metrics.jsonl` gets a line per train and eval report, e.g.
`{"phase": "eval", "env_steps": 20480, "score": -180.2, "episodes": 16, "policy": "mode", ...}`
(an evaluation's `policy`: the config's `eval_policy`, the mode or a sample); a resumed run
appends to it. `pandas.read_json(path, lines=True)` reads it as a table.

A run resumed from a checkpoint older than its last records (killed with SIGKILL, or a damaged
newest checkpoint passed over) trains those env steps again: the records past the checkpoint's
step move to `metrics.jsonl.superseded` (and a record at that step which the resumed run makes
again, an evaluation the checkpoint was saved before, when it does), so the file holds one
record per report, its env steps never go back, and nothing is lost. Its `wall_time` goes on
from the last record kept: the training time of the run across its processes, so curves
against wall time do not go back either.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from typing import TYPE_CHECKING, Any

from agents.training.callbacks import Callback
from agents.training.train_result import TrainingError

if TYPE_CHECKING:  # The Trainer's callback: the Trainer imports this module.
    from agents.training.trainer import Trainer

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
        resumed_at: The env step of the checkpoint a resumed run starts from: records past it
            are moved to `metrics.jsonl.superseded` (see the module). None for a new run.

    Raises:
        OSError: The file cannot be opened; `append` raises when a record cannot be written.
    """

    def __init__(self, run_dir: str | None, resumed_at: int | None = None) -> None:
        # Open for the whole run; MetricsLog itself is the context manager that closes it.
        self.path = os.path.join(run_dir, METRICS_FILE) if run_dir else None
        self.repaired = 0  # Bytes of a partial last line removed on opening.
        self.damaged = 0  # Damaged lines moved aside on opening.
        self.superseded = 0  # Records past a resumed run's checkpoint moved aside on opening.
        self._wall_time = 0.0  # Added to the reports' wall time: that of the records kept.
        self._fd = None
        # A resumed run's step and the phases recorded at it, which it may make again.
        self._repeatable: tuple[int, set[str]] = (0, set())
        if self.path is not None:
            self.damaged = _move_damaged_lines(self.path)
            if resumed_at is not None:
                self.superseded, self._wall_time = _supersede(self.path, resumed_at)
                self._repeatable = (resumed_at, _phases_at(self.path, resumed_at))
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            self.repaired = _drop_partial_line(self._fd)

    def append(self, report, eval_policy: str | None = None) -> None:
        """Write one `tools.loop.Report` as a line: phase, env steps, score, episodes, scalars;
        an eval record also names `eval_policy` ("mode" or "sample") as `policy`, if given."""
        if self._fd is None:
            return
        record: dict[str, Any] = {
            "phase": report.phase,
            "env_steps": int(report.metrics.get("env_steps", report.step)),
            "score": None if math.isnan(report.score) else report.score,
            "episodes": report.episodes,
        }
        if eval_policy and report.phase == "eval":
            record["policy"] = eval_policy
        if not math.isnan(report.success_rate):
            record["success_rate"] = report.success_rate
        for key, value in report.metrics.items():
            if isinstance(value, float) and key not in record and math.isfinite(value):
                record[key] = value
        if "wall_time" in record:
            record["wall_time"] += self._wall_time
        self._supersede_repeat(record)
        data = (json.dumps(record) + "\n").encode()
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError:
            with contextlib.suppress(OSError):  # E.g. a device that cannot be truncated.
                os.ftruncate(self._fd, end)  # No half record for a reader or a resumed run.
            raise

    def _supersede_repeat(self, record: dict[str, Any]) -> None:
        """Move aside the record that `record` makes again (see the module)."""
        step, phases = self._repeatable
        if record["env_steps"] > step:
            phases.clear()
        if record["env_steps"] != step or record["phase"] not in phases:
            return
        phases.discard(record["phase"])
        os.close(self._fd)
        self._fd = None
        moved, _ = _supersede(self.path, step, record["phase"])
        self.superseded += moved
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)

    def on_report(self, run: Trainer, report) -> None:
        try:
            self.append(report, (run.config or {}).get("eval_policy"))
        except OSError as error:
            raise TrainingError(
                f"Cannot write {self.path!r} ({error.strerror}); stopped at env step "
                f"{run.env_steps}"
            ) from None

    def on_close(self, run: Trainer) -> None:
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


def _supersede(path: str, env_steps: int, phase: str | None = None) -> tuple[int, float]:
    """Move the records of `path` past `env_steps` (and those of `phase` at it) to
    `<path>.superseded` (appended); returns their number and the largest wall time of the
    records kept (0.0 if none says one). A partial last line stays for `_drop_partial_line`."""
    if not os.path.isfile(path):
        return 0, 0.0
    with open(path, "rb") as handle:
        pieces = handle.read().split(b"\n")
    complete, partial = pieces[:-1], pieces[-1]
    records = [_record(line) for line in complete]
    past = [_is_past(record, env_steps, phase) for record in records]
    kept = [record for record, later in zip(records, past) if record and not later]
    wall_time = max((r["wall_time"] for r in kept if _is_number(r.get("wall_time"))), default=0.0)
    if not any(past):
        return 0, float(wall_time)
    with open(f"{path}.superseded", "ab") as handle:
        handle.write(b"".join(line + b"\n" for line, later in zip(complete, past) if later))
    with open(f"{path}.partial", "wb") as handle:
        handle.write(b"".join(line + b"\n" for line, later in zip(complete, past) if not later))
        handle.write(partial)
    os.replace(f"{path}.partial", path)
    return sum(past), float(wall_time)


def _is_past(record: dict[str, Any] | None, env_steps: int, phase: str | None) -> bool:
    if not record or not _is_number(record.get("env_steps")):
        return False
    if record["env_steps"] == env_steps:
        return phase is not None and record.get("phase") == phase
    return record["env_steps"] > env_steps


def _phases_at(path: str, env_steps: int) -> set[str]:
    """The phases of the records of `path` at `env_steps`."""
    if not os.path.isfile(path):
        return set()
    with open(path, "rb") as handle:
        records = [_record(line) for line in handle.read().split(b"\n")[:-1]]
    return {r.get("phase") for r in records if r and r.get("env_steps") == env_steps}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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
