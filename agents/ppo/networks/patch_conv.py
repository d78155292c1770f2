"""A 'valid' convolution computed as one matrix product over its patches, for XLA on a CPU."""

from __future__ import annotations

import keras
import tensorflow as tf


class PatchConv2D(keras.layers.Conv2D):
    """`keras.layers.Conv2D` with 'valid' padding, computed as patches times the kernel.

    The same layer as `Conv2D` (its variables, their shapes and initializers, and its output to
    float rounding), computed differently: the input's patches are gathered into one matrix
    [N * out_h * out_w, k * k * C] and multiplied by the kernel reshaped to [k * k * C, filters].
    Patches are a reshape where the kernel tiles the input (`space_to_depth` when kernel equals
    stride; a flatten where it covers the whole input) and k * k strided slices otherwise.

    Why: XLA's CPU backend runs some convolution gradients as naive loops (the 8x8/8 filter
    gradient of the "tiles8" stack, the 3x3/2 one's), slower than graph mode's oneDNN kernels,
    while it runs matrix products and slices fast. Under XLA the update of the "tiles8" pixel
    agent runs ~2x faster this way; in graph mode oneDNN's convolutions are faster, so agents
    choose this layer only where XLA compiles them (see `agents.ppo.compilation`).
    `tf.image.extract_patches` gives the same patches, but XLA lowers it to a convolution: its
    forward and backward pass took twice as long as `image_patches` on these layers' inputs.
    """

    def __init__(self, filters: int, kernel_size: int, strides: int = 1, **kwargs):
        """As `keras.layers.Conv2D` with square int `kernel_size` and `strides`, 'valid' padding,
        channels last, no dilation or groups.

        Raises:
            ValueError: For another padding, data format, dilation or groups.
        """
        super().__init__(filters, kernel_size, strides, **kwargs)
        unsupported = (
            self.padding != "valid"
            or self.data_format != "channels_last"
            or self.dilation_rate != (1, 1)
            or self.groups != 1
        )
        if unsupported:
            raise ValueError(
                "PatchConv2D computes only 'valid', channels-last convolutions without dilation "
                f"or groups, got padding={self.padding!r}, data_format={self.data_format!r}, "
                f"dilation_rate={self.dilation_rate}, groups={self.groups}."
            )

    def call(self, inputs):
        kernel_size, stride = self.kernel_size[0], self.strides[0]
        patches = image_patches(inputs, kernel_size, stride)
        outputs = tf.tensordot(patches, tf.reshape(self.kernel, [-1, self.filters]), 1)
        if self.use_bias:
            outputs = outputs + self.bias
        return self.activation(outputs) if self.activation is not None else outputs


def image_patches(images: tf.Tensor, kernel_size: int, stride: int) -> tf.Tensor:
    """The 'valid' patches of [N, H, W, C] `images`: [N, out_h, out_w, k * k * C].

    Each patch is flattened in the order of a Conv2D kernel's first three axes (row, column,
    channel), so that `patches @ reshape(kernel, [-1, filters])` is the convolution. H, W and C
    must be static.
    """
    height, width, channels = (int(size) for size in images.shape[1:])
    out_h, out_w = (height - kernel_size) // stride + 1, (width - kernel_size) // stride + 1
    if out_h < 1 or out_w < 1:
        raise ValueError(
            f"A {kernel_size}x{kernel_size} window does not fit images of {height}x{width}."
        )
    depth = kernel_size * kernel_size * channels
    if out_h == 1 and out_w == 1:
        window = images[:, :kernel_size, :kernel_size, :]
        return tf.reshape(window, [-1, 1, 1, depth])
    if kernel_size == stride:
        window = images[:, : out_h * stride, : out_w * stride, :]
        return tf.nn.space_to_depth(window, kernel_size)
    # One strided slice per kernel offset; concatenated they order each patch (row, column, C).
    last_row, last_col = stride * (out_h - 1) + 1, stride * (out_w - 1) + 1
    shifted = [
        images[:, row : row + last_row : stride, col : col + last_col : stride, :]
        for row in range(kernel_size)
        for col in range(kernel_size)
    ]
    return tf.concat(shifted, axis=-1)


def conv2d_layer(patches: bool) -> type[keras.layers.Conv2D]:
    """The Conv2D class a network builds: `PatchConv2D` when `patches`, else Keras's own."""
    return PatchConv2D if patches else keras.layers.Conv2D
