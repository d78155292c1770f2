"""The Python API: `from agents import train, load_policy, evaluate`.

```python
from agents import evaluate, load_policy, train

result = train("pendulum", logdir="logdir", seed=0, train_steps=20_000)
print(result.run_dir, result.eval_score)
policy = load_policy(result.run_dir)
action = policy(observation)  # One observation, or a batch.
print(evaluate(policy, "Pendulum-v1", episodes=10).mean)
```

`train` runs a `Trainer` (`agents.training`) in this process, as the command line does, and
raises instead of exiting; `load_policy` reads the SavedModel that training exports (see
`agents.policy`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from agents import envs
from agents.config import validate
from agents.config.errors import UsageError
from agents.config.values import CheckedValues, plain_value
from agents.envs.python import vector_envs
from agents.envs.python.environments import API_NAMESPACE  # gymnasium, no TensorFlow
from agents.multirun import seeds as seed_runs
from agents.multirun.seeds import SeedOutcome
from agents.policy import Policy, evaluate, load_policy  # noqa: F401 (the API's names)
from agents.runtime import tf_loading
from agents.training import FinishedRunError, Trainer, TrainingError, TrainResult  # noqa: F401 (the API's names)
from agents.training.callbacks import Callback  # noqa: F401 (the API's names)
from agents.training.run_guard import process_shell

_TRAINING = threading.Lock()  # Held by the process's one `train` call.


def train(
    config: str | Mapping[str, Any] = "pendulum",
    logdir: str = "logdir",
    seed: int | None = None,
    env: str | Callable[[], Any] | Any | None = None,
    verbose: int = 1,
    resume: str | None = None,
    callbacks: Sequence[Callback] = (),
    name: str | None = None,
    seeds: Sequence[int] | None = None,
    parallel: int | None = None,
    **overrides: Any,
) -> TrainResult | list[SeedOutcome]:
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
            process; registered with gymnasium as `agents_api/<name>-v0`), a gymnasium
            `VectorEnv` (e.g. `gym.make_vec(...)` or an EnvPool pool) or a callable returning
            one (called for the training envs and for the evaluation envs; its size sets
            `num_agents` and `eval_agents`; a callable is called once first to tell which it
            builds, and a single env built so is closed), or a
            `agents.envs.NativeEnv` (an instance, or a class built without arguments), trained
            natively as `agents_api/<name>-v0` (native_env=True).
        verbose: 0: the run prints nothing but warnings and errors (what your callbacks and
            envs print still reaches stdout; a layout bank's build, minutes long, still says
            its progress); 1: the report lines and where the results went (as the command
            line prints them); 2: TensorFlow's log lines too.
        resume: A run directory to resume from its latest checkpoint (`config` and `logdir`
            are then the run's own); overrides may raise `train_steps`.
        callbacks: `agents.training.callbacks.Callback`s called on start, on each report, on
            each checkpoint and at the end; one may stop the run (`TrainResult.stopped_by`
            then says why). The config keys `stop_at_score`, `patience` and
            `keep_best_policy` add the common ones.
        name: A label for the run directory (`<timestamp>-<config>[-<env>]-<name>-s<seed>`;
            letters, digits and `._=+-`), e.g. to tell apart the runs of a sweep.
        seeds: Train one run per seed instead of one run, each in its own process (at most
            `parallel` at once, default the machine's cores); a seed that fails is reported
            and the others finish. `env` is then a gymnasium id, and `seed`, `resume` and
            `callbacks` are not given. `agents.multirun.seeds.summary_lines(outcomes)` is
            the table the command line prints.
        parallel: With `seeds`: runs at once.
        **overrides: Config keys to set, e.g. `learning_rate=1e-3` (numpy scalars too).

    Returns:
        A `TrainResult`; with `seeds`, a list of `agents.multirun.seeds.SeedOutcome` (seed,
        result or error line), in the order of `seeds`.

    Raises:
        ValueError: A config name, key or value is invalid (the message names it).
        RuntimeError: An environment failed, training met a non-finite value, or a callback
            raised (the message names it; the checkpoint is saved); or another `train` call
            is running in this process (another thread's).
        KeyboardInterrupt: Training was stopped by a signal (after saving and exporting).
    """
    if seeds is not None:
        return _train_seeds(config, logdir, seed, env, verbose, resume, callbacks, name, seeds,
                            parallel, overrides)  # fmt: skip
    if not _TRAINING.acquire(blocking=False):
        raise RuntimeError(
            "agents.train is already running in this process: one run at a time per process "
            "(a run sets process-wide state: stdout, signal handlers, TensorFlow's seeds). Run "
            "several at once in processes (the command line, or multiprocessing)."
        )
    try:
        return _train(config, logdir, seed, env, verbose, resume, callbacks, name, overrides)
    finally:
        _TRAINING.release()


def _train_seeds(config, logdir, seed, env, verbose, resume, callbacks, name, seeds, parallel,
                 overrides) -> list[SeedOutcome]:  # fmt: skip
    given = [key for key, value in (("seed", seed), ("resume", resume), ("callbacks", callbacks))
             if value]  # fmt: skip
    if env is not None and not isinstance(env, str):
        given.append("env as a Python object (give a gymnasium id: each seed is a process)")
    if given:
        raise ValueError(
            f"train(seeds=...) starts runs in processes of their own: drop {', '.join(given)}."
        )
    overrides = CheckedValues({key: _plain(key, value) for key, value in overrides.items()})
    if env is not None:
        overrides["env"] = env
    say = print if verbose > 0 else (lambda line: None)
    try:
        return seed_runs.train_seeds(config, seeds, logdir, overrides, name, parallel, say)
    except UsageError as error:
        raise ValueError(str(error)) from None


def _train(config, logdir, seed, env, verbose, resume, callbacks, name, overrides) -> TrainResult:
    # Checked here, once: the Trainer sets them without checking them again.
    overrides = CheckedValues({key: _plain(key, value) for key, value in overrides.items()})
    if _is_native(env):
        overrides.update(env=_register_native(env), native_env=True)
    elif env is not None:
        overrides["env"] = env if isinstance(env, str) else _register(env, overrides)
    saved_environ = dict(os.environ)
    try:
        trainer = Trainer(
            None if resume is not None else config,
            logdir,
            seed=seed,
            resume=resume,
            overrides=overrides,
            name=name,
        )
        shell = process_shell(trainer.budget, host=True, bar=verbose > 0, console=verbose > 0)
        with shell as listeners:
            result = trainer.train(listeners + list(callbacks), verbose >= 2)
    except FinishedRunError as error:
        raise ValueError(error.message(f"train(resume={error.run_dir!r}, train_steps=N)")) from None
    except UsageError as error:
        raise ValueError(str(error)) from None
    except TrainingError as error:
        raise RuntimeError(error.with_next_step("train(resume=<run_dir>)")) from None
    finally:
        _restore_environ(saved_environ)
    if result.stopped:
        raise KeyboardInterrupt(_stopped(result))
    return result


def _stopped(result: TrainResult) -> str:
    """The KeyboardInterrupt's message for a run stopped by a signal."""
    if result.env_steps is None:
        return "Training stopped during start-up; nothing was trained."
    return (
        f"Training stopped at env step {result.env_steps}; checkpoint saved and policy "
        f"exported in {result.run_dir}. Resume with train(resume={result.run_dir!r})."
    )


def _plain(key: str, value: Any) -> Any:
    """A config value as plain Python (numpy scalars and arrays too), checked by the schema.

    Raises:
        ValueError: An unknown key or a bad value, naming the keyword.
    """
    value = plain_value(value)
    if callable(value) and key == "env":
        return value
    try:
        return validate.check_value(key, value)
    except ValueError as error:
        raise ValueError(f"train(..., {key}={value!r}): {error}") from None


def _restore_environ(saved: Mapping[str, str]) -> None:
    for key in set(os.environ) - set(saved):
        del os.environ[key]
    os.environ.update(saved)


def _is_native(env: Any) -> bool:
    """Whether `env` is a NativeEnv or its class (whose module is loaded if it is one)."""
    module = sys.modules.get("agents.envs.native_env")
    if module is None or env is None:
        return False
    native = module.NativeEnv
    return isinstance(env, native) or (isinstance(env, type) and issubclass(env, native))


def _register_native(env: Any) -> str:
    """Register a NativeEnv (instance or class) as a native env id; returns the id."""
    kind = env if isinstance(env, type) else type(env)
    env_id = f"{API_NAMESPACE}/{_id_name(kind)}-v0"
    envs.register(env_id, env if isinstance(env, type) else lambda: env)
    return env_id


def _id_name(constructor: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "", getattr(constructor, "__name__", "")) or "env"


def _register(make_env: Any, overrides: dict[str, Any]) -> str:
    """Register a callable as a gymnasium environment, or a vector env (an instance, or a
    callable building one, which is called once here to tell); returns its id."""
    if overrides.get("env_processes"):
        raise ValueError("An env given as a callable steps in this process: env_processes=False.")
    built = make_env if vector_envs.is_vector_env(make_env) else _built(make_env)
    if vector_envs.is_vector_env(built):
        return _register_vector(make_env, built, overrides)
    env_id = f"{API_NAMESPACE}/{_id_name(make_env)}-v0"
    gym.registry.pop(env_id, None)  # A new callable of the same name replaces the old one.
    gym.register(env_id, entry_point=make_env)
    return env_id


def _built(make_env: Any) -> Any:
    """What the env callable builds: a vector env is kept for training, a single env closed
    (the run builds its own, one per env of the batch)."""
    if not callable(make_env):
        raise ValueError(
            f"env={make_env!r} is neither a gymnasium id, an env callable, a vector env nor a "
            "NativeEnv."
        )
    built = make_env()
    if not isinstance(built, gym.vector.VectorEnv):
        with contextlib.suppress(Exception):
            built.close()
    return built


def _register_vector(source: Any, built: Any, overrides: dict[str, Any]) -> str:
    """Register a user's vector env for the run (`built` serves training; evaluation gets the
    callable's next one, or one rebuilt from the instance); its size sets the env counts."""
    count = built.num_envs
    for key in ("num_agents", "eval_agents"):
        if overrides.get(key, count) != count:
            raise ValueError(
                f"train(..., {key}={overrides[key]}): the vector env has {count} envs; leave "
                f"{key} unset or set it to {count}."
            )
        overrides[key] = count
    env_id = f"{API_NAMESPACE}/{_vector_env_name(built)}"
    if source is built:
        vector_envs.register(env_id, built)
    else:
        first = [built]
        vector_envs.register(env_id, lambda: first.pop() if first else source())
    return env_id


def _vector_env_name(built: Any) -> str:
    """The gymnasium id a vector env was made from, as given (`CartPole-v1` of
    `gym.make_vec("CartPole-v1")`, that of a `SyncVectorEnv`'s first env), or its class's name
    with `-v0` where it tells none (an `AsyncVectorEnv` keeps only its callables)."""
    specs = [getattr(built, "spec", None)]
    specs += [getattr(env, "spec", None) for env in getattr(built, "envs", [])[:1]]
    for spec in specs:
        env_id = getattr(spec, "id", None)
        if isinstance(env_id, str) and re.fullmatch(r"[\w./-]+", env_id):
            return env_id
    return f"{_id_name(type(built))}-v0"


EXPORT_FORMATS = ("onnx",)  # What `export` writes; training itself exports the SavedModel.


def export(
    run_dir: str, format: str = "onnx", path: str | None = None, checkpoint: str | None = None
) -> str:
    """Write a run's trained policy in a format that runs without TensorFlow; returns its path.

    `format="onnx"`: an ONNX model of the deterministic policy, converted from the SavedModel
    with tf2onnx, that onnxruntime runs on numpy arrays: the observation normalizer, a dict
    observation's action mask and the clipping to a Box action space's bounds are inside, and a
    recurrent policy takes its state and `reset` flag as inputs and returns its next state (see
    `agents.ppo.export_onnx`). Needs the `onnx` extra (`pip install -e ".[onnx]"`).

    Args:
        run_dir: A run directory (its `policy/`, else its newest checkpoint, as `load_policy`
            reads it), or a SavedModel directory.
        format: One of `EXPORT_FORMATS`: "onnx".
        path: The file to write (default: `<run_dir>/policy.onnx`).
        checkpoint: A checkpoint path whose policy to export instead of `policy/`.

    Raises:
        ValueError: An unknown format, a missing extra, or a run whose policy cannot be used
            (the message names it).
        FileNotFoundError: There is neither an exported policy nor a checkpoint there.
    """
    if format not in EXPORT_FORMATS:
        raise ValueError(
            f"export(format={format!r}): unknown format; accepted: {', '.join(EXPORT_FORMATS)}."
        )

    tf_loading.import_tensorflow()  # Quietly, before tf2onnx imports it.
    from agents.ppo import export_onnx  # Its converters are the onnx extra, loaded for this call.

    try:
        export_onnx.converter_modules()  # A missing extra is told before the policy loads.
        policy = load_policy(run_dir, checkpoint)
        target = path if path is not None else os.path.join(run_dir, "policy.onnx")
        return export_onnx.save_onnx(policy.saved_model, target)
    except UsageError as error:
        raise ValueError(str(error)) from None
