"""Hyperparameter search with Optuna: TPE sampling, median pruning on the eval scores.

Each trial is a normal run directory (`<timestamp>-<config>-trial<N>-s<seed>`) of the config
with the trial's values, trained in this process; its eval reports go to Optuna as they come
(a callback), and the median pruner stops a trial whose score at an evaluation is below the
median of earlier trials' at that env step. The study lives in `<logdir>/tune-<study>.db`
(SQLite), so a second call with the same study (or a second process beside the first) goes on
where it stands; a trial a signal stopped is tried again with its values. The objective is the
final eval score. `pip install -e ".[tune]"`.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agents.config import files, named
from agents.config.errors import UsageError
from agents.multirun import quiet_run
from agents.multirun.tuning_space import DEFAULT_SPACE, entry_problem, suggest
from agents.training.callbacks import Callback

try:  # The tune extra: optional (`tune` says how to install it where it is missing).
    import optuna
    from sqlalchemy.exc import IntegrityError, OperationalError  # optuna's storage, with it.
except ImportError:
    optuna = None

# A trial stopped by a signal records it here; the next call of the study tries its values again.
STOPPED_ATTR, RETRY_ATTR = "stopped_by_signal", "retry_of"


class TuningStoppedError(Exception):
    """A signal stopped the study's running trial (saved, its run kept); the study goes on where
    it stopped when called again, trying that trial's values first.

    Attributes:
        signum: The signal.
        trial: The stopped trial's number.
        run_dir: Its run directory.
    """

    def __init__(self, signum: int, trial: int, run_dir: str | None) -> None:
        super().__init__(f"Trial {trial} stopped by signal {signum} ({run_dir})")
        self.signum, self.trial, self.run_dir = signum, trial, run_dir


class Pruning(Callback):
    """Reports each eval score to the trial; stops the run where the pruner says so."""

    def __init__(self, trial: Any) -> None:
        self._trial = trial
        self.pruned = False

    def on_report(self, run, report) -> None:
        if report.phase != "eval" or not math.isfinite(report.score):
            return
        steps = int(report.metrics.get("env_steps", run.env_steps))
        self._trial.report(float(report.score), steps)
        if self._trial.should_prune():
            self.pruned = True
            run.stop(f"pruned by the median pruner at env step {steps}")


def tune(
    config: str | named.ConfigSource,
    trials: int,
    logdir: str = "logdir",
    space: Mapping[str, Mapping[str, Any]] | None = None,
    study: str | None = None,
    seed: int = 0,
    overrides: Mapping[str, Any] | None = None,
    say: Callable[[str], None] = print,
) -> Any:
    """Run the study of `config` until it holds `trials` finished trials; returns it.

    Trial N's values are drawn by a sampler seeded with (`seed`, N): a study grown by a second
    call, or by two processes at once, draws new values for every trial and the same values
    as another study of the same seed and history.

    Args:
        config: A config name or a config.yaml path (read once, here), or a `ConfigSource`.
        trials: Finished (complete or pruned) trials the study should hold.
        logdir: Where the trials' run directories and the study's database go.
        space: The search space (default `DEFAULT_SPACE`).
        study: The study's name (default: the config's name).
        seed: Seed of the sampler and of every trial's run.
        overrides: Config values every trial shares (e.g. a short `train_steps`).
        say: Where a line per trial goes.

    Raises:
        UsageError: Optuna is not installed, or a bad config, key or value.
        TuningStoppedError: A signal stopped the running trial.
    """
    if optuna is None:
        raise UsageError('Tuning needs Optuna: pip install -e ".[tune]".')
    space = dict(DEFAULT_SPACE if space is None else space)
    for key, entry in space.items():  # A space given in Python is checked as a file's is.
        problem = entry_problem(key, entry)
        if problem:
            raise UsageError(f"Search space: {key}: {entry!r}: {problem}.")
    if isinstance(config, str):  # Read once here; every trial's run takes it as it is.
        config = named.resolve(config)
    name = study or config.name
    os.makedirs(logdir, exist_ok=True)
    path = os.path.abspath(os.path.join(logdir, f"tune-{name}.db"))
    the_study = _open_study(name, f"sqlite:///{path}", seed)
    finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)

    def objective(trial) -> float:
        values = {**dict(overrides or {}), **suggest(trial, space)}
        pruning = Pruning(trial)
        result = quiet_run.train_quietly(
            config, logdir, seed, values, f"trial{trial.number}", [pruning]
        )
        trial.set_user_attr("run_dir", result.run_dir)
        if result.stopped:
            trial.set_user_attr(STOPPED_ATTR, result.signum)
            raise TuningStoppedError(result.signum, trial.number, result.run_dir)
        if pruning.pruned:
            say(f"trial {trial.number}: pruned at {result.env_steps} env steps ({result.run_dir})")
            raise optuna.TrialPruned()
        say(f"trial {trial.number}: eval {result.eval_score:.2f} ({result.run_dir})")
        return result.eval_score

    done = len(the_study.get_trials(states=finished))
    say(f"Study {name} in {path}: {done} of {trials} trials done.")
    for number in retry_stopped(the_study):
        say(f"trial {number} was stopped by a signal: its values are tried again")
    while len(the_study.get_trials(states=finished)) < trials:
        the_study.optimize(objective, n_trials=1, catch=())
    return the_study


# What SQLite says to the second of two processes creating one study database at once.
_RACES = ("already exists", "UNIQUE constraint", "database is locked")


def _open_study(name: str, storage: str, seed: int) -> Any:
    """The study, created or loaded; processes creating one database at once take turns."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for handler in logging.getLogger("optuna").handlers:
        if not any(isinstance(kept, _NoStoppedTrace) for kept in handler.filters):
            handler.addFilter(_NoStoppedTrace())
    for attempt in range(10):
        try:
            return optuna.create_study(
                study_name=name,
                storage=storage,
                load_if_exists=True,
                direction="maximize",
                sampler=_trial_seeded_sampler(seed),
                pruner=optuna.pruners.MedianPruner(n_startup_trials=2),
            )
        except (IntegrityError, OperationalError) as error:
            if attempt == 9 or not any(word in str(error) for word in _RACES):
                raise
            time.sleep(0.2 + 0.3 * attempt)
    raise AssertionError("unreachable")


class _NoStoppedTrace(logging.Filter):
    """Drops Optuna's "trial failed" traceback for a trial a signal stopped: the command says
    it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], TuningStoppedError))


def retry_stopped(study: Any) -> list[int]:
    """Queues the values of every trial a signal stopped that no trial has tried again yet;
    returns those trials' numbers."""
    retried = {trial.user_attrs.get(RETRY_ATTR) for trial in study.trials}
    stopped = [
        trial
        for trial in study.trials
        if STOPPED_ATTR in trial.user_attrs and trial.number not in retried
    ]
    for trial in stopped:
        study.enqueue_trial(trial.params, user_attrs={RETRY_ATTR: trial.number})
    return [trial.number for trial in stopped]


def trial_seed(seed: int, number: int) -> int:
    """The sampler's seed for trial `number` of a study tuned with `seed`."""
    return int(np.random.SeedSequence([seed, number]).generate_state(1)[0])


def _trial_seeded_sampler(seed: int) -> Any:
    """A TPE sampler seeded afresh for each trial with `trial_seed(seed, trial.number)`.

    One sampler seeded once draws the same startup values in every process: a second call of
    a study, or a second process on it, repeated the first one's trials exactly.
    """

    class TrialSeeded(optuna.samplers.BaseSampler):
        def __init__(self) -> None:
            self._tpe = optuna.samplers.TPESampler(seed=seed)

        def before_trial(self, study, trial) -> None:
            self._tpe = optuna.samplers.TPESampler(seed=trial_seed(seed, trial.number))
            self._tpe.before_trial(study, trial)

        def infer_relative_search_space(self, study, trial):
            return self._tpe.infer_relative_search_space(study, trial)

        def sample_relative(self, study, trial, search_space):
            return self._tpe.sample_relative(study, trial, search_space)

        def sample_independent(self, study, trial, param_name, param_distribution):
            return self._tpe.sample_independent(study, trial, param_name, param_distribution)

        def after_trial(self, study, trial, state, values) -> None:
            self._tpe.after_trial(study, trial, state, values)

    return TrialSeeded()


def results_table(study: Any) -> list[str]:
    """One line per trial: number, state, final eval (none for a pruned one), its values."""
    lines = [f"{'trial':>5}  {'state':<8}  {'eval':>10}  values"]
    for trial in study.trials:
        value = "" if trial.value is None else f"{trial.value:.2f}"
        if trial.state.name == "PRUNED":  # Optuna gives it its last report: not a final eval.
            value = "-"
        values = " ".join(f"{key}={val:.4g}" if isinstance(val, float) else f"{key}={val}"
                          for key, val in trial.params.items())  # fmt: skip
        lines.append(f"{trial.number:>5}  {trial.state.name.lower():<8}  {value:>10}  {values}")
    return lines


def write_best(study: Any, path: str) -> str:
    """The best trial's run config.yaml, copied to `path`: `--config=<path>` trains it again
    (with its seed). Returns `path`."""
    run_dir = study.best_trial.user_attrs["run_dir"]
    name, config, world_size = files.read_config_file(os.path.join(run_dir, files.CONFIG_FILE))
    seed = files.saved_seed(os.path.join(run_dir, files.CONFIG_FILE))
    os.makedirs(path, exist_ok=True)
    files.save_config(dict(config), path, name, world_size, seed or 0)
    return os.path.join(path, files.CONFIG_FILE)
