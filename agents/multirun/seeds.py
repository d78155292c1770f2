"""Several seeds of one config: each seed a run in its own process, a few at a time.

`train_seeds` starts one spawned process per seed (at most `processes` at once, by default as
many as the machine has cores), each a normal run directory named with its seed. A child sends
its reports to this process through a queue (a callback), so that each run shows as one
progress line; a seed that fails is reported with its line and the others go on. A signal to
the process group (Ctrl-C) reaches every child, which saves and exports as a single run does;
SIGTERM to this process is passed on to the children. After a stop signal no seed starts: those
not started are reported so, and the summary's aggregate counts only the runs that finished.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import queue as queues
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents.config import budget
from agents.config.errors import UsageError
from agents.multirun import aggregates, quiet_run
from agents.training import TrainingError, run_setup
from agents.training.callbacks import Callback
from agents.training.reporting import success_suffix
from agents.training.tracking import WandbTracker
from agents.training.train_result import TrainResult

_POLL_S = 0.5


@dataclasses.dataclass(frozen=True)
class SeedOutcome:
    """How one seed's run ended: its `TrainResult`, or the first line of the error that ended it
    (the whole error goes to stderr)."""

    seed: int
    result: TrainResult | None
    error: str | None = None
    signum: int | None = None  # The signal that stopped the seeds before this one started.

    @property
    def ok(self) -> bool:
        """Whether the run trained to its end (or was stopped by a callback)."""
        return self.error is None and self.result is not None and not self.result.stopped


class _Forward(Callback):
    """Sends a child's reports to the parent:
    `("report", seed, phase, env_steps, score, success_rate)`."""

    def __init__(self, queue: Any, seed: int) -> None:
        self._queue, self._seed = queue, seed

    def on_start(self, run) -> None:
        self._queue.put(("start", self._seed, run.run_dir))

    def on_report(self, run, report) -> None:
        steps = int(report.metrics.get("env_steps", run.env_steps))
        message = (report.phase, steps, float(report.score), float(report.success_rate))
        self._queue.put(("report", self._seed, *message))


def _child(config, logdir, seed, overrides, name, queue, tracking) -> None:
    """One seed's run, in a spawned process; its outcome goes to `queue`."""
    try:  # The parent shows its progress.
        forward = [_Forward(queue, seed)]
        if tracking is not None:
            forward.append(WandbTracker(**tracking))
        result = quiet_run.train_quietly(config, logdir, seed, overrides, name, forward)
        queue.put(("done", seed, dataclasses.asdict(result)))
    except (UsageError, TrainingError) as error:
        queue.put(("error", seed, str(error)))
    except BaseException as error:  # noqa: BLE001 (any failure is this seed's, reported)
        queue.put(("error", seed, f"{type(error).__name__}: {error}"))


def train_seeds(
    config: str | Mapping[str, Any],
    seeds: Sequence[int],
    logdir: str = "logdir",
    overrides: Mapping[str, Any] | None = None,
    name: str | None = None,
    processes: int | None = None,
    say: Callable[[str], None] = print,
    tracking: Mapping[str, Any] | None = None,
) -> list[SeedOutcome]:
    """Train `config` once per seed, each in its own process; returns the outcomes in seed order.

    Args:
        config: A config name, a config.yaml path or a dict of keys.
        seeds: Distinct seeds.
        logdir: Parent directory of the run directories.
        overrides: Config values (as `agents.train`'s keyword arguments).
        name: A label in every run's directory name.
        processes: Runs at once (default: the machine's cores, at most one per seed).
        say: Where progress lines go.
        tracking: Options of `tracking.WandbTracker` to log every run to W&B, or None.

    Raises:
        UsageError: No seeds, repeated seeds, a bad `processes`, or a config that no seed could
            train (checked before any process starts).
    """
    seeds = [int(seed) for seed in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise UsageError(f"seeds must be distinct and at least one, got {seeds}.")
    if processes is None:
        processes = os.cpu_count() or 1
    elif processes < 1:  # 0 is no number of runs, not "all cores": that is None.
        raise UsageError(f"parallel (runs at once) must be at least 1, got {processes}.")
    planned, *_ = run_setup.planned_run(config, seeds[0], overrides, name)  # Checked once here.
    total = budget.train_budget(planned)
    context = multiprocessing.get_context("spawn")  # No TensorFlow state forked.
    queue = context.Queue()
    pending, running, outcomes = list(seeds), {}, {}
    at_once = min(processes, len(seeds))
    runs = "1 run" if at_once == 1 else f"{at_once} runs"
    say(f"Seeds {', '.join(map(str, seeds))}: {runs} at a time.")
    stop = _Stop(running)
    in_main = _in_main_thread()
    previous = {signum: signal.getsignal(signum) for signum in _STOPS}
    if in_main:
        for signum in _STOPS:
            signal.signal(signum, stop)
    try:
        while running or (pending and stop.signum is None):
            while pending and len(running) < processes and stop.signum is None:
                seed = pending.pop(0)
                child = context.Process(
                    target=_child,
                    args=(config, logdir, seed, dict(overrides or {}), name, queue, tracking),
                    daemon=False,
                )
                child.start()
                running[seed] = child
            _collect(queue, running, outcomes, total, say)
    finally:
        if in_main:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    for seed in pending:  # Stopped before their turn.
        outcomes[seed] = SeedOutcome(seed, None, NOT_STARTED, stop.signum)
        say(f"seed {seed}: {NOT_STARTED}")
    return [outcomes[seed] for seed in seeds]


_STOPS = (signal.SIGINT, signal.SIGTERM)
NOT_STARTED = "not started: stopped by a signal"


class _Stop:
    """The parent's handler of SIGINT and SIGTERM: no seed starts after one; SIGTERM is passed on
    to the running children (Ctrl-C reaches them from the terminal, with the whole group)."""

    def __init__(self, running: dict) -> None:
        self.signum: int | None = None
        self._running = running

    def __call__(self, signum: int, frame: Any) -> None:
        self.signum = self.signum or signum
        if signum == signal.SIGTERM:
            for child in self._running.values():
                _signal(child, signum)


def _collect(queue, running: dict, outcomes: dict, total: int, say) -> None:
    """Handle the children's messages for a moment; note children that died without one."""
    try:
        message = queue.get(timeout=_POLL_S)
    except queues.Empty:
        message = None
    if message is not None:
        kind, seed, *rest = message
        if kind == "start":
            say(f"seed {seed}: started {rest[0]}")
        elif kind == "report" and rest[0] == "eval":
            score = f"score {rest[2]:.2f}{success_suffix(rest[3])}"
            say(f"seed {seed}: eval at env step {rest[1]:>9} of {total}: {score}")
        elif kind == "done":
            outcomes[seed] = SeedOutcome(seed, TrainResult(**rest[0]))
            result = outcomes[seed].result
            eval_ = f"{result.eval_score:.2f}{success_suffix(result.eval_success_rate)}"
            say(f"seed {seed}: done, eval {eval_} ({result.run_dir})")
        elif kind == "error":
            first, _, more = rest[0].partition("\n")
            outcomes[seed] = SeedOutcome(seed, None, first)
            say(f"seed {seed}: failed: {first}")
            if more:  # E.g. an env's traceback: on stderr, as a single run prints it.
                print(f"seed {seed}: {rest[0]}", file=sys.stderr, flush=True)
    for seed, child in list(running.items()):
        if seed in outcomes:
            child.join()
            del running[seed]
        elif not child.is_alive() and queue.empty():
            child.join()
            outcomes[seed] = SeedOutcome(
                seed, None, f"its process exited with code {child.exitcode}"
            )
            say(f"seed {seed}: failed: {outcomes[seed].error}")
            del running[seed]


def _signal(child, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, TypeError):
        os.kill(child.pid, signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def summary_lines(outcomes: Sequence[SeedOutcome]) -> list[str]:
    """A table of the seeds' runs, then the mean and IQM of the final eval scores of the runs
    that trained to their end (not those a signal stopped), with 95% bootstrap confidence
    intervals."""
    lines = [f"{'seed':>6}  {'final eval':>10}  {'best eval':>10}  {'env steps':>9}  run"]
    finals = []
    for outcome in outcomes:
        result = outcome.result
        if outcome.signum is not None:
            lines.append(f"{outcome.seed:>6}  {outcome.error}")
            continue
        if outcome.error is not None or result is None:
            lines.append(f"{outcome.seed:>6}  failed: {outcome.error}")
            continue
        status = result.run_dir + (" (stopped by a signal)" if result.stopped else "")
        lines.append(
            f"{outcome.seed:>6}  {result.eval_score:>10.2f}  {result.best_eval_score:>10.2f}  "
            f"{result.env_steps:>9}  {status}"
        )
        if not result.stopped and result.eval_score == result.eval_score:  # Final, not NaN.
            finals.append(result.eval_score)
    if finals:
        summary = aggregates.summarize(finals)
        lines.append(
            f"final eval over {summary.runs} finished seeds: mean {summary.mean:.2f} "
            f"[{summary.mean_ci[0]:.2f}, {summary.mean_ci[1]:.2f}], IQM {summary.iqm:.2f} "
            f"[{summary.iqm_ci[0]:.2f}, {summary.iqm_ci[1]:.2f}] (95% bootstrap CIs), "
            f"std {summary.std:.2f}"
        )
    return lines
