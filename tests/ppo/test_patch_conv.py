"""Tests for PatchConv2D: Keras's 'valid' Conv2D computed as a product over patches."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.networks.patch_conv import PatchConv2D, image_patches


def _naive_conv(images, kernel, bias, stride):
    """'valid' convolution by loops over outputs, for testing only."""
    size, _, _, filters = kernel.shape
    count, height, width, _ = images.shape
    out_h, out_w = (height - size) // stride + 1, (width - size) // stride + 1
    out = np.zeros((count, out_h, out_w, filters))
    for n in range(count):
        for i in range(out_h):
            for j in range(out_w):
                window = images[n, i * stride : i * stride + size, j * stride : j * stride + size]
                out[n, i, j] = np.tensordot(window, kernel, 3) + bias
    return out


# (filters, kernel, stride, frame size, channels): the tiles8 stack's three layers (a kernel
# that tiles the input, a strided one, one covering the input), the Atari stack's first, and a
# tiling kernel whose tiles leave a margin.
GEOMETRIES = [
    (16, 8, 8, 56, 1),
    (64, 3, 2, 7, 16),
    (64, 3, 1, 3, 64),
    (32, 8, 4, 84, 1),
    (4, 2, 2, 5, 3),
    (5, 3, 1, 6, 2),
]


@pytest.mark.parametrize("filters, kernel, stride, size, channels", GEOMETRIES)
def test_equals_keras_conv2d_and_a_naive_reference(filters, kernel, stride, size, channels):
    images = tf.random.stateless_uniform([3, size, size, channels], seed=[1, size])
    reference = keras.layers.Conv2D(filters, kernel, stride, activation="relu")
    layer = PatchConv2D(filters, kernel, stride, activation="relu")
    reference.build(images.shape)
    layer.build(images.shape)
    bias = np.linspace(-0.5, 0.5, filters).astype(np.float32)
    layer.set_weights([reference.kernel.numpy(), bias])
    reference.bias.assign(bias)
    expected = np.maximum(_naive_conv(images.numpy(), reference.kernel.numpy(), bias, stride), 0)
    np.testing.assert_allclose(layer(images), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer(images), reference(images), rtol=1e-4, atol=1e-4)
    assert layer.compute_output_shape(images.shape) == reference(images).shape


def test_gradients_equal_keras_conv2d_and_xla_compiles_them():
    images = tf.random.stateless_uniform([4, 7, 7, 16], seed=[2, 3])
    reference = keras.layers.Conv2D(8, 3, 2)
    layer = PatchConv2D(8, 3, 2)
    reference.build(images.shape)
    layer.build(images.shape)
    layer.set_weights(reference.get_weights())

    def gradients(conv):
        with tf.GradientTape() as tape:
            tape.watch(images)
            loss = tf.reduce_sum(tf.sin(conv(images)))
        return tape.gradient(loss, [images, conv.kernel, conv.bias])

    compiled = tf.function(lambda: gradients(layer), jit_compile=True)
    for got, want in zip(compiled(), gradients(reference)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_patches_by_hand():
    # A 3x3 image 0..8, 2x2 windows of stride 1: each patch is (top-left, top-right,
    # bottom-left, bottom-right).
    images = tf.reshape(tf.range(9, dtype=tf.float32), [1, 3, 3, 1])
    patches = image_patches(images, 2, 1).numpy()
    assert patches.shape == (1, 2, 2, 4)
    assert patches[0, 0, 0].tolist() == [0, 1, 3, 4]
    assert patches[0, 1, 1].tolist() == [4, 5, 7, 8]


@pytest.mark.parametrize("filters, kernel, stride, size, channels", GEOMETRIES)
def test_patches_equal_tensorflows_extract_patches(filters, kernel, stride, size, channels):
    del filters
    images = tf.random.stateless_uniform([2, size, size, channels], seed=[4, size])
    expected = tf.image.extract_patches(
        images, [1, kernel, kernel, 1], [1, stride, stride, 1], [1, 1, 1, 1], "VALID"
    )
    np.testing.assert_array_equal(image_patches(images, kernel, stride), expected)


def test_refuses_what_it_does_not_compute():
    with pytest.raises(ValueError, match="padding='same'"):
        PatchConv2D(4, 3, 1, padding="same")
    with pytest.raises(ValueError, match="does not fit"):
        image_patches(tf.zeros([1, 2, 2, 1]), 3, 1)
