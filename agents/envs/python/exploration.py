"""What exploration agents need from the Python environments: random frames and visited cells."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import tensorflow as tf

from agents.tools.wrappers import ExternalProcess

VISITED = "visited"  # Attribute of `tools.wrappers.VisitedCells`: the set of visited states.


def random_frames(batch_env, steps: int, seed: int, chunk: int = 128) -> Iterator[np.ndarray]:
    """Observations of a uniformly random agent, `chunk` batch steps at a time.

    Finished episodes are reset. This is how RND's observation statistics start (`rnd_init_steps`)
    before training; chunks keep the memory small (Montezuma's config takes 6,400 steps of 32
    envs). The caller's next simulation step resets every env, so nothing of this walk leaks into
    training.

    Args:
        batch_env: A `tools.BatchEnv` (in-process or of `ExternalProcess` envs).
        steps: Batch steps in all; each gives one observation per env.
        seed: Seed of the random actions.
        chunk: Batch steps per yielded array.

    Yields:
        Arrays [chunk (or fewer, last), len(batch_env), *observation_shape].
    """

    def step(actions: np.ndarray) -> np.ndarray:
        observ, _, terminated, truncated, _ = batch_env.step(actions)
        finished = np.flatnonzero(np.logical_or(terminated, truncated))
        if finished.size:
            batch_env.reset(finished)
        return observ

    yield from _walk(step, batch_env.action_space, len(batch_env), steps, seed, chunk)


def _walk(step, space, envs: int, steps: int, seed: int, chunk: int) -> Iterator[np.ndarray]:
    """`steps` calls of `step` on uniformly random actions of `envs` envs, its observations
    stacked `chunk` steps at a time."""
    space.seed(seed)
    frames = []
    for index in range(steps):
        frames.append(step(np.stack([space.sample() for _ in range(envs)])))
        if len(frames) == chunk or index == steps - 1:
            yield np.stack(frames)
            frames = []


def visited_states(batch_env) -> set | None:
    """The union of the states visited by the envs that count them, or None if none does.

    An env counts its states when wrapped in `tools.wrappers.VisitedCells` (e.g. MiniGrid's
    `minigrid_pixels`); the union over envs is the number of distinct cells a person would count.
    """
    if hasattr(batch_env, "get_attr"):  # A `tools.VectorBatchEnv`: its envs asked at once.
        try:
            return set().union(*batch_env.get_attr(VISITED))
        except AttributeError:
            return None
    union, counted = set(), False
    for index in range(len(batch_env)):
        env = batch_env[index]
        try:
            if isinstance(env, ExternalProcess):
                visited = getattr(env, VISITED)  # Forwarded to the child's wrappers.
            else:
                visited = env.get_wrapper_attr(VISITED)
        except AttributeError:
            continue
        union |= set(visited)
        counted = True
    return union if counted else None


def native_random_frames(
    batch_env, steps: int, seed: int, chunk: int = 128
) -> Iterator[np.ndarray]:
    """`random_frames` for an `envs.NativeBatchEnv` (same arguments and arrays): stepped by
    TensorFlow ops, then every env restarted (training starts from fresh episodes)."""

    @tf.function(autograph=False)
    def simulate(action):
        batch_env.simulate(action)
        observ = batch_env.observ.read_value()
        batch_env.reset_where(batch_env.done)
        return observ

    def step(actions: np.ndarray) -> np.ndarray:
        return simulate(tf.constant(actions, batch_env.action.dtype)).numpy()

    yield from _walk(step, batch_env.action_space, len(batch_env), steps, seed, chunk)
    batch_env.reset()
