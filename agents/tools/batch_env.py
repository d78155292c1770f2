"""BatchEnv: several gymnasium environments stepped as one batch."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from agents.tools import env_checks
from agents.tools.wrappers import ExternalProcessError


class BatchEnvError(RuntimeError):
    """An environment of the batch raised in `step` or `reset`, its process died, or it returned
    a result that does not fit the API or its observation space.

    The message names the environment (batch, index and id) and holds the original traceback:
    the child's for an `ExternalProcess`. The original exception is the `__cause__`. A bad
    result is one line: what came and what was expected.

    Args:
        name: The environment's name in messages (see `BatchEnv.env_name`).
        index: The environment's index in the batch.
        method: "step" or "reset".
        error: The exception raised, or the description of a bad result.

    Attributes:
        index: The environment's index in the batch.
    """

    def __init__(self, name: str, index: int, method: str, error: BaseException | str):
        self.index = index
        if isinstance(error, str):  # A bad result: the message says all.
            super().__init__(f"{name} returned from {method} {error}.")
            return
        if isinstance(error, ExternalProcessError):
            detail = str(error)  # The child's traceback, or how the child died.
        else:
            detail = "".join(traceback.format_exception(error)).rstrip()
        super().__init__(f"{name} failed in {method}: {detail}")


class Waiting(NamedTuple):
    """An environment call that has not returned yet (see `BatchEnv.waiting`)."""

    name: str  # E.g. "Train environment 1 (Pendulum-v1)".
    method: str  # "step" or "reset".
    seconds: float  # Since the call began.


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
        name: The batch's name in messages, e.g. "train" gives "Train environment 1 (id)".
        clip_actions: Clip actions into a Box action space before stepping, as gymnasium's
            `ClipAction` does (for unbounded policies such as a Gaussian), with one `np.clip` for
            the whole batch (the wrapper costs about 2 us per env and step). NaN stays NaN and is
            refused as an invalid action.

    Raises:
        ValueError: If there are no environments or their spaces differ.
    """

    def __init__(
        self, envs: Sequence, blocking: bool, name: str | None = None, clip_actions: bool = False
    ) -> None:
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
        self._far_limits = None  # What an observation may be, when checked at every step.
        if isinstance(observ_space, gym.spaces.Box):
            self._far_limits = env_checks.far_limits(observ_space)
        self.action_space = action_space
        self._clip_actions = clip_actions
        # Read now: a dead child process could not tell its id any more.
        self._ids = [getattr(getattr(env, "spec", None), "id", None) for env in self._envs]
        self._name = name
        self._waiting: tuple[int, str, float] | None = None  # Read by watchdog threads.

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
            BatchEnvError: If an environment raised, its process died, or it returned a bad
                result (see `env_checks`).
        """
        actions = env_checks.batch_actions(
            actions, self.action_space, len(self._envs), self._clip_actions
        )
        indices = range(len(self._envs))
        if self._blocking:
            results = [self._call(i, "step", self._envs[i].step, actions[i]) for i in indices]
        else:
            since = time.monotonic()  # The envs run in parallel: each has waited since now.
            promises = [
                self._call(i, "step", self._envs[i].step, actions[i], blocking=False)
                for i in indices
            ]
            results = [self._call(i, "step", promises[i], since=since) for i in indices]
        stacked = env_checks.stacked_step(results, self.observation_space, self._far_limits)
        if stacked is None:  # Something is wrong: find the env and say what.
            self._check(indices, "step", results, env_checks.step_problem)
            raise BatchEnvError(self.env_name(0), 0, "step", "results that do not stack")
        observ, reward, terminated, truncated, infos = stacked
        return observ, reward, terminated, truncated, list(infos)

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
            since = time.monotonic()
            promises = [
                self._call(i, "reset", self._envs[i].reset, seed=s, blocking=False)
                for i, s in zip(indices, seeds)
            ]
            results = [self._call(i, "reset", p, since=since) for i, p in zip(indices, promises)]
        self._check(indices, "reset", results, env_checks.reset_problem)
        if not results:
            return np.zeros((0,) + self.observation_space.shape, self.observation_space.dtype)
        return np.stack([observ for observ, _ in results])

    def waiting(self) -> Waiting | None:
        """The environment call in progress, if any; safe to call from another thread."""
        waiting = self._waiting
        if waiting is None:
            return None
        index, method, since = waiting
        return Waiting(self.env_name(index), method, time.monotonic() - since)

    def env_name(self, index: int) -> str:
        """How messages name environment `index`: "Train environment 1 (Pendulum-v1)"."""
        name = f"{self._name.capitalize()} environment" if self._name else "Environment"
        env_id = self._ids[index]
        return f"{name} {index}" + (f" ({env_id})" if env_id else "")

    def close(self) -> None:
        """Close all environments; one whose `close` raises gets a one-line warning on stderr.

        The run's results are written by then: a failing `close` must not turn it into a failure.
        The environments are then let go (the batch keeps its size): graphs that traced this
        batch may keep it alive in reference cycles until the process ends, where an extension
        reports the objects it still holds (ale_py lists every ALE instance on stderr).
        """
        for index, env in enumerate(self._envs):
            if env is None:  # Closed already.
                continue
            try:
                env.close()
            except Exception as error:
                env_checks.warn_close_failed(self.env_name(index), error)
        self._envs = [None] * len(self._envs)

    def _call(
        self,
        index: int,
        method: str,
        function: Callable,
        *args,
        since: float | None = None,
        **kwargs,
    ) -> Any:
        """`function(*args, **kwargs)` of environment `index`, its failure as `BatchEnvError`.

        While it runs, `waiting` reports it, as waited for since `since` (default: now).
        """
        self._waiting = (index, method, time.monotonic() if since is None else since)
        try:
            return function(*args, **kwargs)
        except Exception as error:  # Not KeyboardInterrupt: that is the user's, not the env's.
            raise BatchEnvError(self.env_name(index), index, method, error) from error
        finally:
            self._waiting = None

    def _check(self, indices, method: str, results: list, problem: Callable) -> None:
        """Raise `BatchEnvError` for the first env whose result `problem` finds wrong."""
        for index, result in zip(indices, results):
            text = problem(result, self.observation_space)
            if text:
                raise BatchEnvError(self.env_name(index), index, method, text)
