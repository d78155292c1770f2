"""The agent a config names: `agent: ppo` or `agent: rnd_ppo`."""

from __future__ import annotations

from typing import Any

from agents.ppo.algorithm import PPO
from agents.ppo.rnd_agent import RNDPPO

AGENTS = {"ppo": PPO, "rnd_ppo": RNDPPO}


def make_agent(
    batch_env,
    config: Any,
    seed: int = 0,
    cross_replica_sum=None,
    world_size: int = 1,
    all_gather=None,
) -> PPO:
    """Build the agent of `config.agent` on `batch_env`.

    Args:
        batch_env: The `InGraphBatchEnv` to learn on.
        config: Configuration (see `agents.scripts.configs.default`).
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
    name = config["agent"]
    if name not in AGENTS:
        raise ValueError(f"Unknown agent {name!r}; accepted: {', '.join(AGENTS)}.")
    return AGENTS[name](batch_env, config, seed, cross_replica_sum, world_size, all_gather)
