"""A trained policy as a user deploys and evaluates it: `load_policy` and `evaluate`."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from agents import envs
from agents.config import files
from agents.config.errors import UsageError
from agents.envs import registry
from agents.ppo import checkpoint_policy
from agents.runtime import tf_loading
from agents.tools import dict_observations
from agents.tools.success import success_rate


class Policy:
    """A trained policy: maps observations to actions (numpy), as deployed.

    Actions are the policy's mode by default, or drawn from its distribution with
    `deterministic=False`; both are clipped to a Box action space's bounds. A recurrent policy
    carries its state from call to call, as it did in its episodes (`reset()` starts new
    episodes; a call with another batch size starts them too); for a feed-forward policy the
    state is empty and calls are independent. Sampled and deterministic calls share that state.

    Args:
        saved_model: The loaded SavedModel that `agents.ppo.export.export_policy` wrote.
        seed: Seed of the sampled actions: the same seed gives the same sequence of samples
            for the same calls; None draws one from the operating system.

    Attributes:
        saved_model: The loaded SavedModel (`step`, `sample_step`, `value`, `initial_state`,
            `unclipped` and the `serving_default` and `tflite` signatures).
        observation_shape: The shape of one observation (packed, for a dict observation).
        observation_dict: The dict space of a policy that observes dicts (it takes a dict of one
            observation or of batches, or the packed vector), else None.
    """

    def __init__(self, saved_model: Any, seed: int | None = None) -> None:
        self.saved_model = saved_model
        (spec,) = saved_model.signatures["serving_default"].structured_input_signature[1].values()
        self.observation_shape = tuple(spec.shape.as_list()[1:])
        self.observation_dict = _observation_dict(saved_model)
        self._state = None
        # Draws one stateless seed per sampled call: the exported function holds no generator.
        self._seeds = np.random.default_rng(seed)

    def reset(self) -> None:
        """Start new episodes: the next call begins from the initial state."""
        self._state = None

    def __call__(self, observation: Any, deterministic: bool = True) -> np.ndarray:
        """Actions for `observation`: one observation `[*shape]` or a batch `[batch, *shape]`.

        Args:
            observation: Raw observations, as the environment gives them.
            deterministic: The policy's mode if True, else a sample of its distribution.

        Raises:
            ValueError: The observation has another shape, or an entry that is NaN or infinite.
        """
        batch, single = self._batch(observation)
        state, reset = self._carried(len(batch))
        if deterministic:
            action, self._state = self.saved_model.step(batch, reset, state)
        else:
            seed = self._seeds.integers(0, 2**31 - 1, size=2).astype(np.int32)
            action, self._state = self._exported("sample_step")(batch, reset, state, seed)
        action = action.numpy()
        return action[0] if single else action

    def value(self, observation: Any) -> np.ndarray:
        """The value estimate of `observation` (one, or a batch), float32 numpy.

        The value of the environment's reward stream (the extrinsic one of RND agents), in the
        units the value head learned (the scaled reward's with `normalize_reward`). A recurrent
        policy values the observation from its carried state, as the next call would act on
        it, and keeps that state: `value(o)` then `policy(o)` acts as `policy(o)` alone does.

        Raises:
            ValueError: The observation has another shape, or an entry that is NaN or infinite.
        """
        batch, single = self._batch(observation)
        state, reset = self._carried(len(batch))
        value = self._exported("value")(batch, reset, state).numpy()
        return value[0] if single else value

    def _carried(self, size: int) -> tuple[Any, Any]:
        """The state to act from for a batch of `size`, and where episodes start (all or none)."""
        first = self._state is None or int(self._state.shape[0]) != size
        state = self._state
        if first:
            state = self.saved_model.initial_state(np.int32(size))
        return state, np.full([size], first)

    def _exported(self, name: str) -> Any:
        """The SavedModel's function `name`, which policies exported before it existed lack."""
        function = getattr(self.saved_model, name, None)
        if function is None:
            raise ValueError(
                f"This SavedModel has no {name!r}: it was exported before sampling and values "
                "were; load_policy(run_dir, checkpoint=...) exports it again from a checkpoint."
            )
        return function

    def _batch(self, observation: Any) -> tuple[np.ndarray, bool]:
        """The observation as a float32 batch, and whether it was a single one; checked."""
        if self.observation_dict is not None and isinstance(observation, Mapping):
            observation = _pack(self.observation_dict, observation)
        batch = np.asarray(observation, np.float32)
        single = batch.shape == self.observation_shape
        if single:
            batch = batch[None]
        if batch.shape[1:] != self.observation_shape:
            shape = ", ".join(map(str, self.observation_shape))
            raise ValueError(
                f"Observation of shape {np.shape(observation)}: the policy takes "
                f"{self.observation_shape} or a batch (batch, {shape})."
            )
        bad = np.argwhere(~np.isfinite(batch))
        if len(bad):
            index = tuple(int(i) for i in (bad[0][1:] if single else bad[0]))
            raise ValueError(
                f"Observation entry {index} is {batch[tuple(bad[0])]}: the policy acts on "
                "finite observations only."
            )
        return batch, single


def _observation_dict(saved_model: Any) -> Any:
    """The dict space a SavedModel's policy observes (packed), or None."""
    function = getattr(saved_model, "observation_dict", None)
    text = function().numpy().decode() if function is not None else ""
    if not text:
        return None

    return dict_observations.from_description(text)


def _pack(space: Any, observation: Mapping) -> np.ndarray:
    """A dict of one observation, or of batches, packed as training packed it."""
    key, sub = next(iter(space.spaces.items()))
    value = np.asarray(observation.get(key, np.zeros(sub.shape)))
    batched = value.ndim > len(sub.shape)
    return dict_observations.pack(space, observation, batched=batched)


def load_policy(run_dir: str, checkpoint: str | None = None, seed: int | None = None) -> Policy:
    """The policy a training run exported to `<run_dir>/policy` (or a SavedModel directory).

    A run without `policy/` (stopped before it was written), or any run given a `checkpoint`,
    gives the policy of that checkpoint (the newest readable one by default), exported as
    training exports it; its environment is built once to read its spaces. A `policy/` that
    cannot be loaded (a copy cut short, a damaged file) is named in one warning line and the
    newest checkpoint used instead. `seed` seeds the policy's sampled actions (see `Policy`).

    Raises:
        FileNotFoundError: There is neither an exported policy nor a checkpoint there.
        ValueError: The checkpoint or the run's environment cannot be used, or a SavedModel
            directory without a checkpoint beside it cannot be loaded (the message says).
    """
    tf_loading.import_tensorflow()  # Quietly: no TensorFlow log lines in the caller's output.
    from agents.ppo import restore  # TensorFlow's: imported after its settings, above.

    path = os.path.join(run_dir, "policy")
    if not os.path.isfile(os.path.join(path, "saved_model.pb")):
        path = run_dir
    if checkpoint is None and os.path.isfile(os.path.join(path, "saved_model.pb")):
        try:
            return Policy(restore.load_saved_model(path), seed)
        except Exception as error:  # noqa: BLE001  (protobuf, OS and TensorFlow errors alike)
            _unloadable(path, run_dir, error)
    return Policy(_from_checkpoint(run_dir, checkpoint, restore.restore_saved_model), seed)


def _unloadable(path: str, run_dir: str, error: Exception) -> None:
    """Warn that the SavedModel at `path` cannot be loaded, where the run's checkpoints can
    stand in for it; raise ValueError naming it where they cannot."""
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
    what = f"The exported policy {path} cannot be loaded ({type(error).__name__}: {reason})"
    if path == run_dir or not os.path.isdir(os.path.join(run_dir, "checkpoints")):
        raise ValueError(f"{what}; export it again from its run's checkpoint.") from None
    print(
        f"warning: {what}; using the run's newest checkpoint instead (delete {path} and resume "
        "the run with the train command to export it again).",
        file=sys.stderr,
        flush=True,
    )


def _from_checkpoint(run_dir: str, checkpoint: str | None, restore_saved_model: Callable) -> Any:
    """The SavedModel of the run's checkpoint (`agents.ppo.restore.restore_saved_model`)."""
    try:
        checkpoint_policy.find_checkpoint(run_dir, checkpoint)
    except UsageError as error:
        raise FileNotFoundError(f"No exported policy in {run_dir!r}. {error}") from None
    try:
        config = files.load_config(run_dir)
        env = checkpoint_policy.make_run_env(config)
        try:
            saved_model, _ = restore_saved_model(run_dir, checkpoint, env, config)
        finally:
            env.close()
    except UsageError as error:
        raise ValueError(str(error)) from None
    return saved_model


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """What `evaluate` returns.

    Attributes:
        returns: Each episode's undiscounted return, in order.
        lengths: Each episode's number of steps.
        success_score: An episode whose return exceeds it is a success (see `success_rate`);
            None where no success score was given or found.
    """

    returns: list[float]
    lengths: list[int]
    success_score: float | None = None

    @property
    def success_rate(self) -> float:
        """The share of episodes whose return exceeds `success_score` (nan without one)."""
        return success_rate(self.returns, self.success_score)

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def std(self) -> float:
        return float(np.std(self.returns))


def play_episode(policy: Policy, env: Any, seed: int, render: bool = False) -> tuple[float, list]:
    """One episode of the deterministic policy from `env.reset(seed=seed)`.

    Returns:
        The return, and the frames (`env.render()` before the first step and after each one)
        when `render` is True, else one None per step and one before them.
    """
    observation, _ = env.reset(seed=seed)
    policy.reset()
    frames, total, done = [env.render() if render else None], 0.0, False
    while not done:
        observation, reward, terminated, truncated, _ = env.step(policy(observation))
        frames.append(env.render() if render else None)
        total += float(reward)
        done = terminated or truncated
    return total, frames


def evaluate(
    policy: Policy | str,
    env: str | Any | Callable[[], Any],
    episodes: int = 10,
    seed: int = 0,
    deterministic: bool = True,
    parallel: int = 16,
    success_score: float | None = None,
) -> Evaluation:
    """Run `episodes` episodes of the policy on an environment.

    Episodes run `parallel` at a time, each in its own copy of the env, with one policy call
    per step for all of them (a deterministic policy scores each episode as it would alone).

    Args:
        policy: A `Policy`, or a run directory (or SavedModel directory) to load one from.
        env: A gymnasium id, a gymnasium environment, or a callable that builds one; or a
            native env (`agents.envs.NativeEnv`: an instance, a class built without arguments,
            or an id registered with `agents.envs.register`), played as a gymnasium env of one
            (`agents.envs.NativeGymEnv`). An env given as an instance plays one episode at a
            time.
        episodes: Number of episodes, each reset with seed `seed + index`.
        seed: Seed of the first episode.
        deterministic: Act by the policy's mode (True) or sample its actions as in training.
        parallel: Most episodes played at once (copies of the env built from an id or callable).
        success_score: An episode whose return exceeds it is a success
            (`Evaluation.success_rate`); None takes the run's own `success_score` where
            `policy` is a run directory, else there is no success rate.

    Returns:
        An `Evaluation` with the returns and lengths of the episodes, and their success rate.

    Raises:
        ValueError: `episodes` or `parallel` is below 1, the env's observations do not fit
            the policy, or the run directory's config.yaml cannot be read for its success score.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}.")
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}.")
    if not isinstance(policy, Policy):
        if success_score is None:
            success_score = _run_success_score(policy)
        policy = load_policy(policy)
    made = isinstance(env, str) or (callable(env) and not isinstance(env, gym.Env))

    def build() -> Any:
        return _as_gym_env(env() if made and not isinstance(env, str) else env)

    envs = [build()]
    returns, lengths = [], []
    try:
        while made and len(envs) < min(parallel, episodes):
            another = build()
            if any(another is known for known in envs):  # A callable giving one instance.
                break
            envs.append(another)
        for start in range(0, episodes, len(envs)):
            seeds = range(seed + start, seed + min(start + len(envs), episodes))
            totals, steps = _play_at_once(policy, envs[: len(seeds)], seeds, deterministic)
            returns += totals
            lengths += steps
    finally:
        if made:
            for each in envs:
                each.close()
    return Evaluation(returns, lengths, success_score)


def _run_success_score(run_dir: str) -> float | None:
    """The `success_score` of the run whose config.yaml is in `run_dir` (None without one)."""
    if not os.path.isfile(os.path.join(run_dir, files.CONFIG_FILE)):
        return None
    try:
        return files.load_config(run_dir).success_score
    except UsageError as error:
        raise ValueError(f"{error} (pass success_score= to evaluate without it)") from None


def _play_at_once(
    policy: Policy, envs: list[Any], seeds: Any, deterministic: bool = True
) -> tuple[list[float], list[int]]:
    """One episode in each of `envs` at once, from `env.reset(seed=...)` with `seeds` in order:
    one policy call per step for the episodes still running (a finished one stays still).

    Returns:
        Each episode's return and number of steps.
    """
    observations = [env.reset(seed=int(each))[0] for env, each in zip(envs, seeds, strict=True)]
    policy.reset()
    totals, steps, running = [0.0] * len(envs), [0] * len(envs), [True] * len(envs)
    while any(running):
        actions = policy(_stacked(observations), deterministic=deterministic)
        for index, env in enumerate(envs):
            if running[index]:
                observation, reward, terminated, truncated, _ = env.step(actions[index])
                observations[index] = observation
                totals[index] += float(reward)
                steps[index] += 1
                running[index] = not (terminated or truncated)
    return totals, steps


def _stacked(observations: list[Any]) -> Any:
    """One batch of observations (a dict of batches for dict observations)."""
    if isinstance(observations[0], Mapping):
        return {key: _stacked([each[key] for each in observations]) for key in observations[0]}
    return np.stack([np.asarray(each) for each in observations])


def _as_gym_env(env: Any) -> Any:
    """A gymnasium env for `env`: an id (gymnasium's, else a native one), a native env, or a
    gymnasium env as it is."""
    if isinstance(env, str):
        try:
            return gym.make(env)
        except gym.error.Error:
            if env not in registry.native_ids() and ":" not in env:
                raise
            env = registry.make_native(env)
    native = sys.modules.get("agents.envs.native_env")  # Loaded if env is one.
    if native is not None and isinstance(env, native.NativeEnv):
        return envs.NativeGymEnv(env)
    return env
