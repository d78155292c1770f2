"""minigrid's own envs, and native states read from them: the encoding, agent, carried object
and step count."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from agents.envs.gridworld.encoding import EMPTY_CELL, pack
from agents.envs.python.extras import optional_package

# Envs (or their bases) whose episode ends when the agent picks up `env.obj` (their `step` says so).
FETCH_ENVS = ("KeyCorridorEnv", "ObstructedMazeEnv")


def make_minigrid(env_id: str):
    """minigrid's own env of `env_id`, unwrapped.

    Raises:
        ValueError: minigrid is not installed (native MiniGrid reads its rules' constants and
            makes its layouts with it).
    """
    optional_package("minigrid", "minigrid", f"Native {env_id}")  # Registers the MiniGrid ids.
    return gym.make(env_id).unwrapped


def _cell(obj) -> tuple[int, int, int, int]:
    """One object as a native cell: minigrid's `encode()` and a box's contents."""
    if obj is None:
        return EMPTY_CELL
    obj_index, color, state = obj.encode()
    inner = obj.contains if obj.type == "box" else None
    return (obj_index, color, state, 0 if inner is None else pack(*inner.encode()[:2]))


def state_of(env) -> dict[str, np.ndarray]:
    """The native state of one minigrid env (unwrapped or not), without a batch axis.

    Args:
        env: A reset minigrid env.

    Returns:
        A dict of the `GridState` fields as int32 arrays: grid [W, H, 4], pos [2], direction [],
        carried [4], step_count [], target [2].
    """
    env = env.unwrapped
    # The cells of `Grid.encode()`, read from the grid's flat list (row-major in y) at once.
    cells = [EMPTY_CELL if obj is None else _cell(obj) for obj in env.grid.grid]
    grid = np.asarray(cells, np.int32).reshape(env.height, env.width, 4).transpose(1, 0, 2)
    target = (0, 0)
    if any(kind.__name__ in FETCH_ENVS for kind in type(env).__mro__):
        target = tuple(int(v) for v in env.obj.encode()[:2])
    return {
        "grid": grid,
        "pos": np.asarray(env.agent_pos, np.int32),
        "direction": np.asarray(env.agent_dir, np.int32),
        "carried": np.asarray(_cell(env.carrying), np.int32),
        "step_count": np.asarray(env.step_count, np.int32),
        "target": np.asarray(target, np.int32),
    }


def stack(states: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """A batch of `state_of`'s states (all of one env id)."""
    return {key: np.stack([state[key] for state in states]) for key in states[0]}
