"""simulate: one step of a batch of environments and an algorithm, as TensorFlow operations."""

from __future__ import annotations

import tensorflow as tf


def simulate(batch_env, algo, log: bool = True, reset=False):
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
    begin = tf.where(batch_env.done | reset)[:, 0]
    begin = tf.cast(begin, tf.int32)
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


def simulate_steps(batch_env, algo, steps: int, reset=False, with_length: bool = False):
    """Run `steps` simulation steps in one call (use inside `tf.function`).

    Fewer calls from Python mean less overhead per env step; the training script runs a whole
    rollout per call.

    Args:
        batch_env: An `InGraphBatchEnv`.
        algo: An object implementing the algorithm protocol.
        steps: Number of simulation steps (a Python int).
        reset: Boolean (tensor), whether the first step starts new episodes everywhere.
        with_length: Whether to also return the episode lengths.

    Returns:
        Tuple (done, score) of shape [steps, B], as `simulate` returns them for each step; with
        `with_length`, the tuple (done, score, length), where `length` [steps, B] int32 holds the
        lengths of the episodes that ended (running lengths for the others), as `score` does.
    """
    dones = tf.TensorArray(tf.bool, size=steps)
    scores = tf.TensorArray(tf.float32, size=steps)
    lengths = tf.TensorArray(tf.int32, size=steps)
    reset = tf.convert_to_tensor(reset, tf.bool)
    for index in tf.range(steps):
        done, score, _ = simulate(batch_env, algo, log=False, reset=reset & tf.equal(index, 0))
        dones = dones.write(index, done)
        scores = scores.write(index, score)
        if with_length:  # A Python bool: decided when tracing.
            lengths = lengths.write(index, batch_env.length.read_value())
    if with_length:
        return dones.stack(), scores.stack(), lengths.stack()
    return dones.stack(), scores.stack()
