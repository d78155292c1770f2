"""NativeBatchEnv: a batch of a `NativeEnv`, stepped inside the compiled training call."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.native_env import NativeEnv
from agents.tools import env_checks
from agents.tools.transitions import Transitions

# Restarts in one step for which only a share of the batch's initial states is drawn.
RESTART_SHARE = 8


class NativeBatchEnv(Transitions):
    """`size` copies of a native environment, with the interface of `tools.InGraphBatchEnv`
    (the transition variables of `tools.transitions.Transitions`).

    The states live in variables (one per leaf of a nested state); `simulate(action)` and
    `reset(indices)` are TensorFlow ops, so a whole rollout (and the update after it) compiles into
    one program. Box actions are clipped to the action space, episodes are truncated at
    `env.max_episode_steps` as gymnasium's `TimeLimit` does (`truncated` is True at the limit, also
    when the episode terminated there). Initial states are drawn with stateless ops from (`seed`, a
    counter of draws), so runs reproduce; `draws` belongs in the run's checkpoint, so a resumed run
    draws fresh states.

    The environment is checked when the batch is built (shapes and dtypes of its states,
    observations, rewards and terminations); a non-finite observation or reward is recorded in
    the graph and raised by `raise_if_nonfinite` after the call.

    Args:
        env: The `NativeEnv`.
        size: Number of environments.
        seed: Seed of the initial states.

    Raises:
        ValueError: One line naming what the environment returned wrongly.
    """

    def __init__(self, env: NativeEnv, size: int, seed: int = 0) -> None:
        if size < 1:
            raise ValueError(f"A batch needs at least one environment, got {size}.")
        observ_space, action_space = _spaces(env)
        action_dtype = tf.float32 if isinstance(action_space, gym.spaces.Box) else tf.int32
        super().__init__(
            "native_batch_env",
            size,
            (observ_space.shape, tf.float32),
            (action_space.shape, action_dtype),
        )
        self.env, self._size = env, size
        self.observation_space, self.action_space = observ_space, action_space
        self._limit = env.max_episode_steps
        variable = lambda value, name: tf.Variable(value, trainable=False, name=name)  # noqa: E731
        # A variable, not a constant of the program: every seed runs the same compiled program
        # (XLA's cache serves them all).
        self.seed = variable(tf.constant(seed, tf.int64), "seed")
        self.draws = variable(tf.constant(0, tf.int64), "draws")
        initial = _check(env, size, self._draw(size, 0)[0], action_space, action_dtype)
        self.state = tf.nest.map_structure(lambda leaf: variable(leaf, "state"), initial)
        self.steps = variable(tf.constant(0, tf.int64), "steps")  # Batch steps, for messages.
        self.nonfinite_step = variable(tf.constant(-1, tf.int64), "nonfinite_step")
        self._far_limits = tuple(
            tf.constant(limit, tf.float32) for limit in env_checks.far_limits(observ_space)
        )

    def __len__(self) -> int:
        return self._size

    @property
    def max_episode_steps(self) -> int | None:
        """The time limit of the env's episodes (None: none)."""
        return self._limit

    def simulate(self, action: tf.Tensor) -> None:
        """Step all environments and store the transition in the variables."""
        if isinstance(self.action_space, gym.spaces.Box):
            action = tf.clip_by_value(action, self.action_space.low, self.action_space.high)
        state, reward, terminated = self.env.step(self._read_state(), action)
        observ = self.env.observe(state)
        if self._limit is None:
            truncated = tf.zeros([self._size], tf.bool)
        else:
            truncated = self.length + 1 >= self._limit
        # What a Python env's step is refused for (`env_checks.observ_problem`), checked here in
        # the call: non-finite values, and observations far outside the declared bounds.
        valid = tf.reduce_all(tf.math.is_finite(reward))
        if not self.env.observations_bounded:
            lowest, highest = self._far_limits
            valid &= tf.reduce_all(tf.math.is_finite(observ))
            valid &= tf.reduce_all((observ >= lowest) & (observ <= highest))
        first = tf.logical_not(valid) & (self.nonfinite_step < 0)
        self.nonfinite_step.assign(tf.where(first, self.steps, self.nonfinite_step))
        self.steps.assign_add(1)
        tf.nest.map_structure(lambda var, value: var.assign(value), self.state, state)
        self._record(action, observ, reward, terminated, truncated)

    def reset(self, indices: tf.Tensor | None = None) -> tf.Tensor:
        """Start new episodes at `indices` (all when None); returns their observations."""
        if indices is None:
            indices = tf.range(self._size)
        indices = tf.convert_to_tensor(indices, tf.int32)
        states, observ = tf.nest.map_structure(
            lambda leaf: tf.gather(leaf, indices), self._draw(self._size, self.draws)
        )
        self.draws.assign_add(1)
        tf.nest.map_structure(
            lambda var, value: var.scatter_nd_update(indices[:, None], value), self.state, states
        )
        self._restart(indices, observ)
        return observ

    resets_in_place = True

    @property
    def has_agent_key(self) -> bool:
        """Whether the env defines `agent_key` (see `NativeEnv`)."""
        return callable(getattr(self.env, "agent_key", None))

    def agent_keys(self) -> tf.Tensor:
        """The env's `agent_key` of the current states, [B, K] int32."""
        return tf.cast(self.env.agent_key(self._read_state()), tf.int32)

    def reset_where(self, mask: tf.Tensor) -> None:
        """Start new episodes where `mask` [B] is True, from freshly drawn initial states.

        Shapes stay static: where none restarts, nothing is drawn; where at most
        `B / RESTART_SHARE` environments restart (the usual step), that many states are drawn and
        the k-th restarting environment takes the k-th; otherwise all B are drawn, as `reset`
        draws them, and the masked ones kept. Drawing (a MiniGrid layout rendered with its first
        view, or its frame) then costs a fraction of a step. The draw counter advances only when
        some environment restarts, as with `reset`.
        """
        restarts = tf.cast(mask, tf.int32)
        count = tf.reduce_sum(restarts)
        few = -(-self._size // RESTART_SHARE)

        def from_all():
            self._restart_from(mask, self._draw(self._size, self.draws))
            return tf.constant(True)

        def from_few():
            slot = tf.clip_by_value(tf.cumsum(restarts) - 1, 0, few - 1)
            drawn = self._draw(few, self.draws)
            self.env.give_back(few - count)  # The k-th restart took the k-th: the rest unused.
            self._restart_from(mask, tf.nest.map_structure(lambda x: tf.gather(x, slot), drawn))
            return tf.constant(True)

        def drawn():
            if few >= self._size:
                return from_all()
            return tf.cond(count <= few, from_few, from_all)

        # The restarts run inside the branch: a step where none restarts copies nothing.
        tf.cond(count > 0, drawn, lambda: tf.constant(False))
        self.draws.assign_add(tf.cast(count > 0, tf.int64))

    def _restart_from(self, mask: tf.Tensor, fresh) -> None:
        """Restart the envs at `mask` from the rows of `fresh` (states, observations) [B, ...]."""
        states, observ = fresh

        def restart(var, value):
            rows = tf.reshape(mask, [-1] + [1] * (len(var.shape) - 1))
            return var.assign(tf.where(rows, value, var))

        tf.nest.map_structure(restart, self.state, states)
        self._restart_where(mask, observ)

    def checkpointables(self) -> dict:
        """The counter of reset draws: a resumed run draws fresh initial states."""
        return {"env_draws": self.draws}

    def raise_if_nonfinite(self) -> None:
        """Raise FloatingPointError if the environment returned a non-finite value, or an
        observation far outside its declared bounds (see `env_checks.far_limits`)."""
        step = int(self.nonfinite_step.numpy())
        if step >= 0:
            raise FloatingPointError(
                f"Native env {self.env.name} returned a non-finite observation or reward, or an "
                f"observation far outside the declared bounds of {self.observation_space} "
                f"(beyond {env_checks.FAR_OUTSIDE:g}x their span), at its batch step {step}."
            )

    def close(self) -> None:
        """Nothing to close: the environments are variables."""

    @contextlib.contextmanager
    def python_errors(self) -> Iterator[None]:
        """No Python runs inside a native env's step (the interface of `InGraphBatchEnv`)."""
        yield

    def _read_state(self):
        return tf.nest.map_structure(lambda var: var.read_value(), self.state)

    def _draw(self, count: int, draw):
        """(states, observations) of `count` initial states."""
        seed = tf.stack([self.seed.read_value(), tf.cast(draw, tf.int64)])
        return self.env.initial(count, seed)


def _spaces(env: NativeEnv) -> tuple[gym.spaces.Box, gym.Space]:
    observ_space, action_space = env.observation_space, env.action_space
    if not (isinstance(observ_space, gym.spaces.Box) and observ_space.dtype == np.float32):
        raise ValueError(
            f"Native env {env.name}: observation_space must be a float32 Box, got {observ_space}."
        )
    accepted = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete)
    if not isinstance(action_space, accepted):
        raise ValueError(
            f"Native env {env.name}: action_space must be Box, Discrete or MultiDiscrete, got "
            f"{action_space}."
        )
    return observ_space, action_space


def _check(env: NativeEnv, size: int, state, action_space, action_dtype) -> tf.Tensor:
    """`state` once checked: observing it and one step from it must give what the spaces promise,
    traced as a graph as training runs them (where, unlike eagerly, dtypes are not inferred)."""
    name, expected_state = env.name, env.state_shape

    def require(ok: bool, what: str) -> None:
        if not ok:
            raise ValueError(f"Native env {name}: {what}.")

    nested = isinstance(state, (tuple, dict))  # A NamedTuple too; a list is one tensor.
    if nested:
        state = tf.nest.map_structure(tf.convert_to_tensor, state)
        require(
            all(leaf.shape[:1] == [size] for leaf in tf.nest.flatten(state)),
            f"initial_state gave {_describe(state)}, expected {size} states in every part",
        )
    else:
        state = tf.convert_to_tensor(state)
        require(
            tuple(state.shape) == (size,) + expected_state and state.dtype == env.state_dtype,
            f"initial_state gave {state.dtype.name}{list(state.shape)}, expected "
            f"{env.state_dtype.name}{[size, *expected_state]}",
        )
    action = tf.constant(np.stack([action_space.sample() for _ in range(size)]), action_dtype)

    @tf.function(autograph=False)
    def trial(state, action):
        return (env.observe(state), *env.step(state, action))

    try:
        observ, next_state, reward, terminated = trial(state, action)
        tf.nest.assert_same_structure(next_state, state)
    except (TypeError, ValueError, AttributeError, NotImplementedError) as error:
        # E.g. `.numpy()` on a symbolic tensor (AttributeError), or Python control flow on one.
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise ValueError(f"Native env {name}: does not trace as a graph: {first}") from None
    observ_shape = (size,) + env.observation_space.shape
    require(
        tuple(observ.shape) == observ_shape and observ.dtype == tf.float32,
        f"observe gave {observ.dtype.name}{list(observ.shape)}, expected "
        f"float32{list(observ_shape)}",
    )
    same = tf.nest.map_structure(
        lambda a, b: a.shape == b.shape and a.dtype == b.dtype, next_state, state
    )
    require(
        all(tf.nest.flatten(same)),
        f"step gave states {_describe(next_state)}, expected {_describe(state)}",
    )
    require(
        tuple(reward.shape) == (size,) and reward.dtype == tf.float32,
        f"step gave rewards {reward.dtype.name}{list(reward.shape)}, expected float32[{size}]",
    )
    require(
        tuple(terminated.shape) == (size,) and terminated.dtype == tf.bool,
        f"step gave terminations {terminated.dtype.name}{list(terminated.shape)}, expected "
        f"bool[{size}]",
    )
    require(
        bool(tf.reduce_all(tf.math.is_finite(observ))),
        "observe gave a non-finite observation of an initial state",
    )
    return state


def _describe(state) -> str:
    """A state's dtypes and shapes, as `float64[2, 4]` (per field of a nested state)."""
    parts = [f"{leaf.dtype.name}{list(leaf.shape)}" for leaf in tf.nest.flatten(state)]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"
