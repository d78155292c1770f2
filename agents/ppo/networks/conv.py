"""Geometry of a stack of 'valid'-padded convolutions, given as (filters, kernel, stride) rows."""

from __future__ import annotations

from collections.abc import Sequence

ConvStack = Sequence[tuple[int, int, int]]

# The named stacks of the CNN+GRU policy and of RND's conv torso (`conv_stack`).
# "dqn": the DQN and RND papers' stack for Atari frames (RND's target and predictor end in a 3x3
#   convolution where the policy's ends in a 4x4 one, as in the RND code).
# "tiles8": for frames drawn as a grid of 8x8-pixel tiles (MiniGrid's 56x56 frames of a 7x7
#   view): one 8x8 convolution of stride 8 embeds each tile, two 3x3 convolutions read the grid
#   of cells. On 56x56 grayscale frames it makes an eighth of "dqn"'s multiply-adds (tested).
TILES8 = ((16, 8, 8), (64, 3, 2), (64, 3, 1))
POLICY_STACKS: dict[str, ConvStack] = {
    "dqn": ((32, 8, 4), (64, 4, 2), (64, 4, 1)),
    "tiles8": TILES8,
}
RND_STACKS: dict[str, ConvStack] = {"dqn": ((32, 8, 4), (64, 4, 2), (64, 3, 1)), "tiles8": TILES8}


def output_size(size: int, stack: ConvStack) -> int:
    """Height (or width) after the stack for an input of `size` (<= 0: the input is too small)."""
    for _, kernel, stride in stack:
        size = (size - kernel) // stride + 1
    return size


def min_input_size(stack: ConvStack) -> int:
    """The smallest input height (or width) for which every convolution has an output."""
    size = 1
    for _, kernel, stride in reversed(stack):
        size = (size - 1) * stride + kernel
    return size


def multiply_adds(size: int, channels: int, stack: ConvStack) -> int:
    """Multiply-adds of the stack on one `size` x `size` x `channels` input."""
    total = 0
    for filters, kernel, stride in stack:
        size = (size - kernel) // stride + 1
        total += size * size * filters * kernel * kernel * channels
        channels = filters
    return total
