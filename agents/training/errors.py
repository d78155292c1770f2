"""The errors of a training run, apart from the bad input that `UsageError` names."""

from __future__ import annotations

from agents.config.errors import UsageError


class TrainingError(Exception):
    """An environment failed, training met a non-finite value, or a file could not be written;
    the message says which and where (the latest checkpoint on disk is a good one).

    Attributes:
        next_step: What continues the run: "resume" (the checkpoint is saved), "write results"
            (training is finished and saved, its results are not written), or None.
    """

    def __init__(self, message: str, next_step: str | None = None) -> None:
        super().__init__(message)
        self.next_step = next_step


class FinishedRunError(UsageError):
    """A resumed run has trained its `train_steps` already; a larger one continues it.

    Attributes:
        run_dir: The run.
        env_steps: The env steps it trained.
        train_steps: Its `train_steps`.
    """

    def __init__(self, run_dir: str, env_steps: int, train_steps: int) -> None:
        self.run_dir, self.env_steps, self.train_steps = run_dir, env_steps, train_steps
        super().__init__(self.message("--set train_steps=N"))

    def message(self, how: str) -> str:
        """The line, with `how` a larger train_steps is given (e.g. `--set train_steps=N`)."""
        return (
            f"Run {self.run_dir!r} is finished: it trained {self.env_steps} env steps of "
            f"train_steps={self.train_steps}. Continue it with {how} (N > {self.env_steps})."
        )
