"""BatchEnv: several gymnasium environments stepped as one batch."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agents.tools.wrappers import ExternalProcessError


class BatchEnvError(RuntimeError):
    """An environment of the batch raised in `step` or `reset`, or its process died.

    The message names the environment (index and id) and holds the original traceback: the
    child's for an `ExternalProcess`. The original exception is the `__cause__`.

    Attributes:
        index: The environment's index in the batch.
    """

    def __init__(self, index: int, env_id: str | None, method: str, error: BaseException):
        self.index = index
        if isinstance(error, ExternalProcessError):
            detail = str(error)  # The child's traceback, or how the child died.
        else:
            detail = "".join(traceback.format_exception(error)).rstrip()
        name = f"Environment {index}" + (f" ({env_id})" if env_id else "")
        super().__init__(f"{name} failed in {method}: {detail}")


class BatchEnv:
    """Combine environments into one batched environment.

    Environments with the same observation and action spaces are stepped together, results
    stacked into numpy arrays. With `ExternalProcess` environments and `blocking`
    False, all of them are asked to step before any result is awaited, so they run in parallel.

    Episodes are not reset automatically: the caller resets finished environments (see
    `tools.simulate`), so the true final observation of every episode is seen.

    Args:
        envs: The environments.
        blocking: Step environments one after another instead of in parallel.

    Raises:
        ValueError: If there are no environments or their spaces differ.
    """

    def __init__(self, envs: Sequence, blocking: bool) -> None:
        if not envs:
            raise ValueError("BatchEnv needs at least one environment.")
        self._envs = list(envs)
        self._blocking = blocking
        observ_space = self._envs[0].observation_space
        action_space = self._envs[0].action_space
        for index, env in enumerate(self._envs):
            if env.observation_space != observ_space:
                raise ValueError(
                    f"Environment {index} has observation space {env.observation_space}, "
                    f"but environment 0 has {observ_space}; all must match."
                )
            if env.action_space != action_space:
                raise ValueError(
                    f"Environment {index} has action space {env.action_space}, "
                    f"but environment 0 has {action_space}; all must match."
                )
        self.observation_space = observ_space
        self.action_space = action_space
        # Read now: a dead child process could not tell its id any more.
        self._ids = [getattr(getattr(env, "spec", None), "id", None) for env in self._envs]

    def __len__(self) -> int:
        return len(self._envs)

    def __getitem__(self, index: int):
        return self._envs[index]

    def step(self, actions):
        """Step all environments with one action each.

        Args:
            actions: Array of shape [len(self), *action_shape].

        Returns:
            Tuple of batched numpy arrays (observ, reward, terminated, truncated) and the list of
            info dicts.

        Raises:
            ValueError: If an action does not fit the action space (names the env and the value).
            BatchEnvError: If an environment raised, or its process died.
        """
        actions = np.asarray(actions)
        if len(actions) != len(self._envs):
            raise ValueError(f"Got {len(actions)} actions for {len(self._envs)} environments.")
        index = _first_invalid_action(self.action_space, actions)
        if index is not None:
            raise ValueError(
                f"Invalid action for environment {index}: {actions[index]!r} is not in "
                f"{self.action_space}."
            )
        indices = range(len(self._envs))
        if self._blocking:
            results = [self._call(i, "step", self._envs[i].step, actions[i]) for i in indices]
        else:
            promises = [
                self._call(i, "step", self._envs[i].step, actions[i], blocking=False)
                for i in indices
            ]
            results = [self._call(i, "step", promises[i]) for i in indices]
        observs, rewards, terminated, truncated, infos = zip(*results)
        return (
            np.stack(observs),
            np.asarray(rewards, np.float32),
            np.asarray(terminated, bool),
            np.asarray(truncated, bool),
            list(infos),
        )

    def reset(self, indices=None, seed=None) -> np.ndarray:
        """Reset some or all environments.

        Args:
            indices: Indices of the environments to reset; all when None.
            seed: Optional base seed; environment i is seeded with `seed + i`.

        Returns:
            Stacked initial observations of the reset environments.

        Raises:
            BatchEnvError: If an environment raised, or its process died.
        """
        if indices is None:
            indices = range(len(self._envs))
        indices = [int(i) for i in np.asarray(indices).reshape(-1)]
        seeds = [None if seed is None else int(seed) + i for i in indices]
        if self._blocking:
            results = [
                self._call(i, "reset", self._envs[i].reset, seed=s) for i, s in zip(indices, seeds)
            ]
        else:
            promises = [
                self._call(i, "reset", self._envs[i].reset, seed=s, blocking=False)
                for i, s in zip(indices, seeds)
            ]
            results = [self._call(i, "reset", p) for i, p in zip(indices, promises)]
        if not results:
            return np.zeros((0,) + self.observation_space.shape, self.observation_space.dtype)
        return np.stack([observ for observ, _ in results])

    def close(self) -> None:
        """Close all environments."""
        for env in self._envs:
            env.close()

    def _call(self, index: int, method: str, function: Callable, *args, **kwargs) -> Any:
        """`function(*args, **kwargs)` of environment `index`, its failure as `BatchEnvError`."""
        try:
            return function(*args, **kwargs)
        except Exception as error:  # Not KeyboardInterrupt: that is the user's, not the env's.
            raise BatchEnvError(index, self._ids[index], method, error) from error


def _first_invalid_action(space: gym.Space, actions: np.ndarray) -> int | None:
    """Index of the first action outside `space`, checked for the whole batch at once."""
    count = len(actions)
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete)):
        low = space.start
        high = space.start + (space.n if isinstance(space, gym.spaces.Discrete) else space.nvec)
        if actions.shape[1:] != space.shape:
            return 0
        valid = (actions == np.round(actions)) & (actions >= low) & (actions < high)
    elif isinstance(space, gym.spaces.Box):
        if actions.shape[1:] != space.shape:
            return 0
        valid = (actions >= space.low) & (actions <= space.high)
    else:
        valid = np.array([space.contains(action) for action in actions])
    valid = valid.reshape(count, -1).all(axis=1)
    return None if valid.all() else int(np.argmin(valid))
