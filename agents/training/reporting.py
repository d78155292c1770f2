"""The console's lines (`ConsoleLog`): each report's, a long evaluation's progress, and the
summary at the end."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from agents.training.callbacks import Callback
from agents.training.progress import write

if TYPE_CHECKING:  # The Trainer's callback: the Trainer imports this module.
    from agents.training.trainer import Trainer


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

    def on_start(self, run: Trainer) -> None:
        self._started = time.monotonic()

    def on_line(self, run: Trainer, line: str) -> None:
        self._write(line)

    def on_report(self, run: Trainer, report) -> None:
        new_best = False
        if report.phase == "eval":
            self._next = None  # The next call starts a new evaluation.
            score = float(report.score)
            new_best = not math.isnan(score) and not score <= self._best
            if new_best:
                self._best = score
        self._write(report_line(report, new_best, (run.config or {}).get("eval_policy")))

    def on_eval_call(self, run: Trainer, finished: int, share: int) -> None:
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


def summary_line(outcome, env_steps: int) -> str:
    """The line after the last report: final and best evaluation, env steps, wall time (of a
    `loop.LoopOutcome`)."""
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
