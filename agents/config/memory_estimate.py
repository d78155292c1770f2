"""A run's memory, estimated before the agent allocates it, against what the machine has.

The rollout buffer holds `rollout_length` steps of every env: the observation (uint8 pixels as
they are, anything normalized as float32), the action, the recurrent state and a dozen float32
scalars (log-probability, reward, flags, advantage, values per stream). The update reads the
whole rollout into its targets and minibatches, about twice the buffer again, so the estimate is
three buffers, plus the environments (a Python env with its wrappers, or a native env's state
and observation, per env of training and evaluation), E3B's inverse covariance per env where the
agent has one, and `BASE_BYTES` for TensorFlow and the networks. A run whose estimate exceeds
the memory available (Linux's `MemAvailable`) is refused before anything is allocated, with the
estimate in its line: on a machine without swap it would otherwise die by the OOM killer, or
thrash with it.

It is checked twice: when the config is read, before TensorFlow loads and before any env is
built, with the smallest observation and action any space has (a lower bound, so that an absurd
`num_agents` is refused in a fraction of a second); and with the env's own spaces once the
evaluation envs (the few) are built, before the training envs.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from agents.config.errors import UsageError

BASE_BYTES = 1 << 30  # TensorFlow's runtime and the networks: about a GiB.
_SCALARS = 12  # float32 scalars per step and env (see the module docstring).
# A gymnasium env with its wrappers and its share of the batch's arrays (a bare Pendulum-v1 is
# ~5 KiB, CartPole-v1 ~0.6 KiB).
PYTHON_ENV_BYTES = 16 << 10
_GIB = float(1 << 30)


def step_bytes(
    config: Any, observation_space: gym.Space | None = None, action_space: gym.Space | None = None
) -> int:
    """Bytes the rollout buffer holds per env and step; without the spaces, the fewest any
    space takes (one float32 observation, one action)."""
    action = 4 * max(1, math.prod(action_space.shape or (1,))) if action_space else 4
    state = 4 * config["recurrent_units"] if "recurrent" in str(config["network"]) else 0
    return _observation_bytes(config, observation_space) + action + state + 4 * _SCALARS


def _observation_bytes(config: Any, space: gym.Space | None) -> int:
    if space is None:
        return 4
    pixels = space.dtype == np.uint8 and not config["normalize_observ"]
    return math.prod(space.shape) * (1 if pixels else 4)


def estimate(
    config: Any, observation_space: gym.Space | None = None, action_space: gym.Space | None = None
) -> int:
    """The bytes a run of `config` needs, estimated (see the module docstring)."""
    per_step = step_bytes(config, observation_space, action_space)
    buffer = per_step * config["rollout_length"] * config["num_agents"]
    envs = config["num_agents"] + config["eval_agents"]
    if config["native_env"]:  # Its state and observation, about twice the observation.
        per_env = 2 * _observation_bytes(config, observation_space)
    else:
        per_env = PYTHON_ENV_BYTES
    return 3 * buffer + envs * per_env + _bonus_bytes(config) + BASE_BYTES


def _bonus_bytes(config: Any) -> int:
    """E3B's inverse covariance per training env (float32 [d, d]), twice: the variable and the
    rollout's copy of it."""
    if config["agent"] != "rnd_ppo" or config["bonus"] != "e3b":
        return 0
    return 2 * 4 * config["e3b_embedding_size"] ** 2 * config["num_agents"]


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


def check(
    config: Any, observation_space: gym.Space | None = None, action_space: gym.Space | None = None
) -> None:
    """Raise UsageError when the run's estimate exceeds the memory available (without the
    spaces, when even its lower bound does)."""
    need, have = estimate(config, observation_space, action_space), available()
    if have is None or need <= have:
        return
    at_least = "" if observation_space is not None else "at least "
    raise UsageError(
        f"This run needs {at_least}about {need / _GIB:.1f} GiB (num_agents="
        f"{config['num_agents']} envs x rollout_length={config['rollout_length']} steps, "
        f"estimated with the update's copies), and the machine has {have / _GIB:.1f} GiB "
        "available: lower num_agents or rollout_length."
    )
