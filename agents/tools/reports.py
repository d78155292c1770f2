"""Report: what a training loop yields at each report, and how one is made from a phase's
finished episodes; `SummaryError`, a report that could not be written (numpy only: the
Trainer's loop imports it before TensorFlow loads)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from agents.tools.success import success_rate


class SummaryError(Exception):
    """TensorBoard summaries could not be written (e.g. a full disk); the message names them."""


class Report(NamedTuple):
    """What `Loop.run` yields at each report."""

    phase: str
    step: int  # Global step after the call that triggered the report.
    score: float  # Mean score of the episodes finished since the last report (nan if none).
    episodes: int  # Number of those episodes.
    metrics: dict[str, float]  # Latest metrics returned by the phase's step function.
    length: float = float("nan")  # Mean length of those episodes (nan if none or not given).
    # The share of those episodes whose score exceeds the loop's `success_score` (nan if none
    # finished or no success score is set).
    success_rate: float = float("nan")


def make_report(
    phase: str,
    step: int,
    scores: list[float],
    lengths: list[int],
    metrics: dict,
    success_score: float | None = None,
) -> Report:
    """The `Report` of a phase's episodes finished since its last report (`scores`, and
    `lengths` where known) with its latest `metrics` (numpy scalars become floats; arrays,
    histograms, stay); `success_score` as `Loop`'s."""
    return Report(
        phase,
        step,
        float(np.mean(scores)) if scores else float("nan"),
        len(scores),
        {key: to_python(value) for key, value in metrics.items()},
        float(np.mean(lengths)) if lengths else float("nan"),
        success_rate(scores, success_score),
    )


def to_python(value: Any) -> Any:
    """A numpy scalar (or 0-d array) as a float; anything else as it is."""
    array = np.asarray(value)
    if array.ndim == 0 and array.dtype.kind in "fiub":
        return float(array)
    return value


def summary_error(directory: str, error: Exception) -> SummaryError:
    """The SummaryError of a failed write to `directory`, naming TensorFlow's reason."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    reason = getattr(error, "strerror", None) or lines[0].rsplit("; ", 1)[-1]
    return SummaryError(f"Cannot write summaries to {directory!r} ({reason})")
