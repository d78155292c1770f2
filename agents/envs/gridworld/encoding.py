"""minigrid's integer encoding of objects, colors, door states, directions and actions."""

from __future__ import annotations

import numpy as np

# OBJECT_TO_IDX of minigrid.core.constants.
UNSEEN, EMPTY, WALL, FLOOR, DOOR, KEY, BALL, BOX, GOAL, LAVA, AGENT = range(11)
# COLOR_TO_IDX: red, green, blue, purple, yellow, grey.
RED, GREEN, BLUE, PURPLE, YELLOW, GREY = range(6)
# STATE_TO_IDX of doors.
OPEN, CLOSED, LOCKED = range(3)
# minigrid.core.actions.Actions.
LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, DONE = range(7)
NUM_ACTIONS = 7
# DIR_TO_VEC: right (+x), down (+y), left, up.
DIRECTIONS = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], np.int32)
VIEW_SIZE = 7  # minigrid's default agent_view_size.

# A cell is (object, color, state, contents): the first three are `Grid.encode()`'s; contents is
# what a box holds (0: nothing, else `pack(object, color)`), which minigrid's encoding leaves out.
CHANNELS = 4
EMPTY_CELL = (EMPTY, 0, 0, 0)
OUTSIDE_CELL = (WALL, GREY, 0, 0)  # `Grid.slice` fills cells beyond the grid with grey walls.


def pack(obj, color):
    """A box's contents as one integer (0 is reserved for an empty box)."""
    return 1 + obj * 8 + color
