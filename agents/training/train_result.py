"""TrainResult: how a training run ended, returned from memory."""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """How a training run ended; usable as a path (`os.fspath(result)` is the run directory).

    Attributes:
        run_dir: The run directory (config.yaml, summaries, checkpoints, policy/, metrics.jsonl);
            None when a stop during start-up removed the new run's directory.
        env_steps: Training env steps made, over all ranks (None when stopped during start-up).
        eval_score: Mean score of the last evaluation phase (nan if no episode finished).
        signum: The signal that stopped training early (a checkpoint was saved and the policy
            exported), or None.
        stopped_by: Why a callback stopped training early (saved and exported as after a
            signal), e.g. "eval score -180.20 reached stop_at_score=-200", or None.
        best_eval_score: The best mean score of the run's evaluation phases (nan if none had
            a finished episode).
    """

    run_dir: str | None
    env_steps: int | None
    eval_score: float
    signum: int | None = None
    stopped_by: str | None = None
    best_eval_score: float = math.nan

    @property
    def stopped(self) -> bool:
        """Whether a signal ended training before `train_steps` (a callback's stop is not one)."""
        return self.signum is not None

    def __fspath__(self) -> str:
        return self.run_dir or ""

    def __str__(self) -> str:
        return self.run_dir or ""
