"""Geometry of a stack of 'valid'-padded convolutions, given as (filters, kernel, stride) rows."""

from __future__ import annotations

from collections.abc import Sequence

ConvStack = Sequence[tuple[int, int, int]]


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
