"""The agent a config names: `agent: ppo` or `agent: rnd_ppo`."""

from __future__ import annotations

from typing import Any

from agents.config import catalogue
from agents.ppo.algorithm import PPO
from agents.tools.collectives import ONE_PROCESS, Ranks


def make_agent(
    batch_env,
    config: Any,
    seed: int = 0,
    ranks: Ranks = ONE_PROCESS,
) -> PPO:
    """Build the agent of `config.agent` (one of `agents.config.catalogue.AGENTS`) on `batch_env`.

    Args:
        batch_env: The `InGraphBatchEnv` to learn on.
        config: The run's config (see `agents.config.schema`).
        seed: Seed of action sampling and minibatch shuffling.
        ranks: The MPI ranks (`agents.tools.collectives.Ranks`; default: one process).

    Returns:
        A `PPO` (or subclass) instance.

    Raises:
        ValueError: If `config.agent` names no agent, or a setting is invalid.
    """
    agent_class = catalogue.agent_class(config["agent"])
    return agent_class(batch_env, config, seed, ranks)
