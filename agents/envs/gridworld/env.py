"""MiniGridEnv: a minigrid id as a `NativeEnv` (symbolic view, minigrid's rules and layouts)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.gridworld import compact, convert, dynamics, layouts, live_bank, pixels, view
from agents.envs.gridworld.encoding import EMPTY_CELL, NUM_ACTIONS, VIEW_SIZE
from agents.envs.gridworld.state import GridState
from agents.envs.native_env import NativeEnv
from agents.envs.registry import MINIGRID_IDS

IDS = MINIGRID_IDS  # MultiRoom-N4-S5: v0 has six rooms, v1 four.
WRAPPERS = (None, "minigrid_image", "minigrid_pixels")  # What native MiniGrid observes.


class MiniGridEnv(NativeEnv):
    """A minigrid env as TensorFlow ops: minigrid's `image` observation (7x7 cells of object,
    color and state, as float32), its seven actions, its rewards and time limit.

    Resets draw from a bank of layouts made by minigrid's generator (`layouts.open_bank`),
    each rendered into its grid in the compiled call: every layout once, in an order the batch's
    seed permutes, before any is drawn again, so any stretch of resets repeats no more layouts
    than minigrid's own resets would. A bank not cached yet grows while the run trains (its first
    chunk built before), and draws come from the layouts built so far (`live_bank`).

    A `max_episode_steps` below the env's own `max_steps` truncates earlier (as gymnasium's
    `TimeLimit` does around minigrid); the goal's reward still scales with the env's own
    `max_steps`, as minigrid's does.

    With `wrapper="minigrid_pixels"` the observation is instead that wrapper's 56x56 grayscale
    frame of the same view (`pixels.frames`, equal to the wrapper's frame for frame), so the
    pixel agent trains native envs unchanged.

    Args:
        env_id: One of `IDS`.
        layout_bank: Number of layouts in the bank; None for the id's own
            (`layouts.default_size`), or the size for `layout_draws`.
        layout_seed: Seed of the first layout (the bank is `reset(seed=layout_seed + k)`).
        wrapper: None or "minigrid_image" (the symbolic view), or "minigrid_pixels".
        layout_draws: The most layouts the run draws (`layouts.size_for` sizes the bank by it
            when `layout_bank` is None).

    Raises:
        ValueError: For another `wrapper`.
    """

    def __init__(
        self,
        env_id: str,
        layout_bank: int | None = None,
        layout_seed: int = 0,
        wrapper: str | None = None,
        layout_draws: int | None = None,
    ) -> None:
        if wrapper not in WRAPPERS:
            raise ValueError(
                f"Native {env_id} observes through env_wrapper minigrid_image or "
                f"minigrid_pixels, not {wrapper!r}."
            )
        original = convert.make_minigrid(env_id)
        self.env_id = env_id
        self.max_steps = int(original.max_steps)
        self.see_through_walls = bool(original.see_through_walls)
        self._max_episode_steps = self.max_steps
        self.pixels = wrapper == "minigrid_pixels"
        # Views of byte cells as float32 need no check of each step's values. Frames keep it:
        # without that reduction, XLA fused their rendering into each of their consumers in the
        # pixel agent's call, which then ran about a tenth slower.
        self.observations_bounded = not self.pixels
        size = VIEW_SIZE * pixels.TILE
        shape = (size, size, 1) if self.pixels else (VIEW_SIZE, VIEW_SIZE, 3)
        self.observation_space = gym.spaces.Box(0, 255, shape, np.float32)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        if layout_bank is None and layout_draws is not None:
            layout_bank = layouts.size_for(env_id, layout_draws)
        self.layout_count = layout_bank or layouts.default_size(env_id)
        self._live = live_bank.shared(env_id, self.layout_count, layout_seed)
        # Layouts this env drew; -1 until its first draw, which starts past any a run resumed
        # from a checkpoint drew (its draw counter times the batch: each draw takes at most one).
        self._drawn = tf.Variable(-1, dtype=tf.int64, trainable=False, name="layouts_drawn")
        width, height = self._live.base.shape[:2]
        self.state_shape = GridState((width, height, 4), (2,), (), (4,), (), (2,))
        self.state_dtype = GridState(tf.uint8, *[tf.int32] * (len(GridState._fields) - 1))

    @property
    def max_episode_steps(self) -> int:
        """The time limit: the env's own `max_steps`, or a smaller limit set on the env."""
        return self._max_episode_steps

    @max_episode_steps.setter
    def max_episode_steps(self, value: int | None) -> None:
        self._max_episode_steps = self.max_steps if value is None else min(value, self.max_steps)

    @property
    def name(self) -> str:
        return self.env_id

    def _layout(self, index: tf.Tensor) -> GridState:
        return compose(self._live.base, self._live.fields(index))

    def initial_state(self, count, seed):
        seed = tf.cast(seed, tf.int64)
        start = tf.where(self._drawn < 0, seed[1] * count, self._drawn)
        self._drawn.assign(start + count)
        return self._layout(self._live.draw(start, count, seed[0]))

    def give_back(self, count):
        self._drawn.assign_sub(tf.cast(count, tf.int64))

    def initial(self, count, seed):
        state = self.initial_state(count, seed)
        return state, self.observe(state)

    def step(self, state, action):
        return dynamics.step(GridState(*state), action, self.max_steps)

    def observe(self, state):
        return self._observation(view.observe(GridState(*state), self.see_through_walls))

    def agent_key(self, state) -> tf.Tensor:
        """The agent's cell, direction and carried object (its object and color) [B, 5]: what
        a step of the agent changes, without the objects it moved (minigrid's `PositionBonus`
        wrapper counts the cell alone)."""
        state = GridState(*state)
        carried = tf.cast(state.carried[:, :2], tf.int32)
        return tf.concat([state.pos, state.direction[:, None], carried], axis=1)

    def _observation(self, image: tf.Tensor) -> tf.Tensor:
        """The observation of view encodings: the image itself, or its frame."""
        return tf.cast(pixels.frames(image) if self.pixels else image, tf.float32)


def render(bank: dict[str, tf.Tensor | tf.Variable], index: tf.Tensor) -> GridState:
    """Layouts `index` [B] of an assembled bank (`compact`'s fields) as states: the base grid,
    the borders of its rects walled, its points set (as `compact.decode`, batched)."""
    values = tf.cast(tf.gather(bank["values"], index), tf.int32)
    fields = {
        key: tf.cast(tf.gather(bank[key], index), tf.int32)
        for key in ("rects", "points", "pos", "direction", "target")
    }
    fields["cells"] = tf.cast(tf.gather(bank["palette"], values), tf.int32)
    return compose(tf.convert_to_tensor(bank["base"]), fields)


def compose(base: tf.Tensor, fields: dict[str, tf.Tensor]) -> GridState:
    """States of layouts given as int32 fields [B, ...] (`live_bank.RowShape.fields`): `base`
    [W, H, 4] with the borders of their rects walled and their points' cells set; a point at
    or past W * H changes nothing."""
    width, height = base.shape[0], base.shape[1]
    cells = width * height
    x = tf.repeat(tf.range(width), height)  # Of each flat cell x * height + y.
    y = tf.tile(tf.range(height), [width])
    rects = fields["rects"][:, :, None, :]  # [B, R, 1, 4]
    left, top, w, h = rects[..., 0], rects[..., 1], rects[..., 2], rects[..., 3]
    inside = (x >= left) & (x < left + w) & (y >= top) & (y < top + h)
    border = (x == left) | (x == left + w - 1) | (y == top) | (y == top + h - 1)
    walled = tf.reduce_any(inside & border, axis=1)[..., None]  # [B, W*H, 1]
    grid = tf.where(walled, tf.constant(compact.RECT_CELL, tf.uint8), tf.reshape(base, [cells, 4]))
    hit = fields["points"][:, :, None] == tf.range(cells)  # [B, P, W*H]
    values = tf.cast(fields["cells"], tf.float32)
    chosen = tf.einsum("bpc,bpk->bck", tf.cast(hit, tf.float32), values)
    grid = tf.where(tf.reduce_any(hit, axis=1)[..., None], tf.cast(chosen, tf.uint8), grid)
    count = tf.shape(fields["pos"])[0]
    return GridState(
        grid=tf.reshape(grid, [count, width, height, 4]),
        pos=fields["pos"],
        direction=fields["direction"],
        carried=tf.zeros([count, 4], tf.int32) + tf.constant(EMPTY_CELL, tf.int32),
        step_count=tf.zeros([count], tf.int32),
        target=fields["target"],
    )
