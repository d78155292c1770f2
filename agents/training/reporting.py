"""The training loop as a Trainer runs it: reports printed, drawn and appended to metrics.jsonl."""

from __future__ import annotations

import dataclasses
import math

from agents.tools import mpi
from agents.training.errors import TrainingError
from agents.training.hooks import warn
from agents.training.metrics_log import MetricsLog


@dataclasses.dataclass
class LoopOutcome:
    """How the loop ended.

    Attributes:
        signum: The guard's signal that stopped it, or None.
        write_error: A line naming the metrics file that could not be written, or None.
        eval_score: Mean score of the last evaluation phase (nan if no episode finished).
        best: The best mean score of the evaluation phases (nan if none had an episode).
    """

    signum: int | None = None
    write_error: str | None = None
    eval_score: float = math.nan
    best: float = math.nan


def run_loop(run, world: mpi.World, guard, progress, count, callbacks, outcome: LoopOutcome):
    """Train until the end, a stop request, a callback's stop or a failed write of the metrics
    file; yields each report after its consumers (console, progress bar, metrics.jsonl,
    callbacks) have taken it.

    A failing environment or a non-finite value ends training before the loop saves another
    checkpoint, so the latest checkpoint on disk is the last good one.

    Args:
        run: The `Run`.
        world: The MPI ranks; rank 0 prints, writes, calls the callbacks and yields.
        guard: Its `signum` stops the loop after the current step.
        progress: Gets every report (`update`) and line (`write`).
        count: Called with the env steps before every step (what a watchdog tells).
        callbacks: The run's `CallbackList`; a stop it requests ends the loop after the step.
        outcome: Filled in as the loop goes (how it ended, the eval scores).

    Raises:
        TrainingError: An environment failed, a value was non-finite, a checkpoint could not be
            written, or (under MPI) the metrics file could not be written.
    """
    from agents.tools.batch_env import BatchEnvError
    from agents.tools.checkpoints import CheckpointError

    def should_stop() -> bool:  # Called between the loop's calls.
        count(run.env_steps)
        progress.advance(run.env_steps)
        return guard.signum is not None or callbacks.stop_requested

    try:
        metrics = MetricsLog(run.run_dir if world.is_root else None)
    except OSError as error:
        raise TrainingError(f"Cannot open {error.filename!r}: {error.strerror}.") from None
    if metrics.repaired:
        warn(f"warning: removed a partial last line ({metrics.repaired} bytes) of {metrics.path}")
    with metrics:
        try:
            for report in run.loop(should_stop=should_stop):
                new_best = False
                if report.phase == "eval":
                    new_best = _count_eval(outcome, float(report.score))
                if not world.is_root:
                    continue
                progress.write(report_line(report, new_best))
                progress.update(report)
                try:
                    metrics.append(report)
                except OSError as error:
                    failure = f"Cannot write {metrics.path!r} ({error.strerror}); stopped"
                    if world.size > 1:  # The other ranks would wait for this one.
                        raise TrainingError(f"{failure} at env step {run.env_steps}.") from None
                    outcome.write_error = f"{failure} at env step {run.env_steps}"
                    break
                callbacks.call("on_report", report)
                yield report
        except (BatchEnvError, FloatingPointError, CheckpointError) as error:
            raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error
    outcome.signum = guard.signum


def _count_eval(outcome: LoopOutcome, score: float) -> bool:
    """Record an evaluation's mean score; returns whether it is a new best."""
    outcome.eval_score = score
    if math.isnan(score) or score <= outcome.best:
        return False
    outcome.best = score  # nan compares False above, so the first score is a best.
    return True


def report_line(report, new_best: bool = False) -> str:
    """The line printed for a train or eval report: an evaluation's spread over its episodes
    (std, then min and max) and whether its mean is a new best."""
    metrics = report.metrics
    score = "n/a" if math.isnan(report.score) else f"{report.score:9.2f}"
    line = f"{report.phase:>5}  env step {metrics.get('env_steps', 0):>9.0f}  "
    line += f"score {score} ({report.episodes:3d} episodes)"
    if "score_std" in metrics:
        line += f" +/- {metrics['score_std']:.2f} [{metrics['score_min']:.2f}, "
        line += f"{metrics['score_max']:.2f}]"
    if "env_steps_per_second" in metrics:
        line += f"  {metrics['env_steps_per_second']:7.0f} steps/s"
    if new_best:
        line += "  new best"
    return line
