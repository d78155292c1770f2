"""Transitions of minigrid's own envs, recorded as native states, for the parity tests.

Random actions alone rarely reach the rules that matter (a locked door with its key in hand,
the goal on the last step), so episodes start from minigrid states moved, as minigrid allows, to
where they do: the agent placed beside a door, key, ball, box, goal or lava and facing it,
sometimes carrying a key, ball or box (in KeyCorridor, sometimes the target ball itself),
sometimes one step from the time limit.
"""

from __future__ import annotations

import gymnasium as gym
import minigrid  # noqa: F401
import numpy as np
from minigrid.core.world_object import Ball, Box, Key

from agents.envs.gridworld.convert import stack, state_of
from agents.envs.gridworld.encoding import DIRECTIONS

COLORS = ("red", "green", "blue", "purple", "yellow", "grey")
INTERESTING = ("door", "key", "ball", "box", "goal", "lava")


def _random_object(env, rng):
    """A key, ball or box, never a twin of the object KeyCorridor asks for (minigrid tells the
    two apart by identity, which no encoding can)."""
    color = COLORS[rng.integers(6)]
    kind = rng.integers(3)
    if kind == 0:
        return Key(color)
    target = getattr(env, "obj", None)
    if kind == 1 and not (target is not None and (target.type, target.color) == ("ball", color)):
        return Ball(color)
    return Box(color, Key(COLORS[rng.integers(6)]) if rng.random() < 0.5 else None)


def _perturb(env, rng) -> None:
    """Move a freshly reset env to a state where an interaction rule applies."""
    grid = env.grid
    if rng.random() < 0.6:
        targets = [
            (x, y)
            for x in range(env.width)
            for y in range(env.height)
            if grid.get(x, y) is not None and grid.get(x, y).type in INTERESTING
        ]
        spots = []
        for x, y in targets:
            for direction, (dx, dy) in enumerate(DIRECTIONS):
                stand = (x - dx, y - dy)
                inside = 0 < stand[0] < env.width - 1 and 0 < stand[1] < env.height - 1
                if inside and grid.get(*stand) is None:
                    spots.append((stand, direction))
        if spots:
            stand, direction = spots[rng.integers(len(spots))]
            env.agent_pos, env.agent_dir = np.array(stand), int(direction)
    if rng.random() < 0.4:
        doors = [
            grid.get(x, y)
            for x in range(env.width)
            for y in range(env.height)
            if grid.get(x, y) is not None and grid.get(x, y).type == "door"
        ]
        target = getattr(env, "obj", None)  # KeyCorridor's ball.
        if target is not None and target.cur_pos is not None and rng.random() < 0.6:
            env.grid.set(*target.cur_pos, None)  # Carried, as if picked up: a state no
            target.cur_pos, env.carrying = None, target  # pickup without termination reaches.
        elif doors and rng.random() < 0.6:
            env.carrying = Key(doors[rng.integers(len(doors))].color)
        else:
            env.carrying = _random_object(env, rng)
    if rng.random() < 0.15:
        env.step_count = env.max_steps - int(rng.integers(1, 3))


def record(env_id: str, count: int, seed: int) -> dict[str, np.ndarray]:
    """`count` transitions of minigrid's `env_id`: states before and after (native form), the
    action, and minigrid's image, direction, reward, terminated and truncated."""
    env = gym.make(env_id).unwrapped
    rng = np.random.default_rng(seed)
    # Forward, pickup, drop and toggle more often than turns and done.
    weights = np.array([1, 1, 3, 2, 1, 2, 0.5])
    weights /= weights.sum()
    rows = {key: [] for key in ("action", "image", "direction", "reward", "terminated")}
    rows["truncated"] = []
    before, after = [], []
    env.reset(seed=seed)
    _perturb(env, rng)
    state = state_of(env)
    while len(before) < count:
        before.append(state)
        action = int(rng.choice(7, p=weights))
        observ, reward, terminated, truncated, _ = env.step(action)
        state = state_of(env)
        after.append(state)
        for key, value in zip(
            rows,
            (action, observ["image"], observ["direction"], reward, terminated, truncated),
        ):
            rows[key].append(value)
        if terminated or truncated:
            env.reset(seed=int(rng.integers(2**31)))
            _perturb(env, rng)
            state = state_of(env)
    result = {key: np.asarray(value) for key, value in rows.items()}
    result["reward"] = result["reward"].astype(np.float32)
    return {"before": stack(before), "after": stack(after), "max_steps": env.max_steps, **result}
