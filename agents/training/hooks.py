"""What a Trainer is given by its caller when the caller gives nothing: no stop requests, and
lines printed without a progress bar."""

from __future__ import annotations

import contextlib


class NoGuard:
    """A guard without signals or watchdog (see `agents.scripts.run_guard.RunGuard`)."""

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
