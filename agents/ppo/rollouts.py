"""A training call of whole rollouts, each followed by the agent's update, compiled as one."""

from __future__ import annotations

import tensorflow as tf

from agents import tools


def rollouts_then_updates(batch_env, agent, rollouts: int, length: int) -> tools.Steps:
    """`rollouts` rollouts of `length` steps, each followed by the agent's update.

    What `tools.simulate_steps(batch_env, agent, rollouts * length)` does when every call starts
    with an empty rollout, with the update's branch out of the step loop (see
    `PPO.deferred_updates`): for a native env, whose whole call XLA compiles.

    Args:
        batch_env: A batch env with the interface of `tools.InGraphBatchEnv`.
        agent: A `PPO`.
        rollouts: Rollouts per call (a Python int).
        length: Steps per rollout, the agent's `rollout_length`.

    Returns:
        `tools.Steps` of shape [rollouts * length, B].
    """
    arrays = tuple(
        tf.TensorArray(dtype, size=rollouts, element_shape=[length, len(batch_env)])
        for dtype in (tf.bool, tf.float32, tf.int32)
    )

    def body(index, arrays):
        with agent.deferred_updates():
            steps = tools.simulate_steps(batch_env, agent, length)
        agent.update_if_full(batch_env.observ.read_value())
        return index + 1, tuple(array.write(index, value) for array, value in zip(arrays, steps))

    _, arrays = tf.while_loop(lambda index, _: index < rollouts, body, (tf.constant(0), arrays))
    return tools.Steps(*(array.concat() for array in arrays))
