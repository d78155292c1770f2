"""The agent a config names: `agent: ppo` or `agent: rnd_ppo`."""

from __future__ import annotations

from typing import Any

from agents.config import catalogue
from agents.ppo.algorithm import PPO


def make_agent(
    batch_env,
    config: Any,
    seed: int = 0,
    cross_replica_sum=None,
    world_size: int = 1,
    all_gather=None,
) -> PPO:
    """Build the agent of `config.agent` (one of `agents.config.catalogue.AGENTS`) on `batch_env`.

    Args:
        batch_env: The `InGraphBatchEnv` to learn on.
        config: The run's config (see `agents.config.schema`).
        seed: Seed of action sampling and minibatch shuffling.
        cross_replica_sum: Optional function summing a tensor over MPI ranks.
        world_size: Number of MPI ranks.
        all_gather: Optional function gathering tensors of all MPI ranks (see
            `agents.tools.mpi.mpi_all_gather`), for agents whose ranks share their rollouts.

    Returns:
        A `PPO` (or subclass) instance.

    Raises:
        ValueError: If `config.agent` names no agent, or a setting is invalid.
    """
    agent_class = catalogue.agent_class(config["agent"])
    return agent_class(batch_env, config, seed, cross_replica_sum, world_size, all_gather)
