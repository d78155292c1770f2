"""Hyperparameter search with Optuna: TPE sampling, median pruning on the eval scores.

Each trial is a normal run directory (`<timestamp>-<config>-trial<N>-s<seed>`) of the config
with the trial's values, trained in this process; its eval reports go to Optuna as they come
(a callback), and the median pruner stops a trial whose score at an evaluation is below the
median of earlier trials' at that env step. The study lives in `<logdir>/tune-<study>.db`
(SQLite), so a second call with the same study goes on where the first stopped. The objective is
the final eval score. `pip install -e ".[tune]"`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from agents.config import files, named, schema
from agents.config.errors import UsageError
from agents.multirun import quiet_run
from agents.training.callbacks import Callback

# Without a space of the user's: RL-Zoo's PPO sampler's ranges (rl_zoo3/hyperparams_opt.py).
DEFAULT_SPACE: dict[str, dict[str, Any]] = {
    "learning_rate": {"type": "float", "low": 1e-5, "high": 1e-2, "log": True},
    "entropy_coef": {"type": "float", "low": 1e-8, "high": 0.1, "log": True},
    "clip_ratio": {"type": "categorical", "choices": [0.1, 0.2, 0.3, 0.4]},
    "gae_lambda": {"type": "categorical", "choices": [0.8, 0.9, 0.92, 0.95, 0.98, 0.99, 1.0]},
    "discount": {"type": "categorical", "choices": [0.9, 0.95, 0.98, 0.99, 0.995, 0.999]},
    "update_epochs": {"type": "categorical", "choices": [1, 5, 10, 20]},
}
_TYPES = {"float": ("low", "high"), "int": ("low", "high"), "categorical": ("choices",)}


def load_space(path: str | None) -> dict[str, dict[str, Any]]:
    """The search space of a YAML file (key: {type, low, high[, log]} or {type: categorical,
    choices}), or `DEFAULT_SPACE` for None.

    Raises:
        UsageError: A file that cannot be read, an unknown config key, or a bad entry.
    """
    if path is None:
        return dict(DEFAULT_SPACE)
    try:
        with open(path) as handle:
            space = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as error:
        raise UsageError(f"Search space {path!r} cannot be read: {error}") from None
    if not isinstance(space, dict) or not space:
        raise UsageError(f"Search space {path!r} is empty: give key: {{type, low, high}} entries.")
    for key, entry in space.items():
        _check_entry(path, key, entry)
    return space


def _check_entry(path: str, key: str, entry: Any) -> None:
    if key not in schema.KEYS:
        raise UsageError(f"Search space {path!r}: {key!r} is no config key.")
    kind = entry.get("type") if isinstance(entry, dict) else None
    if kind not in _TYPES or any(field not in entry for field in _TYPES[kind]):
        raise UsageError(
            f"Search space {path!r}: {key}: {entry!r}; give {{type: float|int, low, high}} "
            "(log: true for a log scale) or {type: categorical, choices: [...]}."
        )


def suggest(trial: Any, space: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The trial's values of every key of `space` (Optuna's suggest API)."""
    values = {}
    for key, entry in space.items():
        if entry["type"] == "categorical":
            values[key] = trial.suggest_categorical(key, list(entry["choices"]))
        elif entry["type"] == "int":
            values[key] = trial.suggest_int(
                key, entry["low"], entry["high"], log=entry.get("log", False)
            )
        else:
            values[key] = trial.suggest_float(
                key, float(entry["low"]), float(entry["high"]), log=entry.get("log", False)
            )
    return values


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
    config: str,
    trials: int,
    logdir: str = "logdir",
    space: Mapping[str, Mapping[str, Any]] | None = None,
    study: str | None = None,
    seed: int = 0,
    overrides: Mapping[str, Any] | None = None,
    say: Callable[[str], None] = print,
) -> Any:
    """Run the study of `config` until it holds `trials` finished trials; returns it.

    Args:
        config: A config name or a config.yaml path.
        trials: Finished (complete or pruned) trials the study should hold.
        logdir: Where the trials' run directories and the study's database go.
        space: The search space (default `DEFAULT_SPACE`).
        study: The study's name (default: the config's name).
        seed: Seed of the sampler and of every trial's run.
        overrides: Config values every trial shares (e.g. a short `train_steps`).
        say: Where a line per trial goes.

    Raises:
        UsageError: Optuna is not installed, or a bad config, key or value.
    """
    try:
        import optuna
    except ImportError:
        raise UsageError('Tuning needs Optuna: pip install -e ".[tune]".') from None
    space = dict(DEFAULT_SPACE if space is None else space)
    name = study or named.config_name(config)
    os.makedirs(logdir, exist_ok=True)
    storage = f"sqlite:///{os.path.abspath(os.path.join(logdir, f'tune-{name}.db'))}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    the_study = optuna.create_study(
        study_name=name,
        storage=storage,
        load_if_exists=True,
        direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=seed),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=2),
    )
    finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)

    def objective(trial) -> float:
        values = {**dict(overrides or {}), **suggest(trial, space)}
        pruning = Pruning(trial)
        result = quiet_run.train_quietly(
            config, logdir, seed, values, f"trial{trial.number}", [pruning]
        )
        trial.set_user_attr("run_dir", result.run_dir)
        if result.stopped:
            raise KeyboardInterrupt(f"Trial {trial.number} stopped by a signal: {result.run_dir}")
        if pruning.pruned:
            say(f"trial {trial.number}: pruned at {result.env_steps} env steps ({result.run_dir})")
            raise optuna.TrialPruned()
        say(f"trial {trial.number}: eval {result.eval_score:.2f} ({result.run_dir})")
        return result.eval_score

    done = len(the_study.get_trials(states=finished))
    say(f"Study {name} in {storage[len('sqlite:///') :]}: {done} of {trials} trials done.")
    while len(the_study.get_trials(states=finished)) < trials:
        the_study.optimize(objective, n_trials=1, catch=())
    return the_study


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
