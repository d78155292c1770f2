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


# tqdm's default bar, with the rate of the report lines (training calls) instead of its own.
_TRAINING_FORMAT = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"
)


class TrainingProgress:
    """The progress bar of a training run.

    Says what it waits for ("starting" while TensorFlow loads and the envs and agent are built,
    "compiling" until the first training call returns), then shows training env steps out of
    `total`, advanced after every training call, the time left, the env steps per second of the
    training calls (the rate the report lines print) and the latest mean train and eval scores.
    Use it as a context manager, so that the bar is closed on errors.

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
        self._bar = bar(total, "step", "starting", initial, enabled, file)
        self._bar.bar_format = _TRAINING_FORMAT
        self._postfix = {"steps/s": "n/a", "train": "n/a", "eval": "n/a"}
        self._bar.set_postfix(self._postfix)
        self._started = False

    def stage(self, text: str) -> None:
        """Say what the run waits for, e.g. "compiling"."""
        self._bar.set_description_str(text)

    def restart_at(self, env_steps: int) -> None:
        """Start the count at the env steps of a restored run (before any training call)."""
        self._bar.n = self._bar.last_print_n = min(env_steps, self._bar.total)
        self._bar.refresh()

    def advance(self, env_steps: int) -> None:
        """Move the bar to `env_steps` (called after each training call)."""
        steps = min(int(env_steps), self._bar.total)
        if not self._started and steps > self._bar.n:
            self._started = True
            self._bar.set_description_str("env steps")
        self._bar.update(max(0, steps - self._bar.n))

    def update(self, report) -> None:
        """Take a `tools.loop.Report`: train reports move the bar and set the rate; all, scores."""
        if report.phase == "train":
            self.advance(int(report.metrics.get("env_steps", self._bar.n)))
            rate = report.metrics.get("env_steps_per_second")
            if rate is not None:
                self._postfix["steps/s"] = f"{rate:,.0f}"
        if not math.isnan(report.score):
            self._postfix[report.phase] = f"{report.score:.1f}"
        self._bar.set_postfix(self._postfix)

    def write(self, line: str) -> None:
        """Print `line` on stdout above the bar (see `write`)."""
        write(line)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> TrainingProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
