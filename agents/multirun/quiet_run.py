"""A run trained with its console lines swallowed: for runs that another process or a loop
reports on (seeds, tuning trials)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence
from typing import Any

from agents.config.named import ConfigSource
from agents.training.callbacks import Callback
from agents.training.run_guard import process_shell
from agents.training.train_result import TrainResult
from agents.training.trainer import Trainer


def train_quietly(
    config: str | ConfigSource | Mapping[str, Any],
    logdir: str,
    seed: int | None,
    overrides: Mapping[str, Any] | None,
    name: str | None,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train a new run as `agents.train(verbose=0)` does: signals stop it after saving, and
    nothing is printed (warnings and errors aside).

    Raises:
        UsageError: A bad config, key, value or name.
        TrainingError: The run failed (the latest checkpoint is kept).
    """
    with contextlib.redirect_stdout(io.StringIO()):
        trainer = Trainer(config, logdir, seed=seed, overrides=overrides, name=name)
        try:
            with process_shell(trainer.budget, host=True, bar=False) as listeners:
                return trainer.train(listeners + list(callbacks))
        finally:
            trainer.close()
