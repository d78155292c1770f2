"""The Python batch env of a run: a `tools.BatchEnv` of single envs, or a vector env's."""

from __future__ import annotations

from typing import Any

from agents import tools
from agents.envs.python import vector_envs
from agents.envs.python.environments import episode_limit, make_envs


def make_batch_env(config: Any, count: int, seed: int, name: str, built: list) -> Any:
    """`count` envs of `config.env` stepped as one batch, reset with `seed` (env i: seed + i).

    `config.env_backend` chooses what steps them: `python` a `tools.BatchEnv` (in processes with
    `env_processes`), the others a `tools.VectorBatchEnv`; a user's registered vector env is
    stepped as itself. The batch env is appended to `built` before its first reset, so that the
    caller closes it if that reset fails.

    Raises:
        ValueError: An unknown env id or wrapper, an id the backend lacks, or a vector env whose
            size is not `count`.
    """
    if config.env_backend == "python" and not vector_envs.is_registered(config.env):
        envs = make_envs(
            config.env, count, config.max_episode_steps, config.env_processes, config.env_wrapper
        )
        batch_env = tools.BatchEnv(
            envs, blocking=not config.env_processes, name=name, clip_actions=True
        )
        built.append(batch_env)
        batch_env.reset(seed=seed)
        for index, env in enumerate(envs):
            env.action_space.seed(seed + index)
        return batch_env
    vector_env = vector_envs.make(
        config.env, count, config.env_backend, config.max_episode_steps, config.env_wrapper, seed
    )
    batch_env = tools.VectorBatchEnv(
        vector_env,
        name=name,
        clip_actions=True,
        env_id=config.env.rpartition(":")[2],  # Without its module, as gymnasium names it.
        transform=vector_envs.transform(vector_env, config.env_backend, config.env_wrapper),
    )
    built.append(batch_env)
    if len(batch_env) != count:
        key = "num_agents" if name == "train" else "eval_agents"
        raise ValueError(
            f"The {name} vector env has {len(batch_env)} envs, but {key} is {count}: set "
            f"{key}={len(batch_env)}."
        )
    batch_env.reset(seed=seed)
    batch_env.action_space.seed(seed)
    return batch_env


def batch_episode_limit(batch_env: Any) -> int | None:
    """The most steps an episode of any env of `batch_env` can take, or None if unknown."""
    if isinstance(batch_env, tools.VectorBatchEnv):
        return vector_envs.episode_limit(batch_env.vector_env)
    limits = [episode_limit(batch_env[index]) for index in range(len(batch_env))]
    return None if None in limits else max(limits)
