"""Vector env backends: gymnasium's sync and async vector envs, EnvPool pools, a user's own.

Imports no TensorFlow. The `python` backend (today's `tools.BatchEnv` of single envs) lives in
`environments`; this module builds the others, each stepped through `tools.VectorBatchEnv`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from agents.envs.python import environments
from agents.envs.python.extras import optional_package

BACKENDS = ("python", "gymnasium-sync", "gymnasium-async", "envpool")
# EnvPool's own options for each wrapper it can stand in for (None: its envs as they are).
_ENVPOOL_WRAPPERS = {
    None: {},
    # `environments.make_env`'s atari stack: ALE v5 (sticky actions 0.25, 108k frames), frame
    # skip 4 max-pooled, up to 30 no-ops, 84x84 grayscale (INTER_AREA), 4 frames stacked, no
    # fire on reset, no life-loss episodes, rewards unclipped.
    "atari": dict(
        stack_num=4,
        frame_skip=4,
        noop_max=30,
        gray_scale=True,
        img_height=84,
        img_width=84,
        use_inter_area_resize=True,
        repeat_action_probability=0.25,
        use_fire_reset=False,
        episodic_life=False,
        reward_clip=False,
    ),
    # minigrid's ImgObsWrapper: the image of EnvPool's dict observation (see `transform`).
    "minigrid_image": {},
    # Its image and direction (minigrid's dict without the mission), packed by VectorBatchEnv.
    "minigrid_dict": {},
}

# Vector envs given to `agents.train(env=...)`: id -> factory(count) of a vector env.
_USER_FACTORIES: dict[str, Callable[[], Any]] = {}


def is_vector_env(value: Any) -> bool:
    """Whether `value` is a gymnasium vector env (EnvPool pools are)."""
    return isinstance(value, gym.vector.VectorEnv)


def register(env_id: str, vector_env_or_factory: Any) -> None:
    """Register a user's vector env (an instance, or a callable building one) under `env_id`.

    An instance serves training; the evaluation's vector env is rebuilt from its `env_fns`
    (gymnasium's `SyncVectorEnv` and `AsyncVectorEnv` keep them). A callable is called for each.
    """
    if not is_vector_env(vector_env_or_factory):
        _USER_FACTORIES[env_id] = vector_env_or_factory
        return
    instances = [vector_env_or_factory]

    def factory():
        if instances:
            return instances.pop()
        return _rebuilt(vector_env_or_factory)

    _USER_FACTORIES[env_id] = factory


def is_registered(env_id: str) -> bool:
    """Whether `env_id` names a user's vector env (see `register`)."""
    return env_id in _USER_FACTORIES


def make(
    env_id: str,
    count: int,
    backend: str,
    max_episode_steps: int | None = None,
    wrapper: str | None = None,
    seed: int | None = None,
) -> Any:
    """A vector env of `count` envs of `env_id` on `backend` ("gymnasium-sync",
    "gymnasium-async" or "envpool"); a user's registered vector env whatever the backend.

    The gymnasium backends build each env as the `python` backend does (`environments.make_env`,
    wrappers included), so only the stepping differs. EnvPool builds its own envs in C++
    threads, seeded with `seed` (env i with `seed + i`).

    Raises:
        ValueError: An unknown backend or id, an id EnvPool lacks (naming the backends that have
            it), a wrapper EnvPool cannot apply, or a user's factory that built no vector env.
    """
    if is_registered(env_id):
        return _user_vector_env(env_id)
    if backend in ("gymnasium-sync", "gymnasium-async"):
        environments.check_env(env_id, wrapper)
        constructor = functools.partial(environments.make_env, env_id, max_episode_steps, wrapper)
        kind = (
            gym.vector.SyncVectorEnv if backend == "gymnasium-sync" else gym.vector.AsyncVectorEnv
        )
        return kind([constructor] * count)
    if backend == "envpool":
        return _envpool(env_id, count, max_episode_steps, wrapper, seed)
    raise ValueError(f"Unknown env_backend {backend!r}; accepted: {', '.join(BACKENDS)}.")


def episode_limit(vector_env: Any) -> int | None:
    """The most steps an episode of `vector_env`'s envs can take, where they say so; else None."""
    config = getattr(getattr(vector_env, "spec", None), "config", None)
    if config is not None and getattr(config, "max_episode_steps", None):  # An EnvPool pool.
        return int(config.max_episode_steps)
    own = getattr(vector_env, "max_episode_steps", None)
    if isinstance(own, int) and own > 0:  # Gymnasium's own vector envs (`gym.make_vec`).
        return own
    envs = getattr(vector_env, "envs", None)
    if envs:  # SyncVectorEnv: its envs themselves.
        limits = [environments.episode_limit(env) for env in envs]
        return None if None in limits else max(limits)
    env_fns = getattr(vector_env, "env_fns", None)
    if env_fns:  # AsyncVectorEnv: a spec with a wrapper's lambda does not leave its process.
        env = env_fns[0]()
        try:
            return environments.episode_limit(env)
        finally:
            env.close()
    try:  # Asked in the env processes (a missing name would end them).
        limits = [environments.spec_limit(spec) for spec in vector_env.get_attr("spec")]
        if None in limits and all(vector_env.call("has_wrapper_attr", "max_steps")):
            limits = [environments.steps_limit(s) for s in vector_env.get_attr("max_steps")]
    except Exception:  # A vector env without get_attr or call.
        return None
    return None if None in limits or not limits else max(limits)


def envpool_id(env_id: str) -> str | None:
    """EnvPool's name of gymnasium's `env_id` (Atari drops `ALE/`), or None if it lacks it."""
    envpool = _envpool_module()
    if envpool is None:
        return None
    name = env_id.removeprefix("ALE/")
    return name if name in envpool.list_all_envs() else None


def _envpool_module() -> Any:
    """EnvPool (an optional package: the `envpool` extra), or None where it is not installed."""
    try:
        return optional_package("envpool", "envpool", "env_backend='envpool'")
    except ValueError:
        return None


def _envpool(env_id, count, max_episode_steps, wrapper, seed) -> Any:
    envpool = optional_package("envpool", "envpool", "env_backend='envpool'")
    name = envpool_id(env_id)
    if name is None:
        raise ValueError(
            f"EnvPool has no {env_id!r}; it steps on env_backend python, gymnasium-sync or "
            "gymnasium-async."
        )
    if wrapper not in _ENVPOOL_WRAPPERS:
        raise ValueError(
            f"env_backend='envpool' does not apply env_wrapper={wrapper!r}; it steps on "
            "env_backend python, gymnasium-sync or gymnasium-async."
        )
    options = dict(_ENVPOOL_WRAPPERS[wrapper])
    if max_episode_steps:
        options["max_episode_steps"] = max_episode_steps
    seed = 0 if seed is None else int(seed)
    with warnings.catch_warnings():  # Its float64 bounds cast to float32: nothing for a user.
        warnings.filterwarnings("ignore", message=".*precision lowered", category=UserWarning)
        pool = envpool.make(name, env_type="gymnasium", num_envs=count, seed=seed, **options)
        for space in ("single_observation_space", "single_action_space"):
            getattr(pool, space)  # Built when first read.
    return pool


def transform(vector_env: Any, backend: str, wrapper: str | None) -> tuple | None:
    """What makes the backend's observations those of the python backend, for
    `tools.VectorBatchEnv(transform=...)`: EnvPool stacks Atari frames first, the atari
    wrapper last ([84, 84, 4]); its MiniGrid observes a dict, minigrid_image its image,
    minigrid_dict its image and direction. None where they are the same already."""
    if backend != "envpool" or wrapper not in ("atari", "minigrid_image", "minigrid_dict"):
        return None
    space = vector_env.single_observation_space
    if wrapper == "minigrid_image":
        return (lambda observ: observ["image"]), space["image"]
    if wrapper == "minigrid_dict":
        keys = ("direction", "image")
        kept = gym.spaces.Dict({key: space[key] for key in keys})
        return (lambda observ: {key: observ[key] for key in keys}), kept
    channels_last = gym.spaces.Box(0, 255, (*space.shape[1:], space.shape[0]), np.uint8)
    return (lambda observ: np.ascontiguousarray(np.moveaxis(observ, 1, -1))), channels_last


def _user_vector_env(env_id: str) -> Any:
    built = _USER_FACTORIES[env_id]()
    if not is_vector_env(built):
        raise ValueError(
            f"The env callable of {env_id!r} returned {type(built).__name__}, not a vector env."
        )
    return built


def _rebuilt(vector_env: Any) -> Any:
    """A new vector env like `vector_env`, from the env constructors it keeps."""
    env_fns = getattr(vector_env, "env_fns", None)
    if not env_fns:
        raise ValueError(
            f"A {type(vector_env).__name__} instance serves training only, and evaluation needs "
            "its own: pass a callable that builds it, e.g. train(env=lambda: envpool.make(...))."
        )
    mode = getattr(vector_env, "autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
    return type(vector_env)(env_fns, autoreset_mode=mode)
