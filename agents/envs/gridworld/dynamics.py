"""minigrid's `MiniGridEnv.step` as a pure function of a batch of `GridState`s."""

from __future__ import annotations

import tensorflow as tf

from agents.envs.gridworld.encoding import (
    BALL,
    BOX,
    CLOSED,
    DIRECTIONS,
    DOOR,
    DROP,
    EMPTY,
    EMPTY_CELL,
    FLOOR,
    FORWARD,
    GOAL,
    KEY,
    LAVA,
    LEFT,
    LOCKED,
    OPEN,
    PICKUP,
    RIGHT,
    TOGGLE,
)
from agents.envs.gridworld.state import GridState


def _is(obj: tf.Tensor, *kinds: int) -> tf.Tensor:
    found = tf.zeros_like(obj, tf.bool)
    for kind in kinds:
        found |= obj == kind
    return found


def goal_reward(step_count: tf.Tensor, max_steps: int) -> tf.Tensor:
    """minigrid's `_reward`: `1 - 0.9 * step_count / max_steps`, in float64 as Python computes
    it, then float32."""
    fraction = tf.cast(step_count, tf.float64) / float(max_steps)
    return tf.cast(1.0 - 0.9 * fraction, tf.float32)


def _toggled(cell: tf.Tensor, carried: tf.Tensor) -> tf.Tensor:
    """The cell after `toggle`: a door opens or closes, a locked door opens with a key of its
    color, a box is replaced by its contents."""
    obj, color, state, contents = tf.unstack(cell, axis=-1)
    has_key = (carried[:, 0] == KEY) & (carried[:, 1] == color)
    door_state = tf.where(
        state == LOCKED,
        tf.where(has_key, OPEN, LOCKED),
        tf.where(state == OPEN, CLOSED, OPEN),
    )
    door = tf.stack([obj, color, door_state, contents], axis=-1)
    inner = contents - 1
    box_contents = tf.stack(
        [inner // 8, inner % 8, tf.zeros_like(inner), tf.zeros_like(inner)], axis=-1
    )
    opened_box = tf.where((contents > 0)[:, None], box_contents, tf.constant(EMPTY_CELL))
    toggled = tf.where((obj == DOOR)[:, None], door, cell)
    return tf.where((obj == BOX)[:, None], opened_box, toggled)


def step(
    state: GridState, action: tf.Tensor, max_steps: int
) -> tuple[GridState, tf.Tensor, tf.Tensor]:
    """One step of every world: the next states, rewards [B] float32 and terminations [B].

    As minigrid: the step count rises first; turns change the direction; forward moves onto
    empty, floor, goal, lava and open doors, and ends the episode on a goal (with `goal_reward`)
    or lava (reward 0); pickup takes a key, ball or box when nothing is carried; drop puts the
    carried object on an empty cell ahead; toggle acts on the cell ahead; done does nothing.
    Where `state.target` names an object (KeyCorridor, ObstructedMaze), a pickup action after
    which it is carried ends the episode with the goal's reward.

    Args:
        state: The worlds.
        action: [B] int actions 0-6 (minigrid's `Actions`).
        max_steps: The episode's step limit, which scales the goal's reward.
    """
    action = tf.cast(action, tf.int32)
    step_count = state.step_count + 1
    ahead = state.pos + tf.gather(DIRECTIONS, state.direction)
    cell = tf.cast(tf.gather_nd(state.grid, ahead, batch_dims=1), tf.int32)  # [B, 4]
    obj = cell[:, 0]
    empty_hands = state.carried[:, 0] == EMPTY

    direction = tf.where(action == LEFT, (state.direction + 3) % 4, state.direction)
    direction = tf.where(action == RIGHT, (state.direction + 1) % 4, direction)

    forward = action == FORWARD
    open_door = (obj == DOOR) & (cell[:, 2] == OPEN)
    moves = forward & (_is(obj, EMPTY, FLOOR, GOAL, LAVA) | open_door)
    pos = tf.where(moves[:, None], ahead, state.pos)
    at_goal = forward & (obj == GOAL)

    picks = (action == PICKUP) & _is(obj, KEY, BALL, BOX) & empty_hands
    drops = (action == DROP) & (obj == EMPTY) & tf.logical_not(empty_hands)
    toggles = action == TOGGLE
    empty = tf.broadcast_to(tf.constant(EMPTY_CELL), tf.shape(cell))
    new_cell = tf.where(picks[:, None], empty, cell)
    new_cell = tf.where(drops[:, None], state.carried, new_cell)
    new_cell = tf.where(toggles[:, None], _toggled(cell, state.carried), new_cell)
    carried = tf.where(picks[:, None], cell, state.carried)
    carried = tf.where(drops[:, None], empty, carried)
    grid = tf.tensor_scatter_nd_update(
        state.grid,
        tf.concat([tf.range(tf.shape(ahead)[0])[:, None], ahead], axis=1),
        tf.cast(new_cell, state.grid.dtype),
    )

    # minigrid's KeyCorridor and ObstructedMaze end the episode with the goal's reward on any
    # pickup action after which the target is carried: the one that takes it, and one made while
    # holding it. It compares identities; a world here holds one object of the target's kind and
    # colour.
    fetched = (
        (action == PICKUP)
        & (state.target[:, 0] > 0)
        & (carried[:, 0] == state.target[:, 0])
        & (carried[:, 1] == state.target[:, 1])
    )
    success = at_goal | fetched
    reward = tf.where(success, goal_reward(step_count, max_steps), 0.0)
    terminated = success | (forward & (obj == LAVA))
    next_state = GridState(grid, pos, direction, carried, step_count, state.target)
    return next_state, reward, terminated
