"""Loop: alternate training and evaluation phases, with reports, summaries and checkpoints."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf
from tensorboard.plugins.histogram import summary_v2 as histogram_summary
from tensorboard.plugins.scalar import summary_v2 as scalar_summary

from agents.tools import checkpoints
from agents.tools.reports import (
    Report,
    SummaryError,  # noqa: F401 (Loop's error, importable here)
    make_report,
    summary_error,
    to_python,
)
from agents.tools.success import success_rate


class _Phase(NamedTuple):
    name: str
    step_fn: Callable[[bool], tuple[Any, Any, dict]]
    steps: int
    report_every: int | None
    log_every: int | None
    checkpoint_every: int | None
    writer: Any


class Loop:
    """Run phases (e.g. train and eval) of simulation steps in turn, counting env steps.

    Each phase owns a step function `step_fn(reset)` returning `(done, score, metrics)`, as
    `tools.simulate` does; `reset` is True on the first call of each turn of the phase, so that
    e.g. evaluation starts fresh episodes. The function's results follow these rules:
    `done` and `score` have shape [B] (or [K, B] for a function that runs K simulation steps), and
    the number of env steps made by one call is their size. `metrics` may hold a `length` entry
    shaped like `done`: the episode lengths, as `tools.simulate_steps` returns them
    returns them. The global step (env steps over all phases) decides which phase runs: phases
    take turns for `steps` env steps each.

    Scores (and lengths) of finished episodes are averaged per phase. At `report_every` env steps
    of a phase, and at the end of each of its turns, `run` yields a `Report`; at `log_every` (and
    at a turn's end too, where reports come more often than turns), the mean score, the mean
    length (when given) and the metrics (scalars, or arrays as histograms) go to TensorBoard under
    `logdir/<phase>` (or `logdir`, see `phase_dirs`), tagged `<phase>/<name>` unless `tag` says
    otherwise; at `checkpoint_every`, the checkpoint is saved with a
    `tf.train.CheckpointManager` under `logdir/checkpoints`. A new
    Loop on the same logdir restores the latest readable checkpoint, and with it the global step
    (see `checkpoints.restore_latest`: found from the files, past corrupt ones, set aside).

    Summaries and checkpoints are numbered by `count`: the env steps of the phase named
    `count_phase` (e.g. only training steps, so that evaluation points line up with the training
    curve), or the global step when it is None; `counter` gives that count directly where the
    caller keeps it (e.g. the agent's env steps), as `run`'s `count_limit` needs.

    `save_lock` (a context manager, default none) is held while a checkpoint is written, so that
    e.g. a signal handler can wait for the write to complete.

    Args:
        logdir: Directory for summaries and checkpoints (None disables both).
        step: int64 variable counting env steps; must be part of `checkpoint` to survive restarts.
        checkpoint: A `tf.train.Checkpoint` of everything that should be saved.
        max_to_keep: Number of checkpoints kept on disk.
        count_phase: The phase whose env steps number summaries and checkpoints (default: all).
        tag: `tag(phase, name)` gives the summary tag of a metric, or None to skip it (default:
            `<phase>/<name>`).
        counter: Returns the env steps of `count_phase` so far (default: derived from the global
            step, which holds only while every turn of that phase ran in full).
        phase_dirs: Summaries of each phase under `logdir/<phase>` (TensorBoard lists each as a
            run); False: all phases' in `logdir` itself, one TensorBoard entry (their tags
            must differ, as the default `<phase>/<name>` do).
        success_score: An episode whose score exceeds this is a success: reports and summaries
            add the share of their episodes that were (`success_rate`). None: neither does.

    Raises:
        checkpoints.CheckpointError: There are checkpoints, but none can be read.
    """

    def __init__(
        self,
        logdir: str | None,
        step: tf.Variable | None = None,
        checkpoint: tf.train.Checkpoint | None = None,
        max_to_keep: int = 3,
        count_phase: str | None = None,
        tag: Callable[[str, str], str | None] | None = None,
        counter: Callable[[], int] | None = None,
        phase_dirs: bool = True,
        success_score: float | None = None,
    ) -> None:
        self._logdir = logdir
        self._success_score = success_score
        self._phase_dirs = phase_dirs
        self._writers: dict[str, Any] = {}  # Summary writers by directory (phases may share one).
        self._counter = counter
        self._count_phase = count_phase
        self._tag = tag or (lambda phase, name: f"{phase}/{name}")
        self._step = step if step is not None else tf.Variable(0, dtype=tf.int64, trainable=False)
        self._phases: list[_Phase] = []
        self._manager = None
        self.save_lock: contextlib.AbstractContextManager = contextlib.nullcontext()
        if logdir and checkpoint is not None:
            directory = os.path.join(logdir, "checkpoints")
            checkpoints.restore_latest(
                directory,
                lambda path: checkpoint.restore(path).assert_existing_objects_matched(),
                set_aside=True,
            )
            self._manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep)

    @property
    def step(self) -> int:
        """The global step: env steps made over all phases."""
        return int(self._step.numpy())

    @property
    def count(self) -> int:
        """The step users see: env steps of `count_phase` so far (the global step if None)."""
        if self._counter is not None:
            return int(self._counter())
        if self._count_phase is None or not self._phases:
            return self.step
        names = [phase.name for phase in self._phases]
        if self._count_phase not in names:
            raise ValueError(f"count_phase {self._count_phase!r} is none of the phases {names}.")
        epoch, offset = divmod(self.step, sum(phase.steps for phase in self._phases))
        made = epoch * self._phases[names.index(self._count_phase)].steps
        for phase in self._phases:
            if phase.name == self._count_phase:
                return made + min(max(offset, 0), phase.steps)
            offset -= phase.steps
        raise AssertionError("unreachable")

    @property
    def checkpoint_manager(self) -> tf.train.CheckpointManager | None:
        return self._manager

    def add_phase(
        self,
        name: str,
        step_fn: Callable[[bool], tuple[Any, Any, dict]],
        steps: int,
        report_every: int | None = None,
        log_every: int | None = None,
        checkpoint_every: int | None = None,
    ) -> None:
        """Add a phase that runs `step_fn` for `steps` env steps at its turn.

        Args:
            name: Name of the phase, also the summary subdirectory.
            step_fn: Callable taking `reset` and returning `(done, score, metrics)`, where metrics
                may hold the episode lengths as `length` (see the class docstring).
            steps: Env steps of one turn of this phase.
            report_every: Yield a report every this many env steps of the phase (default: once per
                turn).
            log_every: Write summaries every this many env steps of the phase.
            checkpoint_every: Save a checkpoint every this many env steps of the phase.

        Raises:
            SummaryError: The phase's summary writer cannot be made (e.g. a full disk); `run`
                raises it too when a write fails.
        """
        if steps <= 0:
            raise ValueError(f"Phase {name!r} needs steps > 0, got {steps}.")
        writer = None
        if self._logdir and log_every:
            directory = self._summary_dir(name)
            try:
                if directory not in self._writers:
                    self._writers[directory] = tf.summary.create_file_writer(directory)
            except (OSError, tf.errors.OpError) as error:
                raise summary_error(directory, error) from None
            writer = self._writers[directory]
        report_every = report_every or steps
        phase = _Phase(name, step_fn, steps, report_every, log_every, checkpoint_every, writer)
        self._phases.append(phase)

    def run(
        self,
        max_step: int | None = None,
        should_stop: Callable[[], bool] | None = None,
        count_limit: int | None = None,
    ) -> Iterator[Report]:
        """Run the phases until the global step reaches `max_step` (forever when None), or until
        `count` reaches `count_limit`.

        The turn of `count_phase` in which `count` reaches `count_limit` ends there: it reports
        and writes its summaries, the global step moves to where that turn would have ended (so
        the phases keep their places in the cycle when a later run raises the limit), and the
        other phases finish their turns of that cycle; then the run ends.

        Args:
            max_step: Global step at which to stop.
            should_stop: Called before each call of a step function; returning True ends the run
                early, between two calls, so that counters and checkpoints stay consistent.
            count_limit: The `count` at which the count phase ends for good (needs
                `count_phase`).

        Yields:
            A `Report` at each phase's report cadence.
        """
        if not self._phases:
            raise ValueError("Loop.run needs at least one phase: call add_phase first.")
        scores = {phase.name: ([], []) for phase in self._phases}  # (report, log) score lists.
        lengths = {phase.name: ([], []) for phase in self._phases}  # (report, log) lengths.
        if count_limit is not None and self._count_phase is None:
            raise ValueError("Loop.run's count_limit needs a count_phase.")
        previous = None
        while max_step is None or self.step < max_step:
            if should_stop is not None and should_stop():
                return
            phase, epoch, steps_in = self._current_phase(self.step)
            limited = count_limit is not None and phase.name == self._count_phase
            if limited and self.count >= count_limit:
                if steps_in == 0:
                    return  # The limit's cycle is complete.
                self._step.assign_add(phase.steps - steps_in)  # The cut turn's end.
                continue
            phase_step = epoch * phase.steps + steps_in
            done, score, metrics = phase.step_fn(phase is not previous)
            previous = phase
            done, score = np.asarray(done), np.asarray(score)
            metrics = dict(metrics)
            length = metrics.pop("length", None)
            made = done.size
            self._step.assign_add(made)
            # A turn of the count phase cut at the limit ends here: it logs and reports.
            cut = (
                count_limit is not None
                and phase.name == self._count_phase
                and steps_in + made < phase.steps
                and self.count >= count_limit
            )
            # A turn's end reports and logs too, so that each turn (e.g. before an evaluation)
            # ends on a report, whether or not `report_every` divides the phase.
            turn_end = steps_in + made >= phase.steps and phase.report_every < phase.steps
            _add_finished(scores[phase.name], lengths[phase.name], done, score, length)
            logs = cut or turn_end or _is_every(phase_step, made, phase.log_every)
            if logs and phase.writer:
                episodes = (scores[phase.name][1], lengths[phase.name][1])
                self._write_summaries(phase, episodes, metrics, self.count)
            if _is_every(phase_step, made, phase.checkpoint_every):
                self.save()
            if cut or turn_end or _is_every(phase_step, made, phase.report_every):
                yield self._report(
                    phase.name, scores[phase.name][0], lengths[phase.name][0], metrics
                )

    def save(self) -> str | None:
        """Save a checkpoint numbered by `count` (if checkpointing is configured).

        Raises:
            checkpoints.CheckpointError: The write failed (e.g. a full disk); the checkpoints
                written before stay as they were.
        """
        if self._manager is None:
            return None
        with self.save_lock:
            return save_checkpoint(self._manager, self.count)

    def _report(self, name: str, scores: list, lengths: list, metrics: dict) -> Report:
        """The phase's report of the episodes finished since its last one (then forgotten)."""
        report = make_report(name, self.step, scores, lengths, metrics, self._success_score)
        scores.clear()
        lengths.clear()
        return report

    def _current_phase(self, step: int) -> tuple[_Phase, int, int]:
        cycle = sum(phase.steps for phase in self._phases)
        epoch, offset = divmod(step, cycle)
        for phase in self._phases:
            if offset < phase.steps:
                return phase, epoch, offset
            offset -= phase.steps
        raise AssertionError("unreachable")

    def _write_summaries(self, phase: _Phase, episodes: tuple, metrics: dict, step: int) -> None:
        """Write the means of the (scores, lengths) lists of `episodes`, then empty them."""
        values = [
            (self._tag(phase.name, name), float(np.mean(scores)))
            for name, scores in zip(("mean_score", "mean_length"), episodes)
            if scores
        ]
        success = success_rate(episodes[0], self._success_score)
        if not np.isnan(success):
            values.append((self._tag(phase.name, "success_rate"), success))
        values += [(self._tag(phase.name, key), to_python(v)) for key, v in metrics.items()]
        write_values(phase.writer, values, step, self._summary_dir(phase.name))
        for scores in episodes:
            scores.clear()

    def _summary_dir(self, phase: str) -> str:
        return os.path.join(self._logdir, phase) if self._phase_dirs else self._logdir


def save_checkpoint(manager: tf.train.CheckpointManager, number: int) -> str:
    """Save `manager`'s checkpoint as `ckpt-<number>`; returns its path.

    Raises:
        checkpoints.CheckpointError: The write failed (e.g. a full disk), naming the path and
            the reason; the checkpoints written before stay as they were.
    """
    try:
        return manager.save(checkpoint_number=number)
    except (OSError, tf.errors.OpError) as error:
        path = os.path.join(manager.directory, f"ckpt-{number}")
        lines = str(error).strip().splitlines() or [type(error).__name__]
        reason = getattr(error, "strerror", None) or lines[0]
        raise checkpoints.CheckpointError(f"Cannot write checkpoint {path}: {reason}") from None


def write_values(
    writer: Any, values: list[tuple[str | None, Any]], step: int, directory: str
) -> bool:
    """Write `(tag, value)` pairs at `step` in one write and flush: floats as scalars, non-empty
    arrays as histograms; a None tag or another value is skipped.

    Returns:
        Whether anything was written.

    Raises:
        SummaryError: The write failed (e.g. a full disk), naming `directory`.
    """
    protos = [_summary_proto(tag, value) for tag, value in values if tag]
    protos = [proto for proto in protos if proto is not None]
    try:
        if protos:
            with writer.as_default(step=step):
                # One write of protos made in numpy: each tf.summary.histogram runs eager TF ops
                # (about 3 ms), each tf.summary.scalar one op (about 1 ms); ~20 per log.
                tf.summary.experimental.write_raw_pb(protos)
        writer.flush()
    except (OSError, tf.errors.OpError) as error:  # E.g. a full disk.
        raise summary_error(directory, error) from None
    return bool(protos)


def _summary_proto(tag: str, value: Any) -> bytes | None:
    """A serialized Summary of a float (scalar) or non-empty array (histogram), else None."""
    if isinstance(value, float):
        return scalar_summary.scalar_pb(tag, value).SerializeToString()
    if isinstance(value, np.ndarray) and value.size:
        return histogram_summary.histogram_pb(tag, value).SerializeToString()
    return None


def _add_finished(scores: tuple, lengths: tuple, done, score, length) -> None:
    """Append the returns (and lengths) of the episodes `done` marks to each pending list."""
    for pending in scores:
        pending.extend(score[done].tolist())
    if length is not None:
        for pending in lengths:
            pending.extend(np.asarray(length)[done].tolist())


def _is_every(phase_step: int, made: int, every: int | None) -> bool:
    """Whether the env steps [phase_step, phase_step + made) cross a multiple of `every`."""
    if not every:
        return False
    return (phase_step + made) // every > phase_step // every
