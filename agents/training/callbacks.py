"""Callbacks: code of the user's that a run calls as it goes, and that can stop it.

```python
from agents import train
from agents.training.callbacks import Callback

class PrintEval(Callback):
    def on_report(self, run, report):
        if report.phase == "eval":
            print(report.metrics["env_steps"], report.score)

train("pendulum", callbacks=[PrintEval()], stop_at_score=-300.0)
```

Everything that listens to a run is a `Callback` in one list: the console lines, the progress
bar, metrics.jsonl, TensorBoard, the run guard (signals and watchdog: it answers "stop?") and
the user's own. A run calls `on_start` once it is built, `on_step` between two compiled calls,
`on_line` for each line it says, `on_report` for every train and eval report (after
metrics.jsonl holds it), `on_checkpoint` after each checkpoint it saves, `on_end` with its
`TrainResult`, and `on_close` whatever the outcome. Each is given the run's `Trainer` (its
`run_dir`, `config`, `env_steps`, `ranks`, `latest_checkpoint`, `export_policy`). A callback
stops the run with `run.stop(reason)`: the run ends after the current step, saves a checkpoint
and exports its policy, as after Ctrl-C, and the result says why (`TrainResult.stopped_by`).
A callback that raises stops the run with one line naming it; the checkpoint is saved. Under
MPI the callbacks run on rank 0 (those marked `every_rank` on every rank), and a stop there
stops every rank.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from typing import TYPE_CHECKING, Any

from agents.training.train_result import TrainingError

if TYPE_CHECKING:  # The Trainer calls its callbacks: this module is one of its imports.
    from agents.training.trainer import Trainer


class Callback:
    """Base class of everything that listens to a run: every method does nothing; override
    those you need.

    Attributes:
        signum: A signal that asks the run to stop after the current step, as the run guard
            sets it; None (the run's result then carries it as `TrainResult.signum`).
        every_rank: Called on every MPI rank, not only on rank 0 (the run guard: each rank
            gets the signals).
    """

    signum: int | None = None
    every_rank: bool = False

    def on_start(self, run: Trainer) -> None:
        """The run is built (environments, agent, restored checkpoint) and about to train."""

    def on_step(self, run: Trainer) -> None:
        """Between two compiled calls of the loop (`run.env_steps` is current)."""

    def on_line(self, run: Trainer, line: str) -> None:
        """A line the run says: starting, its budget, a long evaluation's progress, the end."""

    def on_report(self, run: Trainer, report: Any) -> None:
        """A train or eval report (`agents.tools.loop.Report`): `phase`, `score` (mean episode
        return, nan without finished episodes), `episodes`, and `metrics` (`env_steps`, the one
        step counter, among them)."""

    def on_eval_call(self, run: Trainer, finished: int, share: int) -> None:
        """A compiled call of an evaluation returned: `finished` of this rank's `share` of its
        episodes are done."""

    def saving(self) -> contextlib.AbstractContextManager:
        """Held while a checkpoint is written (the run guard waits for it before it ends the
        process on a second signal)."""
        return contextlib.nullcontext()

    def starting(self) -> contextlib.AbstractContextManager:
        """Around the run's start-up, before `on_start` (the run guard lets a stop signal
        interrupt it there)."""
        return contextlib.nullcontext()

    def on_checkpoint(self, run: Trainer, path: str) -> None:
        """A checkpoint was written at `path`."""

    def on_end(self, run: Trainer, result: Any) -> None:
        """Training ended (its `TrainResult`); the checkpoint is saved and the policy exported."""

    def on_close(self, run: Trainer) -> None:
        """The run is over, whatever the outcome: release what the callback holds."""


class StopOnScore(Callback):
    """Stop once an evaluation's mean score reaches `threshold` (config key `stop_at_score`)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = float(threshold)

    def on_report(self, run: Trainer, report: Any) -> None:
        if report.phase == "eval" and report.score >= self.threshold:
            run.stop(f"eval score {report.score:.2f} reached stop_at_score={self.threshold:g}")


class StopOnNoImprovement(Callback):
    """Stop after `patience` evaluations in a row without a new best mean score (config key
    `patience`). Evaluations in which no episode finished do not count."""

    def __init__(self, patience: int) -> None:
        self.patience = int(patience)
        self.best = -math.inf
        self.since_best = 0

    def on_report(self, run: Trainer, report: Any) -> None:
        if report.phase != "eval" or math.isnan(report.score):
            return
        if report.score > self.best:
            self.best, self.since_best = report.score, 0
            return
        self.since_best += 1
        if self.since_best >= self.patience:
            run.stop(
                f"no new best eval score in {self.since_best} evaluations (best {self.best:.2f}, "
                f"patience={self.patience})"
            )


BEST_POLICY_DIR = "best_policy"  # Beside policy/ in the run directory.
BEST_SCORE_FILE = "score.json"  # In best_policy/: {"score": ..., "env_steps": ...}.


class KeepBestPolicy(Callback):
    """Export the policy of each new best evaluation to `<run_dir>/best_policy/`, with its score
    and env steps in `best_policy/score.json` (config key `keep_best_policy`).

    A resumed run starts from the best score its directory records.
    """

    def __init__(self) -> None:
        self.best = -math.inf

    def on_start(self, run: Trainer) -> None:
        recorded = read_best_score(run.run_dir)
        if recorded is not None:
            self.best = recorded["score"]

    def on_report(self, run: Trainer, report: Any) -> None:
        if report.phase != "eval" or math.isnan(report.score) or report.score <= self.best:
            return
        self.best = report.score
        path = run.export_policy(os.path.join(run.run_dir, BEST_POLICY_DIR))
        record = {"score": float(report.score), "env_steps": int(report.metrics["env_steps"])}
        with open(os.path.join(path, BEST_SCORE_FILE), "w", encoding="utf-8") as file:
            json.dump(record, file)


def read_best_score(run_dir: str) -> dict[str, float] | None:
    """The score and env steps of a run's `best_policy/`, or None where it has none."""
    path = os.path.join(run_dir, BEST_POLICY_DIR, BEST_SCORE_FILE)
    try:
        with open(path, encoding="utf-8") as file:
            record = json.load(file)
        return {"score": float(record["score"]), "env_steps": int(record["env_steps"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def from_config(config: Any) -> list[Callback]:
    """The callbacks a config asks for with `stop_at_score`, `patience` and `keep_best_policy`."""
    found: list[Callback] = []
    if config.get("keep_best_policy"):
        found.append(KeepBestPolicy())
    if config.get("stop_at_score") is not None:
        found.append(StopOnScore(config["stop_at_score"]))
    if config.get("patience") is not None:
        found.append(StopOnNoImprovement(config["patience"]))
    return found


class CallbackError(Exception):
    """A callback raised; the message names it, the method and the error."""


class CallbackList:
    """The consumers of one run, called in order; the first that raises stops the run.

    Args:
        callbacks: The callbacks.
        trainer: The run, as every callback is given it.
    """

    def __init__(self, callbacks: list[Callback], trainer: Trainer) -> None:
        self.callbacks = list(callbacks)
        self.trainer = trainer
        self.error: Exception | None = None

    @property
    def signum(self) -> int | None:
        """The first signal a callback (the run guard) was given, or None."""
        return next((c.signum for c in self.callbacks if c.signum is not None), None)

    @property
    def stop_requested(self) -> bool:
        stopped = self.trainer.stopped_by is not None or self.signum is not None
        return stopped or self.error is not None

    def call(self, method: str, *args: Any, always: bool = False) -> None:
        """Call `method` of every callback; after one raised, none (unless `always`: lines and
        `on_close` reach every callback whatever happened)."""
        for callback in self.callbacks:
            if self.error is not None and not always:
                return
            try:
                getattr(callback, method)(self.trainer, *args)
            except TrainingError as error:  # A consumer of the run's own (a file it writes).
                self.error = self.error or error
            except Exception as error:
                reason = (str(error).strip().splitlines() or [""])[0]
                name = type(callback).__name__
                self.error = self.error or CallbackError(
                    f"Callback {name}.{method} raised {type(error).__name__}: {reason}"
                )

    def say(self, line: str) -> None:
        """`on_line` for every callback."""
        self.call("on_line", line, always=True)

    def saved(self) -> None:
        """A checkpoint was just written: `on_checkpoint` with its path."""
        self.call("on_checkpoint", self.trainer.latest_checkpoint)

    def saving(self) -> contextlib.AbstractContextManager:
        """A reusable context manager around each checkpoint write: every callback's `saving`
        held while it is written, then `on_checkpoint` with its path."""
        return _Saving(self)

    def starting(self) -> contextlib.ExitStack:
        """Every callback's `starting`, entered (a context manager to leave)."""
        stack = contextlib.ExitStack()
        with stack:
            for callback in self.callbacks:
                stack.enter_context(callback.starting())
            return stack.pop_all()


class _Saving:
    def __init__(self, calls: CallbackList) -> None:
        self._calls, self._stack = calls, contextlib.ExitStack()

    def __enter__(self) -> None:
        for callback in self._calls.callbacks:
            self._stack.enter_context(callback.saving())

    def __exit__(self, *exc_info: Any) -> None:
        self._stack.close()
        if exc_info[0] is None:
            self._calls.saved()
