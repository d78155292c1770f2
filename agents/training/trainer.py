"""Trainer: one training run, owned by the library; the command line and `agents.train` use it.

```python
from agents import Trainer

trainer = Trainer("pendulum", logdir="logdir", seed=1, overrides={"train_steps": 20_000})
result = trainer.train()  # TrainResult(run_dir, env_steps, eval_score, signum)
```
"""

from __future__ import annotations

import contextlib
import math
import shutil
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agents.config import budget, files, named
from agents.config.errors import UsageError
from agents.ppo import compilation
from agents.runtime import tf_loading
from agents.tools import mpi
from agents.tools.batch_env import BatchEnvError
from agents.tools.checkpoints import CheckpointError
from agents.tools.reports import Report, SummaryError
from agents.training import callbacks as callbacks_module
from agents.training import loop, metrics_log, reporting, results, run_dirs, run_setup
from agents.training.callbacks import Callback
from agents.training.progress import warn
from agents.training.run_guard import StartUpStopped
from agents.training.train_result import FinishedRunError, TrainingError, TrainResult


class Trainer:
    """A training run: creates or resumes its directory (locked while it is owned), builds the
    environments and agent, trains and evaluates, checkpoints, exports the policy and draws the
    learning curve, and returns a `TrainResult` from memory.

    The config is checked when the Trainer is made, in plain Python: a bad value is a
    `UsageError` naming it before TensorFlow loads, and no run directory is left behind. Under
    MPI every rank makes a Trainer: rank 0 chooses the run and shares it, all ranks train in
    lockstep, rank 0 writes the files and prints.

    Args:
        config: A config name (`agents/scripts/configs.py`), the path of a config.yaml, or a
            dict of config keys (keys it lacks take their defaults). None with `resume`.
        logdir: Parent directory of the new run's directory.
        seed: Seed of networks, action sampling and envs (default: the one a config.yaml or
            the resumed run records, else 0).
        resume: A run to resume from its latest checkpoint instead of starting a new one: its
            directory, or its timestamp or directory name in `logdir`.
        overrides: Config keys to set, as values (numpy scalars too), e.g.
            `{"learning_rate": 1e-3}`; a resumed run takes those it may change.
        world: The MPI ranks (default: one process).
        name: A label for the new run's directory, `<timestamp>-<config>[-<env>]-<name>-s<seed>`
            (letters, digits and `._=+-`).

    Raises:
        UsageError: A bad config, key, value, seed or run (one line naming it), or the run is
            in use by another process.
    """

    def __init__(
        self,
        config: str | named.ConfigSource | Mapping[str, Any] | None = "pendulum",
        logdir: str = "logdir",
        *,
        seed: int | None = None,
        resume: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        world: mpi.World | None = None,
        name: str | None = None,
    ) -> None:
        self.world = world or mpi.World()
        setup, error, self._lock = None, None, None
        if self.world.is_root:
            try:
                setup = self._prepare(config, logdir, seed, resume, overrides, name)
                self._lock = _lock(setup)
            except UsageError as exc:
                error = exc
        self.world.agree(error)
        setup = self.world.bcast(setup)
        self.config, self.run_dir, self.name = setup.config, setup.run_dir, setup.name
        self.resumed, self.seed = setup.resumed, setup.seed
        self.started = False  # Whether training began (the run directory holds a run).
        # Training env steps so far: a new run's 0, a resumed run's once it is built; updated
        # before each training call and each report (any thread reads it).
        self.env_steps: int | None = None if self.resumed else 0
        self._notes: list[str] = []  # Lines said after the start line, e.g. records moved.
        self.saved = False  # Whether the final checkpoint is written.
        self.result: TrainResult | None = None  # Set when training ends.
        self._used = False  # A Trainer trains once: `close` releases the run's lock.
        self.stopped_by: str | None = None  # Why a callback stopped the run (see `stop`).
        self._run = None  # The built Run, while it trains.

    @property
    def budget(self) -> int:
        """The env steps this run trains in all: `train_steps` in whole training calls."""
        return budget.train_budget(self.config, self.world.size)

    def changes(self) -> str:
        """The config's values that differ from its named config's, as `key=value (was v)`
        phrases; empty when it is the named config as it is."""
        return named.changes(self.config, self.name)

    @property
    def ranks(self) -> int:
        """The MPI ranks that train the run."""
        return self.world.size

    @property
    def latest_checkpoint(self) -> str | None:
        """The path of the checkpoint saved last while training (rank 0's), or None."""
        return self._run.latest_checkpoint() if self._run is not None else None

    @property
    def batch_envs(self) -> list:
        """The Python batch environments the run steps while training (a watchdog's)."""
        return self._run.batch_envs if self._run is not None else []

    def stop(self, reason: str) -> None:
        """End training after the current step, saved and exported as after Ctrl-C; the
        result's `stopped_by` is the first reason given (a callback's way to stop the run)."""
        if self.stopped_by is None:
            self.stopped_by = reason

    def export_policy(self, path: str) -> str:
        """Export the current policy as a SavedModel at `path` (written whole, or not at all),
        while training."""
        if self._run is None:
            raise RuntimeError("Only a training run exports its current policy.")
        return results.atomic_directory(path, self._run.export_policy)

    def _prepare(self, config, logdir, seed, resume, overrides, name) -> run_setup.RunSetup:
        if resume is None:
            return run_setup.new_run(config, logdir, seed, overrides, name)
        if name is not None:
            raise UsageError(f"A resumed run keeps its name: drop the name {name!r}.")
        known = isinstance(config, (str, named.ConfigSource))
        expected = named.resolve(config).name if known else None
        return run_setup.resumed_run(resume, self.world.size, seed, overrides, expected, logdir)

    def train(
        self, callbacks: Sequence[Callback] | None = None, tf_logs: bool = False
    ) -> TrainResult:
        """Train to `train_steps`, until a consumer asks to stop (a signal to the run guard, a
        callback's stop); save, export, return the result.

        Args:
            callbacks: What listens to the run, in one list (`agents.training.Callback`s): the
                process shell's guard, progress bar and console (`run_guard.process_shell`) and
                the user's own, called after the run's files (metrics.jsonl, TensorBoard) and
                the callbacks the config asks for (`keep_best_policy`, `stop_at_score`,
                `patience`). None: the console's lines, printed.
            tf_logs: Show TensorFlow's own log lines (hidden by default).

        Raises:
            UsageError: The resumed run is finished, or a checkpoint does not fit the config.
            TrainingError: An environment failed, training met a non-finite value, a file
                could not be written, or a callback raised (the latest checkpoint is kept).
        """
        for _ in self.reports(callbacks, tf_logs):
            pass
        return self.result

    def reports(
        self, callbacks: Sequence[Callback] | None = None, tf_logs: bool = False
    ) -> Iterator[Report]:
        """Train as `train` does, yielding each train and eval report (on rank 0).

        ```python
        for report in trainer.reports():
            if report.phase == "eval" and report.score > -200:
                break  # Stops the run: checkpoint saved, policy exported.
        print(trainer.result)
        ```

        Leaving the loop early stops the run as a callback's stop does. `self.result` holds
        the `TrainResult` once the generator is done. Arguments and errors as for `train`.
        """
        if self._used:  # Its lock went with the first; another process may own the run now.
            raise UsageError(
                f"This Trainer trained {self.run_dir} already: make a new one to go on "
                f"(Trainer(resume={self.run_dir!r}, overrides={{'train_steps': N}}))."
            )
        self._used = True
        if callbacks is None:
            callbacks = [reporting.ConsoleLog(print)]
        given = [c for c in callbacks if self.world.is_root or c.every_rank]
        calls = callbacks_module.CallbackList([_Count(), *given], self)
        try:
            self.result = yield from self._train(calls, tf_logs)
        finally:
            self.close()

    def _train(self, calls: callbacks_module.CallbackList, tf_logs: bool):
        world = self.world
        try:
            # Under MPI a stop interrupts no rank's start-up: the ranks must agree on it.
            with calls.starting() if world.size == 1 else contextlib.nullcontext():
                run = self._start(tf_logs)
        except StartUpStopped as stop:  # Nothing was saved: a bank build or env start cut short.
            return self._stopped_in_start_up(stop.args[0])
        except Exception:
            if calls.signum is None or world.size > 1:
                raise
            # A signal to the whole process group killed the env processes being started.
            return self._stopped_in_start_up(calls.signum)
        signum = _agreed_signal(world, calls.signum)
        if signum is not None:  # Stopped during start-up: nothing to save.
            run.close()
            return self._stopped_in_start_up(signum)
        if self.resumed and run.env_steps >= self.budget:
            return self._finished_already(run, calls.say)
        self.env_steps, self.started = run.env_steps, True
        outcome = loop.LoopOutcome()
        try:
            self._listen(run, calls)
            if world.is_root:
                self._record_config(run)
                self._say_start(run, calls.say)
            calls.call("on_start")
            try:
                yield from loop.train(run, calls, outcome)
            except GeneratorExit:  # The caller left `reports()`: a stop, as a callback's.
                self.stop("the caller stopped iterating over the reports")
            result = self._finish(run, calls, outcome)
        finally:
            self.env_steps = run.env_steps
            calls.call("on_close", always=True)
            run.close()
            self._run = None
        calls.call("on_end", result)
        if calls.error is not None:  # Training is finished and saved; the callback failed.
            raise TrainingError(str(calls.error))
        return result

    def _listen(self, run, calls: callbacks_module.CallbackList) -> None:
        """Bind the consumers to the built run; add its files and the config's callbacks."""
        self._run = run
        run.guard_saves(calls.saving())
        if not self.world.is_root:
            return
        run.on_eval_call = lambda finished, share: calls.call("on_eval_call", finished, share)
        try:
            metrics = metrics_log.MetricsLog(run.run_dir, run.env_steps if self.resumed else None)
        except OSError as error:
            raise TrainingError(f"Cannot open {error.filename!r}: {error.strerror}.") from None
        if metrics.repaired:
            warn(
                f"warning: removed a partial last line ({metrics.repaired} bytes) of {metrics.path}"
            )
        if metrics.damaged:
            warn(
                f"warning: moved {metrics.damaged} damaged line(s) of {metrics.path} to "
                f"{metrics.path}.damaged"
            )
        if metrics.superseded:  # Said after the start line (see `_say_start`).
            self._notes.append(
                f"Moved {metrics.superseded} record(s) of {metrics.path} past env step "
                f"{run.env_steps}, which training repeats from its checkpoint, to "
                f"{metrics.path}.superseded."
            )
        calls.callbacks[1:1] = [metrics]  # After the count, before everything that listens.
        try:
            calls.callbacks[2:2] = [run.summary_log()]
        except SummaryError as error:
            raise TrainingError(f"{error}; stopped at env step {run.env_steps}.") from None
        calls.callbacks[3:3] = callbacks_module.from_config(self.config)

    def _say_start(self, run, say) -> None:
        action = "Resuming" if self.resumed else "Starting"
        say(f"{action} run {self.run_dir} at env step {run.env_steps}.")
        say(budget.describe(self.config, self.world.size))
        changed = self.changes()
        if changed:
            say(f"Config {self.name} with {changed}.")
        for note in self._notes:
            say(note)

    def _finish(self, run, calls: callbacks_module.CallbackList, outcome: loop.LoopOutcome):
        """After the loop: save, summarise, write the results; the `TrainResult`."""
        world = self.world
        if world.bcast(outcome.vanished):
            raise TrainingError(
                f"The run directory {self.run_dir} was moved or deleted during training; "
                f"stopped at env step {run.env_steps} and wrote nothing more (a checkpoint "
                "now would start a second, partial run at that path)."
            )
        self._save(run)
        self.saved = True
        if world.is_root:
            calls.say(reporting.summary_line(outcome, run.env_steps))
        if outcome.write_error is not None:  # The state is sound: saved, then stopped.
            raise TrainingError(f"{outcome.write_error}; checkpoint saved.", "resume")
        if calls.error is not None:
            raise TrainingError(f"{calls.error}; checkpoint saved.", "resume")
        if world.is_root:
            self._write_results(run, calls.say)
        signum = _agreed_signal(world, outcome.signum)
        stopped_by = world.bcast(self.stopped_by)
        if world.is_root and signum is None:
            if stopped_by is None:
                calls.say(f"Done: {run.env_steps} env steps in {self.run_dir}.")
            else:
                calls.say(f"Stopped at env step {run.env_steps}: {stopped_by}.")
        result = TrainResult(
            self.run_dir,
            run.env_steps,
            outcome.eval_score,
            signum,
            stopped_by,
            outcome.best,
            outcome.eval_success_rate,
        )
        self.result = result  # Also when the caller closed `reports()`, which drops the return.
        return result

    def close(self) -> None:
        """Release the run (its lock); a Trainer that never built its Run keeps no new,
        empty run directory."""
        if self.world.is_root and not self.resumed and not self.started:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _start(self, tf_logs: bool):
        """The Run (a new run's directory is removed by `close` when building it fails)."""
        lost = tf_loading.import_tensorflow(tf_logs, compilation.onednn(self.config["agent"]))
        if lost:
            warn(lost)
        from agents.training.run import Run  # TensorFlow's: imported after its settings, above.

        try:
            return Run(self.config, self.run_dir, self.seed, self.world)
        except (BatchEnvError, CheckpointError) as error:  # E.g. the first reset.
            raise TrainingError(str(error)) from error

    def _stopped_in_start_up(self, signum: int) -> TrainResult:
        """A stop before training: a new run's directory goes (see `close`), a resumed one stays."""
        return TrainResult(self.run_dir if self.resumed else None, None, math.nan, signum)

    def _finished_already(self, run, say) -> TrainResult:
        """A resumed run that trained its `train_steps`: write results it lacks, else refuse."""
        steps = run.env_steps
        if self.world.is_root and not results.has_policy(self.run_dir):  # Its export failed.
            try:
                self._write_results(run, say)
            finally:
                run.close()
            say(f"Run {self.run_dir} was finished at env step {steps}; wrote its results.")
            return TrainResult(self.run_dir, steps, math.nan)
        run.close()
        raise FinishedRunError(self.run_dir, steps, self.config["train_steps"])

    def _record_config(self, run) -> None:
        """Write config.yaml and the hparams; a new run that cannot is removed (full disk)."""
        try:
            files.save_config(self.config, self.run_dir, self.name, self.world.size, self.seed)
            run.write_hparams(dict(self.config, seed=self.seed))
        except OSError as error:
            where = error.filename or self.run_dir
            kept = "the run is unchanged" if self.resumed else "removed the new run directory"
            if not self.resumed:
                shutil.rmtree(self.run_dir, ignore_errors=True)
            raise TrainingError(f"Cannot write {where!r} ({error.strerror}); {kept}.") from None

    def _save(self, run) -> None:
        try:
            run.save()
        except CheckpointError as error:
            raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error

    def _write_results(self, run, say) -> None:
        failure = results.write_results(run, say)
        if failure is not None:  # Training and its checkpoint are kept.
            raise TrainingError(f"{failure}; the checkpoint is saved.", "write results")


def _lock(setup: run_setup.RunSetup):
    try:
        return run_dirs.acquire(setup.run_dir)
    except UsageError:
        if not setup.resumed:
            shutil.rmtree(setup.run_dir, ignore_errors=True)
        raise


def _agreed_signal(world: mpi.World, signum: int | None) -> int | None:
    """The signal that stopped any rank (ranks stop together, but not all of them got it)."""
    signums = [s for s in world.allgather(signum) if s is not None]
    return signums[0] if signums else None


class _Count(Callback):
    """The Trainer's count of env steps, updated before each call and each report, so that
    every callback after it reads the current count (and any thread, the latest)."""

    every_rank = True

    def on_step(self, run: Trainer) -> None:
        run.env_steps = run._run.env_steps

    def on_report(self, run: Trainer, report) -> None:
        run.env_steps = run._run.env_steps
