"""The training loop, top to bottom: a training call, its report, a checkpoint, an evaluation at
each phase's end, the callbacks, and the stop.

A run alternates phases: `train_every` env steps of training calls (in whole calls), then one
evaluation of `eval_episodes` episodes. The run's checkpointed `step` counts both (env steps
trained plus episodes evaluated), so a resumed run knows where in the cycle it stopped: a
checkpoint saved at a phase's last call is followed by that phase's evaluation. The budget,
`train_steps` in whole calls, ends the phase that reaches it; `step` moves to that phase's end
(a later run with a larger budget keeps its cycle), its evaluation follows, and the loop ends.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable, Iterator

from agents.config import budget
from agents.tools.reports import Report, make_report
from agents.training.callbacks import CallbackList
from agents.training.train_result import named_errors


@dataclasses.dataclass
class LoopOutcome:
    """How the loop ended: `signum` (the guard's signal) or None; `write_error`, a line naming
    summaries that could not be written, or None; the last evaluation's mean score and success
    rate (nan where none finished); the best mean score and its env step; `vanished`, the run
    directory was moved or deleted; when the loop `started` (`time.monotonic()`) and the env
    steps made before it (`start_steps`, a resumed run's)."""

    signum: int | None = None
    write_error: str | None = None
    eval_score: float = math.nan
    eval_success_rate: float = math.nan
    best: float = math.nan
    best_step: int | None = None
    vanished: bool = False
    started: float = dataclasses.field(default_factory=time.monotonic)
    start_steps: int = 0


def train(run, calls: CallbackList, outcome: LoopOutcome) -> Iterator[Report]:
    """The Trainer's loop: `phases` with every callback of `calls` told each step (`on_step`,
    whose stop ends the loop between two calls) and each report (`on_report`, rank 0), then
    yielded. The run directory's disappearance stops it too; errors become one line each
    (`named_errors`), and `outcome` says how it ended."""
    world = run.world
    place = _identity(run.run_dir) if world.is_root else None

    def should_stop() -> bool:
        calls.call("on_step")
        if place is not None and _identity(run.run_dir) != place:
            outcome.vanished = True  # A checkpoint now would start a second run there.
        return calls.stop_requested or outcome.vanished

    outcome.started, outcome.start_steps = time.monotonic(), run.env_steps
    with named_errors(run, outcome):
        for report in phases(run, should_stop):
            metrics = report.metrics  # End to end: evaluations and compiling included.
            metrics["wall_time"] = elapsed = time.monotonic() - outcome.started
            if "env_steps_per_second" in metrics and elapsed > 0:
                made = run.env_steps - outcome.start_steps
                metrics["end_to_end_steps_per_second"] = made / elapsed
            if report.phase == "eval":
                _count_eval(outcome, report, run.env_steps)
            if world.is_root:
                calls.call("on_report", report)
                if calls.error is None:
                    yield report
    outcome.signum = calls.signum


def phases(run, should_stop: Callable[[], bool] | None = None) -> Iterator[Report]:
    """Alternate training phases and evaluations until the budget; yield each report.

    A train report comes every `log_every` env steps (in whole calls) and at each phase's end,
    with the training episodes finished since the last one; a checkpoint every
    `checkpoint_every`; an eval report after each evaluation. Under MPI every rank runs this
    in lockstep: calls gather all ranks' episodes, and a stop on any rank stops all of them.

    Args:
        run: The built `Run`.
        should_stop: Asked before each call; True ends the loop there (an evaluation under
            way ends after its current compiled call, and scores nothing).
    """
    config, world, step = run.config, run.world, run.step
    call = budget.call_steps(config, world.size)
    phase = budget.round_up(config.train_every, call)
    report_every = budget.report_steps(config, world.size)
    checkpoint_every = budget.round_up(config.checkpoint_every, call)
    limit = budget.train_budget(config, world.size)
    local_stop = should_stop  # This rank's: it ends an evaluation early.
    if should_stop is not None and world.size > 1:
        should_stop = lambda: world.any(local_stop())  # noqa: E731
    scores, lengths = [], []  # The training episodes finished since the last train report.
    with run.python_errors():
        while should_stop is None or not should_stop():
            cycle, offset = divmod(int(step.numpy()), phase + config.eval_episodes)
            if offset >= phase:  # The phase's evaluation: one item of `step` per episode.
                done, score, metrics = run.eval_phase(local_stop)
                step.assign_add(done.size)
                length = metrics.pop("length")
                yield make_report(
                    "eval", int(step.numpy()), score[done].tolist(), length[done].tolist(),
                    metrics, config.success_score,
                )  # fmt: skip
                continue
            if run.env_steps >= limit:  # The budget: the phase that reached it ends here.
                if offset == 0:
                    return
                step.assign_add(phase - offset)
                continue
            done, score, metrics = run.train_call_metrics()
            step.assign_add(done.size)
            scores += score[done].tolist()
            lengths += metrics.pop("length")[done].tolist()
            trained = cycle * phase + offset  # Env steps of training phases before this call.
            cut = offset + done.size < phase and run.env_steps >= limit
            phase_end = offset + done.size >= phase
            if _crosses(trained, done.size, checkpoint_every):
                run.save()
            if cut or phase_end or _crosses(trained, done.size, report_every):
                yield make_report(
                    "train", int(step.numpy()), scores, lengths, metrics, config.success_score
                )
                scores, lengths = [], []


def _crosses(start: int, made: int, every: int) -> bool:
    """Whether the env steps [start, start + made) cross a multiple of `every`."""
    return (start + made) // every > start // every


def _count_eval(outcome: LoopOutcome, report: Report, env_steps: int) -> None:
    """Record an evaluation's mean score and success rate, and its score if a new best."""
    outcome.eval_score = score = float(report.score)
    outcome.eval_success_rate = float(report.success_rate)
    if not math.isnan(score) and not score <= outcome.best:  # nan: the first score is a best.
        outcome.best, outcome.best_step = score, env_steps


def _identity(path: str) -> tuple[int, int] | None:
    """The device and inode of `path`, or None where it is gone."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino
