"""What a Trainer is given by its caller when the caller gives nothing: no stop requests, and
lines printed without a progress bar; and `warn`, which prints around any bar."""

from __future__ import annotations

import contextlib
import sys

from tqdm import tqdm


def warn(line: str) -> None:
    """Print `line` on stderr; a progress bar on the terminal is cleared first and redrawn."""
    tqdm.write(line, file=sys.stderr)
    sys.stderr.flush()


class NoGuard:
    """A guard without signals or watchdog (see `agents.training.run_guard.RunGuard`)."""

    signum: int | None = None

    def __init__(self) -> None:
        self.saving = contextlib.nullcontext()

    def watch(self, batches, timeout) -> None:
        del batches, timeout


class PlainProgress:
    """Progress without a bar: report lines are printed (see `TrainingProgress`)."""

    def stage(self, text: str) -> None:
        del text

    def restart_at(self, env_steps: int) -> None:
        del env_steps

    def advance(self, env_steps: int) -> None:
        del env_steps

    def update(self, report) -> None:
        del report

    def write(self, line: str) -> None:
        print(line, flush=True)
