"""Tests for StreamingMean."""

import numpy as np
import tensorflow as tf

from agents.tools.streaming_mean import StreamingMean


def test_streaming_mean_matches_numpy_and_clears():
    mean = StreamingMean((2,))
    data = [np.random.default_rng(i).normal(size=(n, 2)) for i, n in enumerate([3, 1, 5])]
    for batch in data:
        mean.submit(batch)
    np.testing.assert_allclose(mean.value.numpy(), np.concatenate(data).mean(0), rtol=1e-6)
    assert int(mean.count) == 9
    np.testing.assert_allclose(mean.clear().numpy(), np.concatenate(data).mean(0), rtol=1e-6)
    assert int(mean.count) == 0 and mean.value.numpy().tolist() == [0.0, 0.0]


def test_streaming_mean_in_tf_function():
    mean = StreamingMean()
    submit = tf.function(mean.submit)
    submit(tf.constant([1.0, 2.0]))
    submit(tf.constant([6.0]))
    assert float(mean.value) == 3.0
