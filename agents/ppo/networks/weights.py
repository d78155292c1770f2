"""Weights: a Keras model's variables as an explicit list, for checkpoints and SavedModels."""

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
