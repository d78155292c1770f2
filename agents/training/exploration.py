"""What exploration agents need from the Python environments: random frames and visited cells."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

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
    space = batch_env.action_space
    space.seed(seed)
    frames = []
    for step in range(steps):
        actions = np.stack([space.sample() for _ in range(len(batch_env))])
        observ, _, terminated, truncated, _ = batch_env.step(actions)
        frames.append(observ)
        finished = np.flatnonzero(np.logical_or(terminated, truncated))
        if finished.size:
            batch_env.reset(finished)
        if len(frames) == chunk or step == steps - 1:
            yield np.stack(frames)
            frames = []


def visited_states(batch_env) -> set | None:
    """The union of the states visited by the envs that count them, or None if none does.

    An env counts its states when wrapped in `tools.wrappers.VisitedCells` (e.g. MiniGrid's
    `minigrid_pixels`); the union over envs is the number of distinct cells a person would count.
    """
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
    """`random_frames` for a `NativeBatchEnv`: its observations under uniformly random actions,
    stepped by TensorFlow ops, then every env restarted (training starts from fresh episodes).

    Args:
        batch_env: A `envs.NativeBatchEnv`.
        steps: Batch steps in all; each gives one observation per env.
        seed: Seed of the random actions.
        chunk: Batch steps per yielded array.

    Yields:
        Arrays [chunk (or fewer, last), len(batch_env), *observation_shape].
    """
    import tensorflow as tf

    space = batch_env.action_space
    space.seed(seed)

    @tf.function(autograph=False)
    def step(action):
        batch_env.simulate(action)
        observ = batch_env.observ.read_value()
        batch_env.reset_where(batch_env.done)
        return observ

    frames = []
    for index in range(steps):
        action = np.stack([space.sample() for _ in range(len(batch_env))])
        frames.append(step(tf.constant(action, batch_env.action.dtype)).numpy())
        if len(frames) == chunk or index == steps - 1:
            yield np.stack(frames)
            frames = []
    batch_env.reset()
