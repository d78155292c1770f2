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


def _row_sweep(incoming: int, see_behind: int) -> tuple[int, int]:
    """minigrid's two sweeps of one view row: the row's visible cells and the cells of the next
    (farther) row they light, from the row's incoming light and its see-behind cells (bit x is
    cell x)."""
    mask = [bool(incoming >> x & 1) for x in range(VIEW_SIZE)]
    clear = [bool(see_behind >> x & 1) for x in range(VIEW_SIZE)]
    below = [False] * VIEW_SIZE
    sweeps = ((range(VIEW_SIZE - 1), 1), (reversed(range(1, VIEW_SIZE)), -1))
    for xs, step in sweeps:
        for x in xs:
            if mask[x] and clear[x]:
                mask[x + step] = below[x + step] = below[x] = True
    pack = lambda bits: sum(1 << x for x, bit in enumerate(bits) if bit)  # noqa: E731
    return pack(mask), pack(below)


def _sweep_table() -> np.ndarray:
    """[2**V * 2**V] int32: `_row_sweep` of every (incoming, see_behind) pair, the row's visible
    cells in bits 0-7 and the next row's incoming light in bits 8-15 (one lookup, one word)."""
    count = 1 << VIEW_SIZE
    table = np.zeros([count * count], np.int32)
    for incoming in range(count):
        for see_behind in range(count):
            visible, below = _row_sweep(incoming, see_behind)
            table[incoming * count + see_behind] = visible | below << 8
    return table


_SWEEPS = _sweep_table()


def visibility(cells: tf.Tensor) -> tf.Tensor:
    """[B, V, V] bool: minigrid's `Grid.process_vis` from the agent's cell.

    Light spreads along each row (nearest row first), left then right, into the cells beside and
    ahead of every visible cell that can be seen behind; walls and closed or locked doors stop it.
    A row's outcome depends only on its incoming light and its see-behind cells (7 bits each), so
    each row is one lookup in a table of minigrid's sweep over all 2**14 cases (`_row_sweep`).
    """
    obj, door_state = cells[..., 0], cells[..., 2]
    see_behind = tf.logical_not((obj == WALL) | ((obj == DOOR) & (door_state >= CLOSED)))
    weights = tf.constant([1 << x for x in range(VIEW_SIZE)], tf.int32)[None, :, None]
    row_bits = tf.reduce_sum(tf.cast(see_behind, tf.int32) * weights, axis=1)  # [B, y]
    table = tf.constant(_SWEEPS)
    incoming = tf.fill(tf.shape(row_bits)[:1], 1 << _AGENT[0])
    rows = [None] * VIEW_SIZE
    for y in reversed(range(VIEW_SIZE)):
        swept = tf.gather(table, incoming * (1 << VIEW_SIZE) + row_bits[:, y])
        rows[y] = tf.bitwise.bitwise_and(swept, 0xFF)
        incoming = tf.bitwise.right_shift(swept, 8)
    rows = tf.stack(rows, axis=1)  # [B, y] bits of x.
    shifts = tf.range(VIEW_SIZE)[None, :, None]
    return tf.bitwise.bitwise_and(tf.bitwise.right_shift(rows[:, None, :], shifts), 1) > 0


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
