"""Optimizers by name, with the PPO reference implementations' Adam epsilon."""

from __future__ import annotations

import keras


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
