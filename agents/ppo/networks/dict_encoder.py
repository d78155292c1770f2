"""The encoder of dict observations: each key by its own head, the features concatenated.

A packed dict observation (`agents.tools.dict_observations`) is split by key: an image key goes
through a CNN (divided by 255 first where the agent does not normalize observations, as
Stable-Baselines3 scales images), a vector key through a dense layer, a one-hot key through an
embedding (a dense layer without bias on the one-hot, which is an embedding lookup; a
MultiDiscrete key sums the embeddings of its entries), a MultiBinary key through a dense layer.
The action mask gives no features: `DictEncoder.action_mask` hands it to the policy head. As in
Stable-Baselines3's `CombinedExtractor`, the policy and value paths share the encoder.
"""

from __future__ import annotations

import math

import keras
import tensorflow as tf

from agents.ppo.networks import conv
from agents.ppo.networks.distributions import orthogonal, orthogonal_dense
from agents.tools.dict_observations import Field, PackedDict, fields, mask_field

# Sizes of what each kind of key contributes to the features.
IMAGE_FEATURES = 256
VECTOR_FEATURES = 64
EMBEDDING_SIZE = 16

# Conv stacks, (filters, kernel, stride): the DQN/Nature CNN for frames of 36 pixels and up
# (SB3's NatureCNN), the 2x2 stack of minigrid's reference agents for small symbolic views.
NATURE_CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))
SMALL_CONVS = ((16, 2, 1), (32, 2, 1), (64, 2, 1))

_GAIN = math.sqrt(2.0)


def conv_stack(height: int, width: int) -> tuple[tuple[int, int, int], ...]:
    """The conv stack for images of `height` x `width`.

    Raises:
        ValueError: If the image is too small for even the small stack.
    """
    for stack in (NATURE_CONVS, SMALL_CONVS):
        if min(height, width) >= conv.min_input_size(stack):
            return stack
    raise ValueError(
        f"An image key of {height}x{width} pixels is too small for the dict encoder's CNN "
        f"(at least {conv.min_input_size(SMALL_CONVS)}x{conv.min_input_size(SMALL_CONVS)})."
    )


def _image_layers(field: Field) -> list[keras.layers.Layer]:
    height, width, _ = field.shape
    layers: list[keras.layers.Layer] = [
        keras.layers.Conv2D(
            filters,
            kernel,
            strides=stride,
            activation="relu",
            kernel_initializer=orthogonal(_GAIN),
            name=f"{field.key}_conv_{index}",
        )
        for index, (filters, kernel, stride) in enumerate(conv_stack(height, width))
    ]
    layers.append(keras.layers.Flatten(name=f"{field.key}_flatten"))
    layers.append(orthogonal_dense(IMAGE_FEATURES, _GAIN, "relu", name=f"{field.key}_dense"))
    return layers


def _layers(field: Field, activation: str) -> list[keras.layers.Layer]:
    if field.kind == "image":
        return _image_layers(field)
    if field.kind == "discrete":
        return [
            keras.layers.Dense(
                EMBEDDING_SIZE,
                use_bias=False,
                kernel_initializer=keras.initializers.RandomNormal(stddev=1.0),
                name=f"{field.key}_embedding",
            )
        ]
    return [orthogonal_dense(VECTOR_FEATURES, _GAIN, activation, name=f"{field.key}_dense")]


class DictEncoder(keras.layers.Layer):
    """Packed dict observations [N, size] -> features [N, `output_size`], key by key."""

    def __init__(
        self, space: PackedDict, activation: str, image_scale: float = 1.0 / 255.0, **kwargs
    ):
        """Creates the heads of every key.

        Args:
            space: The packed dict observation space.
            activation: Activation of the vector keys' dense layers.
            image_scale: Factor of image keys before their CNN: 1/255 for raw pixels, 1 where
                a running normalizer already scaled them.
            **kwargs: Passed on to `keras.layers.Layer`.
        """
        kwargs.setdefault("name", "dict_encoder")
        super().__init__(**kwargs)
        self._image_scale = float(image_scale)
        self._fields = [field for field in fields(space) if field.kind != "mask"]
        if not self._fields:
            raise ValueError(f"Observation space {space!r} has no key to read besides the mask.")
        self._heads = {field.key: _layers(field, activation) for field in self._fields}
        self._mask = mask_field(space)
        self.output_size = 0

    def build(self, input_shape=None):
        del input_shape
        self.output_size = 0
        for field in self._fields:
            shape = (None, *field.shape)
            for layer in self._heads[field.key]:
                layer.build(shape)
                shape = layer.compute_output_shape(shape)
            self.output_size += int(shape[-1])
        self.built = True

    def call(self, packed: tf.Tensor) -> tf.Tensor:
        features = []
        for field in self._fields:
            value = packed[:, field.start : field.start + field.size]
            if field.kind == "image":
                value = tf.reshape(value, [-1, *field.shape]) * self._image_scale
            for layer in self._heads[field.key]:
                value = layer(value)
            features.append(value)
        return tf.concat(features, axis=-1)

    def action_mask(self, packed: tf.Tensor) -> tf.Tensor | None:
        """The action mask of packed observations [N, size] as bool [N, n]; None without one."""
        if self._mask is None:
            return None
        return packed[:, self._mask.start : self._mask.start + self._mask.size] > 0.5
