"""The agent's egocentric view: minigrid's `gen_obs_grid` and `Grid.encode(vis_mask)` as ops."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from agents.envs.gridworld.encoding import (
    CLOSED,
    DIRECTIONS,
    DOOR,
    OUTSIDE_CELL,
    VIEW_SIZE,
    WALL,
)
from agents.envs.gridworld.state import GridState

_AGENT = (VIEW_SIZE // 2, VIEW_SIZE - 1)  # Where the agent stands in its view (x, y).


def _view_offsets() -> np.ndarray:
    """[4, V, V, 2]: the world offset from the agent of view cell (x, y) for each direction.

    minigrid slices the V x V square ahead of the agent and rotates it left `direction + 1`
    times, so the view's up is the agent's forward and the view's right is the agent's right.
    """
    offsets = np.zeros([4, VIEW_SIZE, VIEW_SIZE, 2], np.int32)
    for direction, forward in enumerate(DIRECTIONS):
        right = np.array([-forward[1], forward[0]])
        for x in range(VIEW_SIZE):
            for y in range(VIEW_SIZE):
                offsets[direction, x, y] = forward * (_AGENT[1] - y) + right * (x - _AGENT[0])
    return offsets


_OFFSETS = _view_offsets()


def view_cells(state: GridState) -> tf.Tensor:
    """[B, V, V, 4]: the world's cells in the agent's view, grey walls beyond the grid."""
    size = tf.shape(state.grid)[1:3]
    where = state.pos[:, None, None, :] + tf.gather(_OFFSETS, state.direction)
    inside = tf.reduce_all((where >= 0) & (where < size), axis=-1)
    cells = tf.gather_nd(state.grid, tf.clip_by_value(where, 0, size - 1), batch_dims=1)
    cells = tf.cast(cells, tf.int32)
    return tf.where(inside[..., None], cells, tf.constant(OUTSIDE_CELL, tf.int32))


def _or(a, b):
    if a is False:
        return b
    if b is False:
        return a
    return a | b


def _and(mask, see_behind):
    if mask is False:
        return False
    return see_behind if mask is True else mask & see_behind


def visibility(cells: tf.Tensor) -> tf.Tensor:
    """[B, V, V] bool: minigrid's `Grid.process_vis` from the agent's cell.

    Light spreads along each row (nearest row first), left then right, into the cells beside and
    ahead of every visible cell that can be seen behind; walls and closed or locked doors stop it.
    The sweeps are unrolled over the view's 49 cells; the mask entries are Python constants until
    light reaches them, so the graph holds only the ops that can matter.
    """
    obj, door_state = cells[..., 0], cells[..., 2]
    see_behind = tf.logical_not((obj == WALL) | ((obj == DOOR) & (door_state >= CLOSED)))
    through = [[see_behind[:, x, y] for y in range(VIEW_SIZE)] for x in range(VIEW_SIZE)]
    mask = [[False] * VIEW_SIZE for _ in range(VIEW_SIZE)]
    mask[_AGENT[0]][_AGENT[1]] = True
    for y in reversed(range(VIEW_SIZE)):
        sweeps = (
            (range(VIEW_SIZE - 1), 1),  # Left to right.
            (reversed(range(1, VIEW_SIZE)), -1),  # Right to left.
        )
        for xs, step in sweeps:
            for x in xs:
                lit = _and(mask[x][y], through[x][y])
                mask[x + step][y] = _or(mask[x + step][y], lit)
                if y > 0:
                    mask[x + step][y - 1] = _or(mask[x + step][y - 1], lit)
                    mask[x][y - 1] = _or(mask[x][y - 1], lit)
    batch = tf.shape(cells)[0]
    columns = [tf.stack([_as_tensor(entry, batch) for entry in column], axis=1) for column in mask]
    return tf.stack(columns, axis=1)


def _as_tensor(entry, batch) -> tf.Tensor:
    if isinstance(entry, bool):
        return tf.fill([batch], entry)
    return entry


def observe(state: GridState, see_through_walls: bool) -> tf.Tensor:
    """[B, V, V, 3] int32: minigrid's `image` observation (object, color, state per view cell).

    Unseen cells are (0, 0, 0); the agent's own cell shows what it carries (empty if nothing).
    """
    world = view_cells(state)
    agent = np.zeros([VIEW_SIZE, VIEW_SIZE, 1], bool)
    agent[_AGENT] = True
    cells = tf.where(agent, state.carried[:, None, None, :], world)[..., :3]
    if see_through_walls:
        return cells
    visible = visibility(world)
    return tf.where(visible[..., None], cells, 0)
