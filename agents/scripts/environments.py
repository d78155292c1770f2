"""Environment construction for the scripts; imports no TensorFlow (used in env processes)."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym


def make_env(env_id: str, max_episode_steps: int | None = None, **kwargs: Any) -> gym.Env:
    """Create a gymnasium environment with the wrappers PPO needs.

    Continuous actions are clipped to the action space by gymnasium's `ClipAction` (the Gaussian
    policy is unbounded).

    Raises:
        ValueError: If gymnasium does not know `env_id`, naming close matches.
    """
    try:
        env = gym.make(env_id, max_episode_steps=max_episode_steps, **kwargs)
    except gym.error.Error as error:
        raise ValueError(f"Unknown environment {env_id!r}: {error}") from None
    if isinstance(env.action_space, gym.spaces.Box):
        env = gym.wrappers.ClipAction(env)
    return env


def make_envs(env_id: str, count: int, max_episode_steps=None, processes: bool = False) -> list:
    """`count` environments, each in its own process when `processes` is True."""
    constructor = functools.partial(make_env, env_id, max_episode_steps)
    if not processes:
        return [constructor() for _ in range(count)]
    from agents.tools.wrappers import ExternalProcess

    envs = []
    try:
        for _ in range(count):
            envs.append(ExternalProcess(constructor))
    except BaseException:
        for env in envs:
            env.close()
        raise
    return envs
