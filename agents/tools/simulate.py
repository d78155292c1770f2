"""simulate: one step of a batch of environments and an algorithm, as TensorFlow operations;
`Algorithm`, the four methods it calls on the algorithm."""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import tensorflow as tf


@runtime_checkable
class Algorithm(Protocol):
    """What `tools.simulate` drives: PPO, its `Evaluator` and `MockAlgorithm` implement it.

    Every method is called inside the caller's `tf.function` with `agent_indices`, an int32 vector
    of the environments concerned (all of them for `perform` and `experience`).
    """

    def begin_episode(self, agent_indices: tf.Tensor) -> None:
        """Episodes start in these environments (their first observation comes next)."""

    def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
        """Returns the actions [B, ...] for the observations [B, ...]."""

    def experience(
        self,
        agent_indices: tf.Tensor,
        observ: tf.Tensor,
        action: tf.Tensor,
        reward: tf.Tensor,
        terminated: tf.Tensor,
        truncated: tf.Tensor,
        next_observ: tf.Tensor,
    ) -> None:
        """One transition of every environment; `next_observ` is the true final one at ends."""

    def end_episode(self, agent_indices: tf.Tensor) -> None:
        """Episodes ended in these environments in the step just experienced."""


def simulate(batch_env, algo: Algorithm, log: bool = True, reset=False):
    """Advance every environment of the batch by one step with the algorithm's actions.

    Call it inside a `tf.function`. The step (1) resets finished environments (all when `reset`
    is True) and tells the algorithm with `begin_episode`, (2) asks `perform` for actions,
    (3) steps the environments, (4) hands the transition to `experience`, keeping `terminated` and
    `truncated` apart and passing the true final observation of finished episodes as
    `next_observ`, and (5) calls `end_episode` for the episodes that just finished.

    Args:
        batch_env: An `InGraphBatchEnv`.
        algo: An object implementing the algorithm protocol.
        log: Whether to compute the metrics of finished episodes.
        reset: Boolean (tensor), whether to start new episodes in all environments.

    Returns:
        Tuple (done, score, metrics): `done` [B] marks envs whose episode ended in this step,
        `score` [B] holds their returns (running returns for the others), and `metrics` is a dict
        with the mean score and length of the episodes that ended (zero if none), and their count.
    """
    reset = tf.convert_to_tensor(reset, tf.bool)
    starts = batch_env.done | reset
    begin = tf.cast(tf.where(starts)[:, 0], tf.int32)
    if getattr(batch_env, "resets_in_place", False):  # A native env: a few cheap ops, every step.
        batch_env.reset_where(starts)
        algo.begin_episode(begin)
    else:
        tf.cond(tf.size(begin) > 0, lambda: _begin_episode(batch_env, algo, begin), tf.no_op)
    agent_indices = tf.range(len(batch_env))
    prev_observ = tf.identity(batch_env.observ)
    action = algo.perform(agent_indices, prev_observ)
    batch_env.simulate(action)
    algo.experience(
        agent_indices,
        prev_observ,
        batch_env.action.read_value(),
        batch_env.reward.read_value(),
        batch_env.terminated.read_value(),
        batch_env.truncated.read_value(),
        batch_env.observ.read_value(),
    )
    done = batch_env.done.read_value()
    ended = tf.cast(tf.where(done)[:, 0], tf.int32)
    tf.cond(tf.size(ended) > 0, lambda: _end_episode(algo, ended), tf.no_op)
    score = batch_env.score.read_value()
    metrics = _episode_metrics(done, score, batch_env.length.read_value()) if log else {}
    return done, score, metrics


def _begin_episode(batch_env, algo, indices):
    batch_env.reset(indices)
    algo.begin_episode(indices)
    return tf.no_op()


def _end_episode(algo, indices):
    algo.end_episode(indices)
    return tf.no_op()


def _episode_metrics(done, score, length):
    count = tf.reduce_sum(tf.cast(done, tf.int32))
    denominator = tf.cast(tf.maximum(count, 1), tf.float32)
    mask = tf.cast(done, tf.float32)
    return {
        "mean_score": tf.reduce_sum(score * mask) / denominator,
        "mean_length": tf.reduce_sum(tf.cast(length, tf.float32) * mask) / denominator,
        "episodes": count,
    }


class Steps(NamedTuple):
    """What `simulate_steps` returns, each [steps, B], as `simulate` returns them per step.

    Attributes:
        done: bool, the envs whose episode ended in that step.
        score: float32, the returns of those episodes (running returns for the others).
        length: int32, the lengths of those episodes (running lengths for the others).
    """

    done: tf.Tensor
    score: tf.Tensor
    length: tf.Tensor


def simulate_steps(batch_env, algo: Algorithm, steps: int, reset=False) -> Steps:
    """Run `steps` simulation steps in one call (use inside `tf.function`).

    Fewer calls from Python mean less overhead per env step; the training script runs a whole
    rollout per call. The loop is a `tf.while_loop` written out, so no AutoGraph conversion is
    needed when tracing (it cost seconds per trace).

    Args:
        batch_env: An `InGraphBatchEnv`.
        algo: An object implementing the algorithm protocol.
        steps: Number of simulation steps (a Python int).
        reset: Boolean (tensor), whether the first step starts new episodes everywhere.

    Returns:
        `Steps` of shape [steps, B].
    """
    reset = tf.convert_to_tensor(reset, tf.bool)
    arrays = (
        tf.TensorArray(tf.bool, size=steps),
        tf.TensorArray(tf.float32, size=steps),
        tf.TensorArray(tf.int32, size=steps),
    )

    def body(index, arrays):
        done, score, _ = simulate(batch_env, algo, log=False, reset=reset & tf.equal(index, 0))
        values = (done, score, batch_env.length.read_value())
        return index + 1, tuple(array.write(index, value) for array, value in zip(arrays, values))

    _, arrays = tf.while_loop(lambda index, _: index < steps, body, (tf.constant(0), arrays))
    return Steps(*(array.stack() for array in arrays))
