"""What RND reads of dict observations: the image key, else a vector key; of others, all."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.exploration.rnd_view import rnd_view
from agents.tools.dict_observations import PackedDict, pack


def test_rnd_reads_the_image_of_a_packed_dict():
    space = gym.spaces.Dict(
        {
            "direction": gym.spaces.Discrete(4),
            "image": gym.spaces.Box(0, 255, (3, 2, 2), np.uint8),
            "speed": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
        }
    )
    view = rnd_view(PackedDict(space))
    assert view.shape == (3, 2, 2)
    image = np.arange(12, dtype=np.uint8).reshape(3, 2, 2)
    observ = {"direction": 1, "image": image, "speed": np.zeros(2, np.float32)}
    packed = np.stack([pack(space, observ, batched=False)] * 2)[None]  # [T, B, size]
    np.testing.assert_array_equal(
        view(tf.constant(packed)), np.broadcast_to(image, (1, 2, 3, 2, 2))
    )


def test_without_an_image_rnd_reads_a_vector_key_and_without_either_refuses():
    space = gym.spaces.Dict({"a": gym.spaces.Discrete(3), "b": gym.spaces.Box(-1, 1, (4,))})
    view = rnd_view(PackedDict(space))
    assert (view.shape, view.start, view.size) == ((4,), 3, 4)
    with pytest.raises(ValueError, match="RND reads an image or a vector"):
        rnd_view(PackedDict(gym.spaces.Dict({"a": gym.spaces.Discrete(3)})))


def test_any_other_space_is_read_whole():
    view = rnd_view(gym.spaces.Box(0, 1, (5, 5, 1)))
    observ = tf.ones([2, 5, 5, 1])
    assert view.shape == (5, 5, 1) and view(observ) is observ
