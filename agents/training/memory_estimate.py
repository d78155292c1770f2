"""A run's memory, estimated before the agent allocates it, against what the machine has.

The rollout buffer holds `rollout_length` steps of every env: the observation (uint8 pixels as
they are, anything normalized as float32), the action, the recurrent state and a dozen float32
scalars (log-probability, reward, flags, advantage, values per stream). The update reads the
whole rollout into its targets and minibatches, about twice the buffer again, so the estimate is
three buffers plus `BASE_BYTES` for TensorFlow, the networks and the envs. A run whose estimate
exceeds the memory available (Linux's `MemAvailable`) is refused before anything is allocated,
with the estimate in its line: on a machine without swap it would otherwise die by the OOM
killer, or thrash with it.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from agents.config.errors import UsageError

BASE_BYTES = 1 << 30  # TensorFlow's runtime, the networks and the envs: about a GiB.
_SCALARS = 12  # float32 scalars per step and env (see the module docstring).
_GIB = float(1 << 30)


def step_bytes(config: Any, observation_space: gym.Space, action_space: gym.Space) -> int:
    """Bytes the rollout buffer holds per env and step."""
    pixels = observation_space.dtype == np.uint8 and not config["normalize_observ"]
    observ = math.prod(observation_space.shape) * (1 if pixels else 4)
    action = 4 * max(1, math.prod(action_space.shape or (1,)))
    state = 4 * config["recurrent_units"] if "recurrent" in str(config["network"]) else 0
    return observ + action + state + 4 * _SCALARS


def estimate(config: Any, observation_space: gym.Space, action_space: gym.Space) -> int:
    """The bytes a run of `config` needs, estimated (see the module docstring)."""
    per_step = step_bytes(config, observation_space, action_space)
    buffer = per_step * config["rollout_length"] * config["num_agents"]
    return 3 * buffer + BASE_BYTES


def available() -> int | None:
    """The memory the machine can give a process now (`MemAvailable`), or None where unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check(config: Any, observation_space: gym.Space, action_space: gym.Space) -> None:
    """Raise UsageError when the run's estimate exceeds the memory available."""
    need, have = estimate(config, observation_space, action_space), available()
    if have is None or need <= have:
        return
    raise UsageError(
        f"This run needs about {need / _GIB:.1f} GiB (a rollout of {config['rollout_length']} "
        f"steps x {config['num_agents']} envs, estimated with the update's copies), and the "
        f"machine has {have / _GIB:.1f} GiB available: lower rollout_length or num_agents."
    )
