"""Progress bars of the scripts: tqdm on stderr, silent where stderr is no terminal."""

from __future__ import annotations

import math
import sys
from typing import IO

from tqdm import tqdm


def bar(
    total: int,
    unit: str,
    desc: str | None = None,
    initial: int = 0,
    enabled: bool = True,
    file: IO[str] | None = None,
) -> tqdm:
    """A progress bar on `file` (default stderr), drawn only when `enabled` and on a terminal.

    Args:
        total: The count at completion.
        unit: Name of one counted thing, e.g. "step" (shown as "step/s").
        desc: Text before the bar.
        initial: The count so far, e.g. of a resumed run.
        enabled: False keeps the bar silent anyway (e.g. on MPI ranks other than 0).
        file: Where the bar is drawn.
    """
    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        unit_scale=True,
        dynamic_ncols=True,
        disable=None if enabled else True,  # None: silent when `file` is not a terminal.
        file=file if file is not None else sys.stderr,
    )


def write(line: str) -> None:
    """Print `line` on stdout, clearing a progress bar on the terminal first and redrawing it."""
    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


class TrainingProgress:
    """The progress bar of a training run, advanced by the loop's reports.

    Shows training env steps out of `total`, env steps per second, the time left and the latest
    mean train and eval scores. Use it as a context manager, so that the bar is closed on errors.

    Args:
        total: Training env steps of the run.
        initial: Training env steps made before (a resumed run).
        enabled: False keeps it silent (MPI ranks other than 0).
        file: Where the bar is drawn (default stderr).
    """

    def __init__(
        self, total: int, initial: int = 0, enabled: bool = True, file: IO[str] | None = None
    ) -> None:
        initial = min(initial, total)
        self._bar = bar(total, "step", "env steps", initial, enabled, file)
        self._scores = {"train": "n/a", "eval": "n/a"}  # Latest mean score of each phase.
        self._bar.set_postfix(self._scores)

    def update(self, report) -> None:
        """Advance to a `tools.loop.Report`: train reports move the bar, all update the scores."""
        if report.phase == "train":
            steps = min(int(report.metrics.get("env_steps", self._bar.n)), self._bar.total)
            self._bar.update(max(0, steps - self._bar.n))
        if not math.isnan(report.score):
            self._scores[report.phase] = f"{report.score:.1f}"
        self._bar.set_postfix(self._scores)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> TrainingProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
