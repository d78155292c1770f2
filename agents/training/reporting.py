"""The training loop as a Trainer runs it, fanning each report out to its consumers, and the
console's lines (`ConsoleLog`): a report, a long evaluation's progress, the summary."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import time
from collections.abc import Callable, Iterator

from agents.runtime import compile_cache
from agents.tools import mpi
from agents.training.callbacks import Callback, CallbackList, RunHandle
from agents.training.progress import write
from agents.training.train_result import TrainingError


@dataclasses.dataclass
class LoopOutcome:
    """How the loop ended.

    Attributes:
        signum: The guard's signal that stopped it, or None.
        write_error: A line naming the summaries that could not be written, or None.
        eval_score: Mean score of the last evaluation phase (nan if no episode finished).
        eval_success_rate: Share of that phase's episodes that succeeded (nan if none
            finished or the config sets no `success_score`).
        best: The best mean score of the evaluation phases (nan if none had an episode).
        best_step: The env step of that best evaluation (None if none).
        vanished: The run directory was moved or deleted while the loop ran (rank 0 sees it).
        started: `time.monotonic()` when the loop started.
        start_steps: The env steps made before it started (a resumed run's).
    """

    signum: int | None = None
    write_error: str | None = None
    eval_score: float = math.nan
    eval_success_rate: float = math.nan
    best: float = math.nan
    best_step: int | None = None
    vanished: bool = False
    started: float = dataclasses.field(default_factory=time.monotonic)
    start_steps: int = 0


def run_loop(run, world: mpi.World, calls: CallbackList, outcome: LoopOutcome) -> Iterator:
    """Train until the end, a stop request of a consumer (the guard's signal, a callback's
    stop, a failed write of a run file) or the run directory's disappearance; yields each
    report after every consumer in `calls` has taken it.

    A failing environment or a non-finite value ends training before the loop saves another
    checkpoint, so the latest checkpoint on disk is the last good one.

    Args:
        run: The `Run`.
        world: The MPI ranks; rank 0's consumers take the reports, and it yields them.
        calls: The run's consumers (`on_step` before each call, `on_report` for each report).
        outcome: Filled in as the loop goes (how it ended, the eval scores).

    Raises:
        TrainingError: An environment failed, a value was non-finite, a checkpoint could not be
            written, or (under MPI) the summaries could not be written.
    """
    place = _identity(run.run_dir) if world.is_root else None

    def should_stop() -> bool:  # Called between the loop's calls.
        calls.call("on_step")
        if place is not None and _identity(run.run_dir) != place:
            outcome.vanished = True  # A checkpoint now would start a second run there.
        return calls.stop_requested or outcome.vanished

    outcome.started, outcome.start_steps = time.monotonic(), run.env_steps
    with _named_errors(run, world, outcome):
        for report in run.loop(should_stop=should_stop):
            _add_rates(report.metrics, outcome, run.env_steps)
            if report.phase == "eval" and _count_eval(outcome, report):
                outcome.best_step = run.env_steps
            if world.is_root:
                calls.call("on_report", report)
                if calls.error is None:
                    yield report
    outcome.signum = calls.signum


@contextlib.contextmanager
def _named_errors(run, world: mpi.World, outcome: LoopOutcome) -> Iterator[None]:
    """The loop's errors as one line each: a `TrainingError`, or (a summary the loop could not
    write, in one process) `outcome.write_error`, which stops the loop."""
    from agents.tools.batch_env import BatchEnvError
    from agents.tools.checkpoints import CheckpointError
    from agents.tools.loop import SummaryError

    try:
        yield
    except SummaryError as error:  # As a metrics file that cannot be written.
        failure = f"{error}; stopped at env step {run.env_steps}"
        if world.size > 1:
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


class ConsoleLog(Callback):
    """The run's lines: each report's (see `report_line`), the run's own (starting, the end)
    and, in a long evaluation (an Atari episode can take 27,000 steps), after each `every`
    seconds of one, the episodes of rank 0's share finished so far.

    Args:
        write: Prints a line (default: on stdout above a progress bar, see `progress.write`).
        every: Seconds between two lines of one evaluation's progress.
    """

    def __init__(self, write: Callable[[str], None] = write, every: float = 60.0) -> None:
        self._write, self._every = write, every
        self._best = math.nan
        self._started = time.monotonic()
        self._next: float | None = None  # When the current evaluation says how it goes.

    def on_start(self, run: RunHandle) -> None:
        self._started = time.monotonic()

    def on_line(self, run: RunHandle, line: str) -> None:
        self._write(line)

    def on_report(self, run: RunHandle, report) -> None:
        new_best = False
        if report.phase == "eval":
            self._next = None  # The next call starts a new evaluation.
            score = float(report.score)
            new_best = not math.isnan(score) and not score <= self._best
            if new_best:
                self._best = score
        self._write(report_line(report, new_best, (run.config or {}).get("eval_policy")))

    def on_eval_call(self, run: RunHandle, finished: int, share: int) -> None:
        now = time.monotonic()
        if self._next is None:
            self._next = now + self._every
        if now < self._next:
            return
        self._next = now + self._every
        whose = " (rank 0's share)" if run.ranks > 1 else ""
        self._write(
            f" eval  env step {run.env_steps:>9}  playing: {finished} of {share} "
            f"episodes finished{whose}  {clock(now - self._started)}"
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


def _count_eval(outcome: LoopOutcome, report) -> bool:
    """Record an evaluation report's mean score and success rate; returns whether the score
    is a new best."""
    outcome.eval_score = score = float(report.score)
    outcome.eval_success_rate = float(report.success_rate)
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


def report_line(report, new_best: bool = False, eval_policy: str | None = None) -> str:
    """The line printed for a train or eval report; an eval line names `eval_policy` (the
    config's: "mode" or "sample") after its episodes where it is given.

    A train line gives the mean return of the training episodes that ended, the update's
    losses (`pi`: policy, `v`: value, `rnd`: predictor), entropy, KL, clip fraction and
    explained variance, the end-to-end env steps per second (evaluation and compiling included)
    beside the training calls' own rate, and the wall time. An eval line gives its episodes'
    mean, standard deviation, minimum and maximum, and whether the mean is a new best. Both
    give the share of successful episodes where the config sets `success_score`.
    """
    metrics = report.metrics
    score = "n/a" if math.isnan(report.score) else f"{report.score:9.2f}"
    line = f"{report.phase:>5}  env step {metrics.get('env_steps', 0):>9.0f}  "
    policy = f", {eval_policy}" if eval_policy and report.phase == "eval" else ""
    line += f"score {score} ({report.episodes:3d} episodes{policy})"
    if "score_std" in metrics:
        line += f" +/- {metrics['score_std']:.2f} [{metrics['score_min']:.2f}, "
        line += f"{metrics['score_max']:.2f}]"
    if not math.isnan(report.success_rate):
        line += f"  success {report.success_rate:.2f}"
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
        final += success_suffix(outcome.eval_success_rate)
        scores = f"Final eval {final}, best {outcome.best:.2f} (env step {outcome.best_step})"
    return f"{scores}; {made} env steps in {clock(elapsed)}{rate}."


def success_suffix(rate: float) -> str:
    """The suffix " (success 0.95)" of a score; "" where no success rate was measured."""
    return "" if math.isnan(rate) else f" (success {rate:.2f})"


def clock(seconds: float) -> str:
    """`h:mm:ss` of a duration."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
