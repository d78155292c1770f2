"""The training loop as a Trainer runs it: reports printed, drawn, appended to metrics.jsonl and
written to TensorBoard."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time

from agents.runtime import compile_cache
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
        best_step: The env step of that best evaluation (None if none).
        vanished: The run directory was moved or deleted while the loop ran (rank 0 sees it).
        started: `time.monotonic()` when the loop started.
        start_steps: The env steps made before it started (a resumed run's).
    """

    signum: int | None = None
    write_error: str | None = None
    eval_score: float = math.nan
    best: float = math.nan
    best_step: int | None = None
    vanished: bool = False
    started: float = dataclasses.field(default_factory=time.monotonic)
    start_steps: int = 0


def run_loop(run, world: mpi.World, guard, progress, count, callbacks, outcome: LoopOutcome):
    """Train until the end, a stop request, a callback's stop or a failed write of the metrics
    file or of TensorBoard's events; yields each report after its consumers (console, progress
    bar, metrics.jsonl, TensorBoard, callbacks) have taken it.

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
    from agents.tools.loop import SummaryError
    from agents.training.tensorboard_log import TensorBoardLog

    place = _identity(run.run_dir) if world.is_root else None

    def should_stop() -> bool:  # Called between the loop's calls.
        count(run.env_steps)
        progress.advance(run.env_steps)
        if place is not None and _identity(run.run_dir) != place:
            outcome.vanished = True  # A checkpoint now would start a second run there.
        return guard.signum is not None or callbacks.stop_requested or outcome.vanished

    try:
        metrics = MetricsLog(run.run_dir if world.is_root else None)
    except OSError as error:
        raise TrainingError(f"Cannot open {error.filename!r}: {error.strerror}.") from None
    if metrics.repaired:
        warn(f"warning: removed a partial last line ({metrics.repaired} bytes) of {metrics.path}")
    if metrics.damaged:
        warn(
            f"warning: moved {metrics.damaged} damaged line(s) of {metrics.path} to "
            f"{metrics.path}.damaged"
        )
    outcome.started, outcome.start_steps = time.monotonic(), run.env_steps
    if world.is_root:
        run.on_eval_call = EvalProgress(progress.write, run, outcome, world.size)
    tensorboard = None
    with metrics:
        try:
            tensorboard = TensorBoardLog(run.run_dir if world.is_root else None)
            for report in run.loop(should_stop=should_stop):
                _add_rates(report.metrics, outcome, run.env_steps)
                new_best = False
                if report.phase == "eval":
                    if world.is_root:
                        run.on_eval_call.restart()
                    new_best = _count_eval(outcome, float(report.score))
                    if new_best:
                        outcome.best_step = run.env_steps
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
                tensorboard.write(report, run.env_steps)
                callbacks.call("on_report", report)
                yield report
        except SummaryError as error:  # As a metrics file that cannot be written.
            failure = f"{error}; stopped at env step {run.env_steps}"
            if world.size > 1:
                raise TrainingError(f"{failure}.") from None
            outcome.write_error = failure
        except (BatchEnvError, FloatingPointError, CheckpointError) as error:
            raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error
        except Exception as error:
            cache = compile_cache.unreadable(error)
            if cache is not None:
                raise TrainingError(
                    f"Stopped at env step {run.env_steps}: {cache}.", "resume"
                ) from error
            uncompiled = _uncompilable(error, run.config)
            if uncompiled is None:
                raise
            raise TrainingError(f"Stopped at env step {run.env_steps}: {uncompiled}") from error
        finally:
            if tensorboard is not None:
                tensorboard.close()
    outcome.signum = guard.signum


class EvalProgress:
    """Lines that say how a long evaluation goes (an Atari episode can take 27,000 steps): after
    each `every` seconds of one, the episodes of rank 0's share finished so far.

    Called after each compiled call of an evaluation (`Run.on_eval_call`); `restart` after its
    report.
    """

    def __init__(self, write, run, outcome: LoopOutcome, ranks: int, every: float = 60.0):
        self._write, self._run, self._outcome, self._ranks = write, run, outcome, ranks
        self._every = every
        self._next: float | None = None

    def restart(self) -> None:
        """The next call starts a new evaluation."""
        self._next = None

    def __call__(self, finished: int, share: int) -> None:
        now = time.monotonic()
        if self._next is None:
            self._next = now + self._every
        if now < self._next:
            return
        self._next = now + self._every
        whose = " (rank 0's share)" if self._ranks > 1 else ""
        self._write(
            f" eval  env step {self._run.env_steps:>9}  playing: {finished} of {share} "
            f"episodes finished{whose}  {clock(now - self._outcome.started)}"
        )


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


def _identity(path: str) -> tuple[int, int] | None:
    """The device and inode of `path`, or None where it is gone."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _count_eval(outcome: LoopOutcome, score: float) -> bool:
    """Record an evaluation's mean score; returns whether it is a new best."""
    outcome.eval_score = score
    if math.isnan(score) or score <= outcome.best:
        return False
    outcome.best = score  # nan compares False above, so the first score is a best.
    return True


def _add_rates(metrics: dict, outcome: LoopOutcome, env_steps: int) -> None:
    """The report's wall time and end-to-end rate (evaluation and compiling included)."""
    metrics["wall_time"] = elapsed = time.monotonic() - outcome.started
    if "env_steps_per_second" in metrics and elapsed > 0:
        metrics["end_to_end_steps_per_second"] = (env_steps - outcome.start_steps) / elapsed


# The update's figures on a train line: (metric, label, format).
_UPDATE_FIGURES = (
    ("policy_loss", "pi", "+.4f"),
    ("value_loss", "v", ".4g"),
    ("predictor_loss", "rnd", ".4g"),
    ("entropy", "ent", ".3f"),
    ("approx_kl", "kl", ".1e"),
    ("clipfrac", "clip", ".3f"),
    ("explained_variance", "ev", "+.2f"),
)


def report_line(report, new_best: bool = False) -> str:
    """The line printed for a train or eval report.

    A train line gives the mean return of the training episodes that ended, the update's
    losses (`pi`: policy, `v`: value, `rnd`: predictor), entropy, KL, clip fraction and
    explained variance, the end-to-end env steps per second (evaluation and compiling included)
    beside the training calls' own rate, and the wall time. An eval line gives its episodes'
    mean, standard deviation, minimum and maximum, and whether the mean is a new best.
    """
    metrics = report.metrics
    score = "n/a" if math.isnan(report.score) else f"{report.score:9.2f}"
    line = f"{report.phase:>5}  env step {metrics.get('env_steps', 0):>9.0f}  "
    line += f"score {score} ({report.episodes:3d} episodes)"
    if "score_std" in metrics:
        line += f" +/- {metrics['score_std']:.2f} [{metrics['score_min']:.2f}, "
        line += f"{metrics['score_max']:.2f}]"
    figures = [
        f"{label} {metrics[key]:{spec}}"
        for key, label, spec in _UPDATE_FIGURES
        if isinstance(metrics.get(key), float)
    ]
    if figures:
        line += "  " + "  ".join(figures)
    if "end_to_end_steps_per_second" in metrics:
        line += f"  {metrics['end_to_end_steps_per_second']:7.0f} steps/s"
        line += f" (calls {metrics['env_steps_per_second']:.0f})"
    if metrics.get("interrupted"):
        line += "  interrupted by the stop"
    if "wall_time" in metrics:
        line += f"  {clock(metrics['wall_time'])}"
    if new_best:
        line += "  new best"
    return line


def summary_line(outcome: LoopOutcome, env_steps: int) -> str:
    """The line after the last report: final and best evaluation, env steps, wall time."""
    elapsed = time.monotonic() - outcome.started
    made = env_steps - outcome.start_steps
    rate = f", {made / elapsed:.0f} env steps/s" if elapsed > 0 and made else ""
    scores = "No evaluation scored"
    if not math.isnan(outcome.best):
        final = "n/a" if math.isnan(outcome.eval_score) else f"{outcome.eval_score:.2f}"
        scores = f"Final eval {final}, best {outcome.best:.2f} (env step {outcome.best_step})"
    return f"{scores}; {made} env steps in {clock(elapsed)}{rate}."


def clock(seconds: float) -> str:
    """`h:mm:ss` of a duration."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
