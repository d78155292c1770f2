"""Optimizers by name, with the PPO reference implementations' Adam epsilon."""

from __future__ import annotations

import keras
import tensorflow as tf


class _OwnGradients:
    """Applies gradients as given when no `tf.distribute` strategy is in scope.

    Keras' TensorFlow optimizer sums every gradient over the replicas of the current replica
    context, the default one included, and that all-reduce registers a custom gradient in
    TensorFlow's process-wide gradient registry at each trace. The registered function holds
    the traced update's graph, so every agent built in a process kept its update graph alive
    (about 20 MB per `agents.train` call). This agent averages gradients over MPI ranks itself
    and never runs under a strategy, so with none in scope the sum over one replica is skipped.
    """

    def _all_reduce_sum_gradients(self, grads_and_vars):
        if tf.distribute.has_strategy():
            return super()._all_reduce_sum_gradients(grads_and_vars)
        return list(grads_and_vars)


def make_optimizer(name: str, learning_rate: float) -> keras.optimizers.Optimizer:
    """A Keras optimizer by name (e.g. "adam", "sgd", "rmsprop")."""
    try:
        optimizer = keras.optimizers.get(name)
    except ValueError as error:
        raise ValueError(
            f"Unknown optimizer {name!r}; accepted are Keras optimizer names such as "
            "'adam', 'adamw', 'rmsprop' or 'sgd'."
        ) from error
    config = optimizer.get_config()
    config["learning_rate"] = learning_rate
    if "epsilon" in config:
        config["epsilon"] = 1e-5  # The PPO reference implementations' Adam epsilon.
    base = type(optimizer)
    own = type(base.__name__, (_OwnGradients, base), {"__module__": base.__module__})
    return own.from_config(config)
