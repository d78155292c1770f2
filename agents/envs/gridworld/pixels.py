"""The `minigrid_pixels` frames as ops: the agent's view as a 56x56 grayscale image.

minigrid renders its partial view (`RGBImgPartialObsWrapper`) tile by tile, each tile a function
of the cell's object (its encoding), whether it is visible (highlighted) and whether the agent
stands there (drawn facing up); gymnasium's `GrayscaleObservation` then weighs each pixel's RGB.
The view's `image` encoding holds all of that (unseen cells are 0; the agent is at the bottom
centre), so a frame is a lookup: every tile is rendered once by minigrid's own `render_tile`,
converted as gymnasium converts it, and gathered per cell inside the compiled call.
"""

from __future__ import annotations

import functools

import numpy as np
import tensorflow as tf

from agents.envs.gridworld.encoding import UNSEEN, VIEW_SIZE
from agents.envs.python.extras import optional_package

TILE = 8  # `minigrid_pixels`' tile size: 7 cells x 8 = 56 pixels.
_OBJECTS, _COLORS, _STATES = 11, 6, 3
_GRAY = np.array([0.2125, 0.7154, 0.0721])  # gymnasium's GrayscaleObservation.


def _code(obj, color, state):
    return (obj * _COLORS + color) * _STATES + state


@functools.cache
def tile_table(tile_size: int = TILE) -> np.ndarray:
    """[codes, 2, tile, tile] uint8: the grayscale tile of every cell encoding, without and with
    the agent on it, as minigrid renders the partial view (visible cells highlighted)."""
    core = optional_package("minigrid", "minigrid", "MiniGrid's pixels").core
    grid, world_object = core.grid, core.world_object

    table = np.zeros([_OBJECTS * _COLORS * _STATES, 2, tile_size, tile_size], np.uint8)
    for obj in range(_OBJECTS):
        for color in range(_COLORS):
            for state in range(_STATES):
                try:
                    cell = world_object.WorldObj.decode(obj, color, state) if obj > 1 else None
                except (KeyError, ValueError, AssertionError):
                    continue  # Not an object minigrid makes (e.g. the agent's own index).
                for agent in (0, 1):
                    # `Grid.render` stores each tile into a uint8 frame (truncating).
                    rgb = grid.Grid.render_tile(
                        cell,
                        agent_dir=3 if agent else None,
                        highlight=obj != UNSEEN,
                        tile_size=tile_size,
                    ).astype(np.uint8)
                    gray = np.sum(np.multiply(rgb, _GRAY), axis=-1).astype(np.uint8)
                    table[_code(obj, color, state), agent] = gray
    return table


def frames(image: tf.Tensor, tile_size: int = TILE) -> tf.Tensor:
    """[B, V * tile, V * tile, 1] uint8 frames of [B, V, V, 3] view encodings (`view.observe`)."""
    image = tf.cast(image, tf.int32)
    codes = _code(image[..., 0], image[..., 1], image[..., 2])
    agent = np.zeros([VIEW_SIZE, VIEW_SIZE], np.int32)
    agent[VIEW_SIZE // 2, VIEW_SIZE - 1] = 1
    index = codes * 2 + agent  # Rows of the table flattened over (code, agent).
    table = tf.constant(tile_table(tile_size).reshape(-1, tile_size, tile_size))
    tiles = tf.gather(table, index)  # [B, x, y, py, px]
    tiles = tf.transpose(tiles, [0, 2, 3, 1, 4])  # [B, y, py, x, px]
    size = VIEW_SIZE * tile_size
    return tf.reshape(tiles, [-1, size, size, 1])
