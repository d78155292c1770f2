"""How a training run ends: its `TrainResult`, returned from memory, or the errors that stop it
(apart from the bad input that `UsageError` names)."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
from collections.abc import Iterator

from agents.config.errors import UsageError
from agents.runtime import compile_cache
from agents.tools.batch_env import BatchEnvError
from agents.tools.checkpoints import CheckpointError
from agents.tools.reports import SummaryError


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
        eval_success_rate: The share of the last evaluation phase's episodes that succeeded
            (nan if none finished or the config sets no `success_score`).
    """

    run_dir: str | None
    env_steps: int | None
    eval_score: float
    signum: int | None = None
    stopped_by: str | None = None
    best_eval_score: float = math.nan
    eval_success_rate: float = math.nan

    @property
    def stopped(self) -> bool:
        """Whether a signal ended training before `train_steps` (a callback's stop is not one)."""
        return self.signum is not None

    def __fspath__(self) -> str:
        return self.run_dir or ""

    def __str__(self) -> str:
        return self.run_dir or ""


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

    def with_next_step(self, how: str) -> str:
        """The line with what continues the run, `how` (a command, or a Python call)."""
        if self.next_step == "resume":
            return f"{self} Resume with: {how}"
        if self.next_step == "write results":
            return f"{self} Write the results again with: {how}"
        return str(self)


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


@contextlib.contextmanager
def named_errors(run, outcome) -> Iterator[None]:
    """The training loop's errors as one line each: a `TrainingError`, or (a summary the loop
    could not write, in one process) `outcome.write_error` (a `loop.LoopOutcome`), which stops
    the loop."""
    try:
        yield
    except SummaryError as error:  # As a metrics file that cannot be written.
        failure = f"{error}; stopped at env step {run.env_steps}"
        if run.world.size > 1:
            raise TrainingError(f"{failure}.") from None
        outcome.write_error = failure
    except (BatchEnvError, FloatingPointError, CheckpointError) as error:
        raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error
    except Exception as error:
        cache = compile_cache.failure(error)
        if cache is not None:
            raise TrainingError(
                f"Stopped at env step {run.env_steps}: {cache}.", "resume"
            ) from error
        uncompiled = _uncompilable(error, run.config)
        if uncompiled is None:
            raise
        raise TrainingError(f"Stopped at env step {run.env_steps}: {uncompiled}") from error


def _uncompilable(error: BaseException, config) -> str | None:
    """A line for XLA's refusal of ops in a native run's compiled call, which are the env's
    (the agent's ops all compile); None for another error."""
    message = str(error)
    refused = "Detected unsupported operations when trying to compile" in message
    if not config.native_env or not refused:
        return None
    ops = sorted(set(re.findall(r"(\w+) \(No registered '", message)))
    named = f" ({', '.join(ops)})" if ops else ""
    return (
        f"Native env {config.env} does not compile with XLA: ops{named} have no XLA kernel "
        "(tf.py_function, tf.print and string ops have none); write its step and observe in "
        "ops XLA compiles."
    )
