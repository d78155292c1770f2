"""The metrics file of a run: one JSON line per report, for reading results with pandas.

`<run dir>/metrics.jsonl` gets a line per train and eval report, e.g.
`{"phase": "eval", "env_steps": 20480, "score": -180.2, "episodes": 16, ...}`; a resumed run
appends to it. `pandas.read_json(path, lines=True)` reads it as a table.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

METRICS_FILE = "metrics.jsonl"


class MetricsLog:
    """Appends reports to `<run_dir>/metrics.jsonl` (a no-op when `run_dir` is None).

    Args:
        run_dir: The run directory, or None (e.g. on MPI ranks other than 0).
    """

    def __init__(self, run_dir: str | None) -> None:
        # Open for the whole run; MetricsLog itself is the context manager that closes it.
        path = os.path.join(run_dir, METRICS_FILE) if run_dir else None
        self._file = open(path, "a") if path else None  # noqa: SIM115

    def append(self, report) -> None:
        """Write one `tools.loop.Report` as a line: phase, env steps, score, episodes, scalars."""
        if self._file is None:
            return
        record: dict[str, Any] = {
            "phase": report.phase,
            "env_steps": int(report.metrics.get("env_steps", report.step)),
            "score": None if math.isnan(report.score) else report.score,
            "episodes": report.episodes,
        }
        for key, value in report.metrics.items():
            if isinstance(value, float) and key not in record and math.isfinite(value):
                record[key] = value
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> MetricsLog:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def read_metrics(run_dir: str) -> list[dict[str, Any]]:
    """The records of a run's metrics file, oldest first (empty if it has none)."""
    path = os.path.join(run_dir, METRICS_FILE)
    if not os.path.isfile(path):
        return []
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]
