"""Unrolling a recurrent step over time, with episode starts resetting the state."""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

Step = Callable[[tf.Tensor, tuple[tf.Tensor, tf.Tensor]], tf.Tensor]


def unroll(
    step: Step, inputs: tf.Tensor, reset: tf.Tensor, state: tf.Tensor, single_step: bool = False
) -> tuple[tf.Tensor, tf.Tensor]:
    """Runs `step(state, (x_t, reset_t)) -> new state` over [B, T, F] inputs.

    `step` zeroes the state where `reset_t` is True (an episode starts) before it processes
    `x_t`. A single step (`single_step`, or a static T of 1: the rollout's hot path) runs without
    a while loop.

    Returns:
        The states after every step, [B, T, U], and the last state, [B, U].
    """
    if single_step or inputs.shape[1] == 1:
        state = step(state, (inputs[:, 0], reset[:, 0]))
        return state[:, None], state
    time_major = (tf.transpose(inputs, [1, 0, 2]), tf.transpose(reset))
    states = tf.scan(step, time_major, initializer=state)
    return tf.transpose(states, [1, 0, 2]), states[-1]


def reset_state(state: tf.Tensor, reset: tf.Tensor) -> tf.Tensor:
    """`state` [B, U] with zeros in the rows where `reset` [B] is True."""
    return tf.where(reset[:, None], tf.zeros_like(state), state)
