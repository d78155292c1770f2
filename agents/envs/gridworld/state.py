"""GridState: a batch of grid worlds as a `tf.nest` structure of tensors."""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf


class GridState(NamedTuple):
    """A batch of B worlds of W x H cells (the grid uint8 in native envs, the rest int32).

    Attributes:
        grid: [B, W, H, 4] cells indexed [x, y] as minigrid's `Grid.encode()`: object, color,
            state, and the contents of a box (`encoding.pack`, 0 for none).
        pos: [B, 2] the agent's (x, y).
        direction: [B] 0 right, 1 down, 2 left, 3 up.
        carried: [B, 4] the carried object as a cell; `EMPTY_CELL` when nothing is carried.
        step_count: [B] steps taken in the episode (minigrid's `step_count`).
        target: [B, 2] (object, color) whose pickup ends the episode with the goal's reward
            (KeyCorridor's and ObstructedMaze's ball); (0, 0) where reaching a goal cell is the
            task.
    """

    grid: tf.Tensor
    pos: tf.Tensor
    direction: tf.Tensor
    carried: tf.Tensor
    step_count: tf.Tensor
    target: tf.Tensor
