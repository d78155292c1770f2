"""Small helpers of the PPO agent: explicit weight lists and optimizers by name."""

from __future__ import annotations

import keras
import tensorflow as tf


class Weights(tf.Module):
    """A Keras model's variables as an explicit list, for `tf.train.Checkpoint`.

    TF's object-based checkpoints do not see Keras 3 layers kept in lists or nested inside other
    layers (only 3 of 9 variables of a small MLP were saved), so the network is saved through this
    list instead: the architecture fixes the order of `model.variables`.
    """

    def __init__(self, model: keras.Model) -> None:
        super().__init__(name="weights")
        self.weights = list(model.variables)


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
    return type(optimizer).from_config(config)
