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

A run calls `on_start` once it is built, `on_report` for every train and eval report (the same
reports the console line, metrics.jsonl and the progress bar get), `on_checkpoint` after each
checkpoint it saves, and `on_end` with its `TrainResult`. A callback stops the run with
`run.stop(reason)`: the run ends after the current step, saves a checkpoint and exports its policy,
as after Ctrl-C, and the result says why (`TrainResult.stopped_by`). A callback that raises stops
the run with one line naming it; the checkpoint is saved. Under MPI the callbacks run on rank 0,
and a stop there stops every rank.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any


class RunHandle:
    """What a callback may see of, and do to, the run that calls it.

    Args:
        run_dir: The run directory.
        config: The run's config (read-only).
        export: `export(path)` writes the current policy as a SavedModel; None: not exportable.
        env_steps: Returns the training env steps so far (all ranks).

    Attributes:
        run_dir: The run directory.
        config: The run's config.
        stopped_by: The reason given to `stop`, or None.
    """

    def __init__(
        self, run_dir: str, config: Any, export: Any = None, env_steps: Any = lambda: 0
    ) -> None:
        self.run_dir = run_dir
        self.config = config
        self.stopped_by: str | None = None
        self._export = export
        self._env_steps = env_steps

    @property
    def env_steps(self) -> int:
        """Training env steps so far, over all ranks."""
        return self._env_steps()

    def stop(self, reason: str) -> None:
        """End training after the current step (saved and exported as after Ctrl-C)."""
        if self.stopped_by is None:
            self.stopped_by = reason

    def export_policy(self, path: str) -> str:
        """Export the current policy as a SavedModel at `path` (written whole, or not at all)."""
        if self._export is None:
            raise RuntimeError("This run handle has no policy to export.")
        return self._export(path)


class Callback:
    """Base class of callbacks: every method does nothing; override those you need."""

    def on_start(self, run: RunHandle) -> None:
        """The run is built (environments, agent, restored checkpoint) and about to train."""

    def on_report(self, run: RunHandle, report: Any) -> None:
        """A train or eval report (`agents.tools.loop.Report`): `phase`, `score` (mean episode
        return, nan without finished episodes), `episodes`, and `metrics` (`env_steps` among
        them)."""

    def on_checkpoint(self, run: RunHandle, path: str) -> None:
        """A checkpoint was written at `path`."""

    def on_end(self, run: RunHandle, result: Any) -> None:
        """Training ended (its `TrainResult`); the checkpoint is saved and the policy exported."""


class StopOnScore(Callback):
    """Stop once an evaluation's mean score reaches `threshold` (config key `stop_at_score`)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = float(threshold)

    def on_report(self, run: RunHandle, report: Any) -> None:
        if report.phase == "eval" and report.score >= self.threshold:
            run.stop(f"eval score {report.score:.2f} reached stop_at_score={self.threshold:g}")


class StopOnNoImprovement(Callback):
    """Stop after `patience` evaluations in a row without a new best mean score (config key
    `patience`). Evaluations in which no episode finished do not count."""

    def __init__(self, patience: int) -> None:
        self.patience = int(patience)
        self.best = -math.inf
        self.since_best = 0

    def on_report(self, run: RunHandle, report: Any) -> None:
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

    def on_start(self, run: RunHandle) -> None:
        recorded = read_best_score(run.run_dir)
        if recorded is not None:
            self.best = recorded["score"]

    def on_report(self, run: RunHandle, report: Any) -> None:
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
    """The callbacks of one run, called in order; the first that raises stops the run.

    Args:
        callbacks: The callbacks.
        handle: The run as the callbacks see it.
        latest_checkpoint: Returns the path of the checkpoint saved last (for `on_checkpoint`).
    """

    def __init__(
        self, callbacks: list[Callback], handle: RunHandle, latest_checkpoint: Any = lambda: None
    ) -> None:
        self.callbacks = list(callbacks)
        self.handle = handle
        self.error: CallbackError | None = None
        self._latest_checkpoint = latest_checkpoint

    def saved(self) -> None:
        """A checkpoint was just written: `on_checkpoint` with its path."""
        if self.callbacks:
            self.call("on_checkpoint", self._latest_checkpoint())

    @property
    def stop_requested(self) -> bool:
        return self.error is not None or self.handle.stopped_by is not None

    def call(self, method: str, *args: Any) -> None:
        """Call `method` of every callback (none after one raised)."""
        for callback in self.callbacks:
            if self.error is not None:
                return
            try:
                getattr(callback, method)(self.handle, *args)
            except Exception as error:
                reason = (str(error).strip().splitlines() or [""])[0]
                name = type(callback).__name__
                self.error = CallbackError(
                    f"Callback {name}.{method} raised {type(error).__name__}: {reason}"
                )


class AfterSave:
    """A reusable context manager around each checkpoint write: `lock` held while it is written
    (see `RunGuard.saving`), then `after()` called once it is written."""

    def __init__(self, lock: Any, after: Any) -> None:
        self._lock, self._after = lock, after

    def __enter__(self) -> None:
        self._lock.__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        self._lock.__exit__(*exc_info)
        if exc_info[0] is None:
            self._after()
