"""The Python API: `from agents import train, load_policy, evaluate`.

```python
from agents import evaluate, load_policy, train

result = train("pendulum", logdir="logdir", seed=0, train_steps=20_000)
print(result.run_dir, result.eval_score)
policy = load_policy(result.run_dir)
action = policy(observation)  # One observation, or a batch.
print(evaluate(policy, "Pendulum-v1", episodes=10).mean)
```

`train` runs what `python -m agents.scripts.train` runs, in this process, and raises instead of
exiting; `load_policy` reads the SavedModel that training exports (see `agents.policy`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agents.policy import Policy, evaluate, load_policy  # noqa: F401 (the API's names)
from agents.scripts.environments import API_NAMESPACE  # gymnasium, no TensorFlow


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What `train` returns; usable as a path (`os.fspath(result)` is the run directory).

    Attributes:
        run_dir: The run directory (config.yaml, summaries, checkpoints, policy/, metrics.jsonl).
        env_steps: Training env steps made.
        eval_score: Mean score of the last evaluation phase (nan if no episode finished).
        exit_status: 0, or 128 + the signal that stopped training (a checkpoint was saved).
    """

    run_dir: str
    env_steps: int
    eval_score: float
    exit_status: int = 0

    def __fspath__(self) -> str:
        return self.run_dir

    def __str__(self) -> str:
        return self.run_dir


def train(
    config: str | Mapping[str, Any] = "pendulum",
    logdir: str = "logdir",
    seed: int | None = None,
    env: str | Callable[[], Any] | None = None,
    verbose: int = 1,
    resume: str | None = None,
    **overrides: Any,
) -> TrainResult:
    """Train an agent and export its policy; returns the run directory and the final eval score.

    Ctrl-C (SIGINT) or SIGTERM stops training after the current step: a checkpoint is saved, the
    policy exported, and `KeyboardInterrupt` raised, naming the run (resume it with `resume=`). A
    second Ctrl-C does the same; it never ends the calling process. Called from a thread other
    than the main one, training installs no signal handlers. Environment variables that training
    sets for TensorFlow are restored when it returns.

    Args:
        config: A config name (`python -m agents.scripts.train --help` lists them), the path of
            a `config.yaml`, or a dict of config keys (keys it lacks take their defaults).
        logdir: Parent directory of the run directory.
        seed: Seed of networks, action sampling and environments (default: the one a
            `config.yaml` given as `config`, or the resumed run, records, else 0).
        env: A gymnasium id, a callable returning a gymnasium environment (stepped in this
            process; registered with gymnasium as `agents_api/<name>-v0`), or a
            `agents.envs.NativeEnv` (an instance, or a class built without arguments), trained
            natively as `agents_api/<name>-v0` (native_env=True).
        verbose: 0: print nothing but warnings and errors; 1: the report lines and where the
            results went (as the command line prints them); 2: TensorFlow's log lines too.
        resume: A run directory to resume from its latest checkpoint (`config` and `logdir`
            are then the run's own); overrides may raise `train_steps`.
        **overrides: Config keys to set, e.g. `learning_rate=1e-3` (numpy scalars too).

    Returns:
        A `TrainResult`.

    Raises:
        ValueError: A config name, key or value is invalid (the message names it).
        RuntimeError: An environment failed or training met a non-finite value.
        KeyboardInterrupt: Training was stopped by a signal (after saving and exporting).
    """
    from agents.scripts import train as script
    from agents.scripts import utility
    from agents.tools import mpi

    overrides = {key: _plain(key, value) for key, value in overrides.items()}
    if _is_native(env):
        overrides.update(env=_register_native(env), native_env=True)
    elif env is not None:
        overrides["env"] = env if isinstance(env, str) else _register(env, overrides)
    saved_environ = dict(os.environ)
    with tempfile.TemporaryDirectory() as temp:
        argv = _argv(config, logdir, resume, temp)
        argv += [] if seed is None else [f"--seed={seed}"]
        if overrides:
            argv += ["--set", *[f"{key}={value!r}" for key, value in overrides.items()]]
        args = script.parse_args(argv + (["--verbose"] if verbose >= 2 else []))
        outcome = script.Outcome()
        silence = contextlib.redirect_stdout(io.StringIO()) if verbose <= 0 else None
        try:
            with silence or contextlib.nullcontext():
                status = script.train(args, mpi.init_world(), outcome, host=True)
        except utility.UsageError as error:
            raise ValueError(str(error)) from None
        except script.TrainingError as error:
            raise RuntimeError(str(error)) from None
        finally:
            _restore_environ(saved_environ)
    return _result(outcome, status)


def _plain(key: str, value: Any) -> Any:
    """A config value as plain Python (numpy scalars and arrays too), checked by the schema.

    Raises:
        ValueError: An unknown key or a bad value, naming the keyword.
    """
    from agents.ppo import validate

    if isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    if callable(value) and key == "env":
        return value
    try:
        return validate.check_value(key, value)
    except ValueError as error:
        raise ValueError(f"train(..., {key}={value!r}): {error}") from None


def _argv(config, logdir: str, resume: str | None, temp: str) -> list[str]:
    """The command line's --config, --logdir and --timestamp for a new or resumed run."""
    if resume is None:
        return [f"--config={_config_argument(config, temp)}", f"--logdir={logdir}"]
    from agents.scripts import utility

    resume = os.path.normpath(resume)
    name = os.path.basename(resume)
    match = re.match(r"(\d{8}T\d{6}(?:-\d+)?)-(.+)$", name)
    if match is None or not os.path.isfile(os.path.join(resume, utility.CONFIG_FILE)):
        raise ValueError(f"resume={resume!r} is no run directory (<timestamp>-<config>).")
    timestamp, config_name = match.groups()
    logdir = os.path.dirname(resume) or "."
    return [f"--config={config_name}", f"--logdir={logdir}", f"--timestamp={timestamp}"]


def _restore_environ(saved: Mapping[str, str]) -> None:
    for key in set(os.environ) - set(saved):
        del os.environ[key]
    os.environ.update(saved)


def _result(outcome, status: int) -> TrainResult:
    """The `TrainResult` of a run that ended with `status`; raises KeyboardInterrupt on a signal."""
    from agents.scripts.metrics_log import read_metrics

    if outcome.env_steps is None:  # Stopped during start-up: nothing trained.
        raise KeyboardInterrupt(f"Training stopped during start-up (exit status {status}).")
    evals = [r for r in read_metrics(outcome.run_dir) if r["phase"] == "eval"]
    score = evals[-1]["score"] if evals and evals[-1]["score"] is not None else float("nan")
    result = TrainResult(outcome.run_dir, outcome.env_steps, float(score), status)
    if status != 0:
        raise KeyboardInterrupt(
            f"Training stopped at env step {outcome.env_steps}; checkpoint saved and policy "
            f"exported in {outcome.run_dir}. Resume with train(resume={outcome.run_dir!r})."
        )
    return result


def _config_argument(config: str | Mapping[str, Any], temp: str) -> str:
    """`--config`'s value: a name or path as given, a dict written to a config.yaml."""
    if isinstance(config, str):
        return config
    from agents.scripts import configs, utility

    unknown = sorted(set(config) - set(configs.default()))
    if unknown:
        raise ValueError(f"Unknown config keys: {', '.join(unknown)}.")
    full = {**configs.default(), **config}
    path = os.path.join(temp, "config.yaml")
    utility.save_config(full, temp, "custom")
    return path


def _is_native(env: Any) -> bool:
    """Whether `env` is a NativeEnv or its class (whose module is loaded if it is one)."""
    module = sys.modules.get("agents.envs.native_env")
    if module is None or env is None:
        return False
    native = module.NativeEnv
    return isinstance(env, native) or (isinstance(env, type) and issubclass(env, native))


def _register_native(env: Any) -> str:
    """Register a NativeEnv (instance or class) as a native env id; returns the id."""
    from agents import envs

    kind = env if isinstance(env, type) else type(env)
    env_id = f"{API_NAMESPACE}/{_id_name(kind)}-v0"
    envs.register(env_id, env if isinstance(env, type) else lambda: env)
    return env_id


def _id_name(constructor: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "", getattr(constructor, "__name__", "")) or "env"


def _register(make_env: Callable[[], Any], overrides: Mapping[str, Any]) -> str:
    """Register a callable as a gymnasium environment; returns its id."""
    import gymnasium as gym

    if overrides.get("env_processes"):
        raise ValueError("An env given as a callable steps in this process: env_processes=False.")
    env_id = f"{API_NAMESPACE}/{_id_name(make_env)}-v0"
    gym.registry.pop(env_id, None)  # A new callable of the same name replaces the old one.
    gym.register(env_id, entry_point=make_env)
    return env_id
