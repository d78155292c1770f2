"""VectorBatchEnv: a gymnasium vector env (or an EnvPool pool) with `BatchEnv`'s interface."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from agents.tools import dict_observations, env_checks
from agents.tools.batch_env import BatchEnvError, Waiting
from agents.tools.dict_observations import MASK_KEY, PackedDict
from agents.tools.vector_failures import WORKER_ERROR, end_workers, failure, reissue

NEXT_STEP, SAME_STEP, DISABLED = "NextStep", "SameStep", "Disabled"


class VectorBatchEnv:
    """Step a gymnasium `VectorEnv` as a `BatchEnv`: the caller resets finished envs.

    A batch env shows the true final observation of every episode and leaves finished envs
    alone until the caller resets them (see `tools.simulate`). Vector envs reset by themselves,
    in one of gymnasium's three autoreset modes (`metadata["autoreset_mode"]`), each mapped to
    that contract here:

    - `NextStep` (gymnasium's default, and EnvPool's): a step returns the final observation; the
      vector env would reset the env in its next step, ignoring its action. The caller's `reset`
      resets it now instead, through `reset(options={"reset_mask": ...})` (EnvPool:
      `reset(env_ids)`), so the next step steps it.
    - `SameStep`: a step returns the first observation of the next episode and the final one in
      `info["final_obs"]`; the final one is returned, the other kept for the caller's `reset`.
    - `Disabled`: nothing resets by itself; the caller's `reset` resets through `reset_mask`.

    Args:
        vector_env: A gymnasium `VectorEnv`, e.g. `gym.make_vec(...)`, `SyncVectorEnv`,
            `AsyncVectorEnv` or an EnvPool pool made with `env_type="gymnasium"`.
        name: The batch's name in messages, e.g. "train" gives "Train vector env (id)".
        clip_actions: Clip actions into a Box action space before stepping (see `BatchEnv`).
        env_id: The env's id in messages; read from the vector env's spec when None.
        transform: Optional (function, single observation space): the function applied to every
            batch of observations as the vector env returns it (e.g. EnvPool's channels-first
            Atari frames made channels-last, or the image of its MiniGrid dict), and the space
            of one observation it gives.

    Raises:
        ValueError: If `vector_env` is not a vector env, or its autoreset mode is unknown.
    """

    def __init__(
        self,
        vector_env: Any,
        name: str | None = None,
        clip_actions: bool = False,
        env_id: str | None = None,
        transform: tuple[Callable[[np.ndarray], np.ndarray], gym.Space] | None = None,
    ) -> None:
        if not isinstance(getattr(vector_env, "num_envs", None), int):
            raise ValueError(
                f"{type(vector_env).__name__} is not a vector env: expected a gymnasium VectorEnv "
                "(with num_envs, single_observation_space and single_action_space)."
            )
        self._env = vector_env
        self._count = vector_env.num_envs
        self.observation_space = vector_env.single_observation_space
        self._transform = None
        if transform is not None:
            self._transform, self.observation_space = transform
        if isinstance(self.observation_space, gym.spaces.Dict):
            self._pack_dicts()
        self.action_space = vector_env.single_action_space
        self._mask = None  # Where a packed action mask lies, and the choices each entry has.
        if isinstance(self.observation_space, PackedDict):
            field = dict_observations.mask_field(self.observation_space)
            nvec = getattr(self.action_space, "nvec", None)
            groups = None if nvec is None else np.asarray(nvec).reshape(-1).tolist()
            self._mask = None if field is None else (field, groups)
        self._far_limits = None
        if isinstance(self.observation_space, gym.spaces.Box):
            self._far_limits = env_checks.far_limits(self.observation_space)
        self._clip_actions = clip_actions
        # Its workers log their failures as warnings, which name the env: read in `_call`.
        self._async = isinstance(
            getattr(vector_env, "unwrapped", vector_env), gym.vector.AsyncVectorEnv
        )
        self.autoreset_mode = autoreset_mode(vector_env)
        self._envpool = is_envpool(vector_env)
        self._id = env_id or _spec_id(vector_env)
        self._name = name
        self._first = {}  # SameStep: index -> first observation of its next episode.
        self._failed = False  # Whether a call raised (an async env is then ended, not closed).
        self._waiting: tuple[str, float] | None = None

    def __len__(self) -> int:
        return self._count

    @property
    def vector_env(self) -> Any:
        """The vector env stepped."""
        return self._env

    def step(self, actions) -> tuple:
        """Step all environments with one action each (see `BatchEnv.step`).

        Returns:
            Tuple (observ, reward, terminated, truncated, info): batched numpy arrays, the final
            observation of every episode that ended, and the vector env's info dict.

        Raises:
            ValueError: If an action does not fit the action space.
            BatchEnvError: If the vector env raised or returned results that do not fit.
        """
        actions = env_checks.batch_actions(
            actions, self.action_space, self._count, self._clip_actions
        )
        result = self._call("step", self._env.step, actions)
        if not isinstance(result, tuple) or len(result) != 5:
            raise BatchEnvError(self.env_name(), 0, "step", env_checks.step_problem(result, None))
        observ, reward, terminated, truncated, info = result
        if self._transform is not None:  # Before anything reads it: it may be a dict.
            observ = self._transform(observ)
        done = np.logical_or(terminated, truncated)
        if self.autoreset_mode == SAME_STEP and np.any(done):
            observ = self._final_observations(np.array(observ), done, info)
        arrays = env_checks.batch_arrays(
            observ, reward, terminated, truncated, self._count, self.observation_space,
            self._far_limits,
        )  # fmt: skip
        if arrays is None:
            index, text = env_checks.batch_problem(
                observ, reward, terminated, truncated, self._count, self.observation_space
            )
            raise BatchEnvError(self.env_name(index), index or 0, "step", text)
        self._refuse_empty_masks(arrays[0], np.arange(self._count), "step")
        return (*arrays, info)

    def _refuse_empty_masks(self, observ: np.ndarray, indices: np.ndarray, method: str) -> None:
        """An action mask that allows no action is refused, naming its env: a policy can only
        send a forbidden action then."""
        if self._mask is None:
            return
        row = dict_observations.first_empty_mask(self._mask[0], observ, self._mask[1])
        if row is not None:
            index = int(indices[row])
            field = self._mask[0]
            mask = observ[row, field.start : field.start + field.size].astype(int).tolist()
            text = f"an {MASK_KEY!r} that allows no action: {mask}"
            raise BatchEnvError(self.env_name(index), index, method, text)

    def reset(self, indices=None, seed: int | None = None) -> np.ndarray:
        """Reset some or all environments (see `BatchEnv.reset`); environment i is seeded with
        `seed + i` (an EnvPool pool is seeded when made: `seed` is not used).

        Returns:
            The first observations of the reset environments, in the order of `indices`.
        """
        if indices is None:
            indices = np.arange(self._count)
        indices = np.asarray(indices, np.int64).reshape(-1)
        if len(indices) == 0:
            return np.zeros((0, *self.observation_space.shape), self.observation_space.dtype)
        # SameStep: an env that finished has started its next episode already (unless seeded).
        kept = [i for i in indices.tolist() if i in self._first and seed is None]
        fresh = np.array([i for i in indices.tolist() if i not in kept], np.int64)
        if len(fresh) == self._count and set(fresh.tolist()) == set(range(self._count)):
            self._first.clear()
            return self._checked_reset(self._reset_all(seed)[indices], indices)
        observ = {i: self._first.pop(i) for i in kept}
        if len(fresh):
            observ.update(zip(fresh.tolist(), self._reset_some(fresh, seed)))
        return self._checked_reset(np.stack([observ[i] for i in indices.tolist()]), indices)

    def get_attr(self, name: str) -> tuple:
        """Attribute `name` of every sub-environment (through its wrappers).

        Raises:
            AttributeError: If the sub-environments, or the vector env, do not have it.
        """
        if self._envpool or not hasattr(self._env, "call"):
            raise AttributeError(name)
        # Asked first: a missing attribute ends an AsyncVectorEnv's worker processes.
        if not all(self._env.call("has_wrapper_attr", name)):
            raise AttributeError(name)
        return tuple(self._env.get_attr(name))

    def waiting(self) -> Waiting | None:
        """The vector env call in progress, if any; safe to call from another thread."""
        waiting = self._waiting
        if waiting is None:
            return None
        method, since = waiting
        return Waiting(self.env_name(), method, time.monotonic() - since)

    def env_name(self, index: int | None = None) -> str:
        """How messages name the batch, or environment `index` of it."""
        name = f"{self._name.capitalize()} vector env" if self._name else "Vector env"
        if index is not None:
            name = f"{name}, environment {index}"
        return name + (f" ({self._id})" if self._id else "")

    def close(self) -> None:
        """Close the vector env; a failing `close` is one warning line (see `BatchEnv.close`)."""
        try:
            if self._async and self._failed:
                # After a worker failed (or died) the others' pipes are in no known state: a
                # polite close would wait on them for ever. Their processes are ended instead.
                end_workers(self._env)
            else:
                self._env.close()
        except Exception as error:
            env_checks.warn_close_failed(self.env_name(), error)

    def _reset_all(self, seed: int | None) -> np.ndarray:
        if self._envpool:
            result = self._call("reset", self._env.reset)
        else:
            result = self._call("reset", self._env.reset, seed=seed)
        return self._observ_of(result, "reset")

    def _reset_some(self, indices: np.ndarray, seed: int | None) -> np.ndarray:
        """Reset the envs at `indices` alone; their observations in the order of `indices`."""
        if self._envpool:
            result = self._call("reset", self._env.reset, indices.astype(np.int32))
            observ, info = self._observ_of(result, "reset"), result[1]
            row = {int(env_id): row for row, env_id in enumerate(info["env_id"])}
            return np.stack([observ[row[int(i)]] for i in indices])
        mask = np.zeros(self._count, bool)
        mask[indices] = True
        seeds = None
        if seed is not None:
            seeds = [int(seed) + i if mask[i] else None for i in range(self._count)]
        result = self._call("reset", self._env.reset, seed=seeds, options={"reset_mask": mask})
        return self._observ_of(result, "reset")[indices]

    def _observ_of(self, result: Any, method: str) -> np.ndarray:
        if not isinstance(result, tuple) or len(result) != 2:
            text = env_checks.reset_problem(result, self.observation_space)
            raise BatchEnvError(self.env_name(), 0, method, text)
        observ = result[0]
        return np.asarray(observ if self._transform is None else self._transform(observ))

    def _checked_reset(self, observ: np.ndarray, indices: np.ndarray) -> np.ndarray:
        for row, index in enumerate(indices.tolist()):
            problem = env_checks.observ_problem(observ[row], self.observation_space)
            if problem:
                raise BatchEnvError(self.env_name(index), index, "reset", problem)
        self._refuse_empty_masks(observ, indices, "reset")
        return observ

    def _final_observations(self, observ: np.ndarray, done: np.ndarray, info: dict) -> np.ndarray:
        """SameStep: keep the first observations of finished envs, return their final ones."""
        final, present = info.get("final_obs"), info.get("_final_obs", done)
        for index in np.flatnonzero(done).tolist():
            if final is None or not present[index]:
                raise BatchEnvError(
                    self.env_name(index),
                    index,
                    "step",
                    "an episode's end without info['final_obs'], which the SameStep autoreset "
                    "mode gives",
                )
            self._first[index] = observ[index].copy()
            observ[index] = self._transformed_one(final[index])
        return observ

    def _transformed_one(self, observ: Any) -> np.ndarray:
        """One env's observation (a final one) transformed as batches are."""
        if self._transform is None:
            return observ
        if isinstance(observ, Mapping):
            batch = {key: np.asarray(value)[None] for key, value in observ.items()}
        else:
            batch = np.asarray(observ)[None]
        return self._transform(batch)[0]

    def _pack_dicts(self) -> None:
        """Dict observations travel packed (`tools.dict_observations`), after any transform."""
        space, inner = self.observation_space, self._transform
        self.observation_space = PackedDict(space)

        def pack(observ: Any) -> np.ndarray:
            return dict_observations.pack(space, observ if inner is None else inner(observ), True)

        self._transform = pack

    def _call(self, method: str, function: Callable, *args, **kwargs) -> Any:
        """`function(*args, **kwargs)`, its failure as a `BatchEnvError` naming the env that
        raised where that can be told."""
        self._waiting = (method, time.monotonic())
        logged = []
        try:
            if not self._async:
                return function(*args, **kwargs)
            with warnings.catch_warnings(record=True) as logged:
                warnings.simplefilter("always")
                try:
                    return function(*args, **kwargs)
                finally:
                    reissue([w for w in logged if not WORKER_ERROR.search(str(w.message))])
        except Exception as error:  # Not KeyboardInterrupt: that is the user's.
            self._failed = True
            index, cause = failure(self._env, error, [str(w.message) for w in logged])
            raise BatchEnvError(self.env_name(index), index or 0, method, cause) from error
        finally:
            self._waiting = None


def autoreset_mode(vector_env: Any) -> str:
    """The vector env's autoreset mode ("NextStep", "SameStep" or "Disabled").

    Raises:
        ValueError: If the vector env names another one.
    """
    mode = (getattr(vector_env, "metadata", None) or {}).get("autoreset_mode", NEXT_STEP)
    mode = getattr(mode, "value", mode)
    if mode not in (NEXT_STEP, SAME_STEP, DISABLED):
        raise ValueError(
            f"Unknown autoreset_mode {mode!r} of {type(vector_env).__name__}; accepted: "
            f"{NEXT_STEP}, {SAME_STEP}, {DISABLED} (gymnasium.vector.AutoresetMode)."
        )
    return mode


def is_envpool(vector_env: Any) -> bool:
    """Whether `vector_env` is an EnvPool pool (its partial reset takes env ids)."""
    return any(kind.__name__ == "EnvPoolMixin" for kind in type(vector_env).__mro__)


def _spec_id(vector_env: Any) -> str | None:
    env_id = getattr(getattr(vector_env, "spec", None), "id", None)
    return env_id if isinstance(env_id, str) else None
