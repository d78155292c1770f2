"""What RND reads of an observation: all of it, or a packed dict's image (else Box) keys."""

from __future__ import annotations

from typing import NamedTuple

import gymnasium as gym
import tensorflow as tf

from agents.tools.dict_observations import PackedDict, fields


class RndView(NamedTuple):
    """The part of [..., size] observations that RND's target and predictor read.

    Attributes:
        shape: The shape of one observation's part.
        start: First entry of the part in a packed dict (None: the whole observation).
        size: Number of entries of the part.
    """

    shape: tuple[int, ...]
    start: int | None = None
    size: int = 0

    def __call__(self, observ: tf.Tensor) -> tf.Tensor:
        """The part of observations [..., *observation_shape], as [..., *shape]."""
        if self.start is None:
            return observ
        part = observ[..., self.start : self.start + self.size]
        return tf.reshape(part, tf.concat([tf.shape(part)[:-1], self.shape], 0))


def rnd_view(space: gym.Space) -> RndView:
    """RND reads a packed dict's first image key, as the RND design feeds it frames only; a dict
    without images its first vector key; any other space the whole observation.

    Raises:
        ValueError: For a packed dict with neither an image nor a vector key.
    """
    if not isinstance(space, PackedDict):
        return RndView(tuple(space.shape))
    for kind in ("image", "vector"):
        field = next((field for field in fields(space) if field.kind == kind), None)
        if field is not None:
            return RndView(field.shape, field.start, field.size)
    raise ValueError(
        f"RND reads an image or a vector (Box) key of a dict observation; {space!r} has none."
    )
