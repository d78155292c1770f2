"""Networks on packed dict observations: each key read by its head, the mask by the policy."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.networks import dict_encoder
from agents.ppo.networks.mlp import make_network
from agents.tools.dict_observations import PackedDict, normalized_entries, pack
from agents.tools.normalize import StreamingNormalize

SPACE = gym.spaces.Dict(
    {
        "action_mask": gym.spaces.MultiBinary(3),
        "direction": gym.spaces.Discrete(4),
        "image": gym.spaces.Box(0, 255, (7, 7, 3), np.uint8),
        "speed": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
    }
)
CONFIG = dict(
    network="auto",
    policy_layers=[16],
    value_layers=[16],
    activation="tanh",
    init_output_factor=1.0,
    init_std=1.0,
    sde_sample_freq=None,
    recurrent_units=8,
)


def _observ(**changes):
    SPACE.seed(0)
    sample = {**SPACE.sample(), "action_mask": np.array([1, 1, 1], np.int8), **changes}
    return tf.constant(pack(SPACE, sample, batched=False)[None, None])


@pytest.mark.parametrize("network", ["auto", "recurrent_categorical"])
def test_each_key_reaches_the_features_and_the_mask_only_the_policy(network):
    model = make_network(PackedDict(SPACE), gym.spaces.Discrete(3), dict(CONFIG, network=network))
    reset, state = tf.ones([1, 1], tf.bool), model.initial_state(1)
    base = model(_observ(), reset, state)
    for key, value in [("direction", 3), ("speed", np.array([0.9, -0.9], np.float32))]:
        changed = model(_observ(**{key: value}), reset, state)
        assert not np.allclose(changed.value, base.value), key
    image = np.zeros((7, 7, 3), np.uint8)
    assert not np.allclose(model(_observ(image=image), reset, state).value, base.value)
    masked = model(_observ(action_mask=np.array([1, 0, 1], np.int8)), reset, state)
    np.testing.assert_array_equal(masked.value, base.value)  # The mask gives no features.
    probs = masked.policy.probs_parameter().numpy()[0, 0]
    assert probs[1] == 0.0
    unmasked = base.policy.probs_parameter().numpy()[0, 0]
    np.testing.assert_allclose(probs[[0, 2]], unmasked[[0, 2]] / unmasked[[0, 2]].sum(), 1e-5)


def test_the_conv_stack_fits_the_image():
    assert dict_encoder.conv_stack(84, 84) == dict_encoder.NATURE_CONVS
    assert dict_encoder.conv_stack(7, 7) == dict_encoder.SMALL_CONVS
    with pytest.raises(ValueError, match="2x3 pixels is too small.*at least 4x4"):
        dict_encoder.conv_stack(2, 3)


def test_a_gaussian_policy_refuses_an_action_mask():
    with pytest.raises(ValueError, match="needs a Discrete or MultiDiscrete action space"):
        make_network(PackedDict(SPACE), gym.spaces.Box(-1, 1, (3,)), CONFIG)


def test_the_normalizer_leaves_one_hots_and_the_mask_raw():
    normalized = normalized_entries(PackedDict(SPACE))
    normalizer = StreamingNormalize(normalized.shape, normalized=normalized)
    batch = np.stack([pack(SPACE, SPACE.sample(), batched=False) for _ in range(32)])
    normalizer.update(tf.constant(batch))
    out = normalizer.transform(tf.constant(batch)).numpy()
    np.testing.assert_array_equal(out[:, ~normalized], batch[:, ~normalized])
    mean, std = batch.mean(0), np.sqrt(batch.var(0) + 1e-8)
    reference = np.clip((batch - mean) / std, -5, 5)
    np.testing.assert_allclose(out[:, normalized], reference[:, normalized], atol=1e-4)
