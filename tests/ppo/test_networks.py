"""Tests for the PPO networks and policy heads."""

from __future__ import annotations

import sys
import types

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_probability as tfp

from agents.ppo.networks.contract import NetworkOutput
from agents.ppo.networks.mlp import make_network
from tests.floats import assert_float32_close

tfd = tfp.distributions

CONFIG = {
    "network": "auto",
    "policy_layers": (8, 8),
    "value_layers": (8,),
    "activation": "tanh",
    "init_std": 0.5,
    "sde_sample_freq": None,
    "init_output_factor": 0.01,
    "recurrent_units": 4,
}
OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
# Gaussian samples are unbounded (the environment wrapper clips), so containment is checked
# against an unbounded Box.
BOX = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
DISCRETE = gym.spaces.Discrete(5)
MULTI_DISCRETE = gym.spaces.MultiDiscrete([2, 5, 3])
B, T = 3, 4


def _network(action_space, obs_space=OBS, **overrides):
    return make_network(obs_space, action_space, {**CONFIG, **overrides})


def _inputs(obs_space=OBS, batch=B, time=T, seed=0):
    observ = tf.random.stateless_normal((batch, time, *obs_space.shape), seed=(seed, 0))
    return observ, tf.zeros((batch, time), tf.bool)


def _call(net, obs_space=OBS, batch=B, time=T, seed=0):
    observ, reset = _inputs(obs_space, batch, time, seed)
    return net(observ, reset, net.initial_state(batch))


def _assert_samples_in_space(actions, space):
    flat = np.asarray(actions).reshape((-1, *space.shape))
    assert all(space.contains(action) for action in flat)


@pytest.mark.parametrize("obs_shape", [(1,), (2, 3), (2, 3, 4)])
def test_gaussian_output_shapes_and_dtypes(obs_shape):
    obs_space = gym.spaces.Box(-1.0, 1.0, obs_shape, np.float32)
    out = _call(_network(BOX, obs_space), obs_space)
    assert isinstance(out, NetworkOutput)
    action = out.policy.sample()
    assert action.shape == (B, T, 2) and action.dtype == tf.float32
    assert out.value.shape == (B, T) and out.value.dtype == tf.float32
    assert out.state.shape == (B, 0)
    _assert_samples_in_space(action, BOX)


@pytest.mark.parametrize(
    "space, shape, dtype",
    [(BOX, (2,), tf.float32), (DISCRETE, (), tf.int32), (MULTI_DISCRETE, (3,), tf.int32)],
)
def test_policy_sample_mode_log_prob_entropy(space, shape, dtype):
    out = _call(_network(space))
    action, mode = out.policy.sample(), out.policy.mode()
    assert action.shape == mode.shape == (B, T, *shape)
    assert action.dtype == mode.dtype == dtype
    _assert_samples_in_space(action, space)
    _assert_samples_in_space(mode, space)
    assert out.policy.log_prob(action).shape == (B, T)
    assert out.policy.entropy().shape == (B, T)
    assert np.all(np.isfinite(out.policy.entropy()))


@pytest.mark.parametrize("space", [BOX, DISCRETE, MULTI_DISCRETE])
def test_mode_is_deterministic(space):
    net = _network(space, init_output_factor=1.0)
    np.testing.assert_array_equal(_call(net).policy.mode(), _call(net).policy.mode())


def test_multi_discrete_never_samples_masked_entries():
    # A large output factor makes the raw padding logits large, which the mask must override.
    out = _call(_network(MULTI_DISCRETE, init_output_factor=5.0), batch=2, time=1)
    samples = out.policy.sample(4000, seed=1).numpy().reshape(-1, 3)
    assert np.all(samples >= 0) and np.all(samples < MULTI_DISCRETE.nvec)
    _assert_samples_in_space(out.policy.mode(), MULTI_DISCRETE)
    probs = out.policy.distribution.probs_parameter().numpy()
    assert np.all(probs[..., 0, 2:] == 0) and np.all(probs[..., 2, 3:] == 0)


def test_multi_discrete_samples_every_valid_entry_at_init():
    out = _call(_network(MULTI_DISCRETE), batch=1, time=1)
    samples = out.policy.sample(2000, seed=2).numpy().reshape(-1, 3)
    for index, n in enumerate(MULTI_DISCRETE.nvec):
        assert set(samples[:, index]) == set(range(n))


@pytest.mark.parametrize("network", ["feed_forward_gaussian", "recurrent_gaussian"])
def test_init_std_and_small_initial_mean(network):
    out = _call(_network(BOX, network=network))
    assert_float32_close(out.policy.stddev(), np.full((B, T, 2), 0.5))
    assert np.max(np.abs(out.policy.mean())) < 0.1


@pytest.mark.parametrize(
    "space, network, distribution",
    [
        (BOX, "feed_forward_gaussian", tfd.Normal),
        (DISCRETE, "feed_forward_categorical", tfd.Categorical),
        (MULTI_DISCRETE, "feed_forward_multi_categorical", tfd.Categorical),
    ],
)
def test_auto_picks_network_by_action_space(space, network, distribution):
    net = _network(space)
    assert net.name == network
    policy = _call(net, batch=1, time=1).policy
    assert isinstance(getattr(policy, "distribution", policy), distribution)


def _kernels(net):
    """Kernel shapes by path within the model, e.g. {"value_hidden_0/kernel": (6, 5), ...}."""
    paths = {v.path.split("/", 1)[1]: tuple(v.shape) for v in net.variables}
    return {path: shape for path, shape in paths.items() if path.endswith("kernel")}


@pytest.mark.parametrize("space", [BOX, DISCRETE, MULTI_DISCRETE])
def test_policy_and_value_layers_set_their_own_widths(space):
    obs_space = gym.spaces.Box(-1.0, 1.0, (2, 3), np.float32)  # Flattened to 6 inputs.
    kernels = _kernels(_network(space, obs_space, policy_layers=(8, 7), value_layers=(5,)))
    assert kernels.pop("policy_hidden_0/kernel") == (6, 8)
    assert kernels.pop("policy_hidden_1/kernel") == (8, 7)
    assert kernels.pop("value_hidden_0/kernel") == (6, 5)
    assert kernels.pop("value/kernel") == (5, 1)
    # What remains is the policy head, on the last policy layer.
    assert kernels and all(path.startswith("policy/") for path in kernels)
    assert all(shape[0] == 7 for shape in kernels.values())


def test_recurrent_policy_layers_are_the_torso_and_value_layers_follow_the_gru():
    obs_space = gym.spaces.Box(-1.0, 1.0, (2, 3), np.float32)
    config = dict(network="recurrent_gaussian", policy_layers=(8, 7), value_layers=(5, 3))
    kernels = _kernels(_network(BOX, obs_space, recurrent_units=4, **config))
    assert kernels == {
        "torso_0/kernel": (6, 8),
        "torso_1/kernel": (8, 7),
        "gru/kernel": (7, 12),  # Three gates of 4 units.
        "gru/recurrent_kernel": (4, 12),
        "policy/mean/kernel": (4, 2),
        "value_hidden_0/kernel": (4, 5),
        "value_hidden_1/kernel": (5, 3),
        "value/kernel": (3, 1),
    }


def test_config_with_attribute_access():
    config = types.SimpleNamespace(**{**CONFIG, "network": "feed_forward_categorical"})
    assert make_network(OBS, DISCRETE, config).name == "feed_forward_categorical"


@pytest.mark.parametrize("network", ["feed_forward_gaussian", "recurrent_gaussian"])
def test_gradients_reach_every_variable(network):
    net = _network(BOX, network=network)
    with tf.GradientTape() as tape:
        out = _call(net)
        loss = tf.reduce_sum(out.policy.log_prob(tf.ones((B, T, 2)))) + tf.reduce_sum(out.value)
    grads = tape.gradient(loss, net.trainable_variables)
    assert len(grads) == len(net.trainable_variables) > 0
    assert all(grad is not None for grad in grads)


def _recurrent():
    return _network(BOX, network="recurrent_gaussian", init_output_factor=1.0)


def _summary(out):
    """Policy mean and value side by side, [B, T, action_dim + 1]."""
    return tf.concat([out.policy.mean(), out.value[..., None]], axis=-1)


def test_gru_unroll_equals_single_steps():
    net = _recurrent()
    observ, _ = _inputs(time=5)
    reset = tf.constant([[False, False, True, False, False]] * B)
    initial = tf.random.stateless_normal((B, 4), seed=(3, 0))
    unrolled = net(observ, reset, initial)
    state, steps = initial, []
    for t in range(5):
        out = net(observ[:, t : t + 1], reset[:, t : t + 1], state)
        steps.append(_summary(out))
        state = out.state
    np.testing.assert_allclose(_summary(unrolled), np.concatenate(steps, axis=1), atol=1e-5)
    np.testing.assert_allclose(unrolled.state, state, atol=1e-5)


def test_gru_reset_restarts_from_zero_state():
    net = _recurrent()
    observ, _ = _inputs(time=5)
    reset = tf.constant([[False, False, True, False, False]] * B)
    carried = net(observ, reset, tf.random.stateless_normal((B, 4), seed=(4, 0)))
    fresh = net(observ[:, 2:], tf.zeros((B, 3), tf.bool), net.initial_state(B))
    np.testing.assert_allclose(_summary(carried)[:, 2:], _summary(fresh), atol=1e-5)
    no_reset = net(observ, tf.zeros_like(reset), tf.random.stateless_normal((B, 4), seed=(4, 0)))
    assert not np.allclose(_summary(no_reset)[:, 2], _summary(fresh)[:, 0], atol=1e-3)


def test_gru_state_shape():
    out = _call(_recurrent())
    assert out.state.shape == (B, 4) and out.state.dtype == tf.float32


@pytest.mark.parametrize("network", ["feed_forward_gaussian", "recurrent_gaussian"])
def test_tf_function_traces_once_for_same_shapes(network):
    net = _network(BOX, network=network)
    traces = []

    @tf.function
    def act(observ, reset, state):
        traces.append(1)
        out = net(observ, reset, state)
        return out.policy.sample(), out.policy.log_prob(out.policy.mode()), out.value, out.state

    for seed in range(3):
        observ, reset = _inputs(batch=8, time=1, seed=seed)
        action, log_prob, value, state = act(observ, reset, net.initial_state(8))
        assert action.shape == (8, 1, 2) and log_prob.shape == value.shape == (8, 1)
    assert len(traces) == 1


def test_recurrent_runs_with_unknown_time_dimension():
    net = _recurrent()
    signature = [
        tf.TensorSpec((None, None, 3), tf.float32),
        tf.TensorSpec((None, None), tf.bool),
        tf.TensorSpec((None, 4), tf.float32),
    ]
    unroll = tf.function(lambda o, r, s: _summary(net(o, r, s)), input_signature=signature)
    observ, reset = _inputs(time=3)
    expected = net(observ, reset, net.initial_state(B))
    np.testing.assert_allclose(
        unroll(observ, reset, net.initial_state(B)), _summary(expected), atol=1e-5
    )


@pytest.mark.parametrize(
    "network, action_space, needed",
    [
        ("auto", gym.spaces.Dict({"a": DISCRETE}), "Box -> feed_forward_gaussian"),
        ("auto", gym.spaces.Tuple((DISCRETE, DISCRETE)), "Discrete -> feed_forward_categorical"),
        ("auto", gym.spaces.Box(-1.0, 1.0, (2, 2)), "Box action space of shape (n,)"),
        ("feed_forward_gaussian", DISCRETE, "Box action space of shape (n,)"),
        ("recurrent_gaussian", gym.spaces.MultiBinary(3), "Box action space of shape (n,)"),
        ("feed_forward_categorical", BOX, "Discrete action space"),
        ("feed_forward_categorical", gym.spaces.Discrete(3, start=1), "start=0"),
        ("feed_forward_multi_categorical", DISCRETE, "MultiDiscrete action space"),
        ("feed_forward_multi_categorical", gym.spaces.MultiDiscrete([[2, 3]]), "1-D nvec"),
    ],
)
def test_unsupported_action_space_raises(network, action_space, needed):
    with pytest.raises(ValueError) as info:
        _network(action_space, network=network)
    assert repr(action_space) in str(info.value)
    assert needed in str(info.value)


def test_unsupported_observation_space_raises():
    with pytest.raises(ValueError, match=r"observation space Discrete\(4\).*needs a Box"):
        make_network(gym.spaces.Discrete(4), DISCRETE, CONFIG)


def test_unknown_network_name_raises():
    with pytest.raises(ValueError) as info:
        _network(BOX, network="transformer")
    message = str(info.value)
    assert "'transformer'" in message
    for name in [
        "auto",
        "feed_forward_gaussian",
        "feed_forward_categorical",
        "feed_forward_multi_categorical",
        "recurrent_gaussian",
    ]:
        assert name in message


def test_missing_config_entry_raises():
    config = {key: value for key, value in CONFIG.items() if key != "init_std"}
    with pytest.raises(KeyError, match="init_std"):
        make_network(OBS, BOX, config)
    assert make_network(OBS, DISCRETE, config).name == "feed_forward_categorical"


@pytest.mark.parametrize("network", ["feed_forward_categorical", "recurrent_categorical"])
def test_value_streams_get_a_head_each_on_the_shared_value_features(network):
    plain = _network(DISCRETE, network=network)
    net = make_network(OBS, DISCRETE, {**CONFIG, "network": network}, value_streams=("", "_int"))
    output = _call(net)
    assert set(output.values) == {"", "_int"} and set(_call(plain).values) == {""}
    assert output.values[""].shape == output.values["_int"].shape == (B, T)
    assert not np.allclose(output.values[""], output.values["_int"])
    assert len(net.trainable_variables) == len(plain.trainable_variables) + 2
    assert sum("value_int" in v.path for v in net.trainable_variables) == 2


def test_a_builder_without_value_streams_is_refused_for_two_streams(monkeypatch):
    def one_head(observation_space, action_space, config):
        return make_network(observation_space, action_space, {**config, "network": "auto"})

    monkeypatch.setitem(sys.modules, "one_head_nets", types.SimpleNamespace(one_head=one_head))
    config = {**CONFIG, "network": "one_head_nets:one_head"}
    with pytest.raises(ValueError, match="one value head.*value_streams"):
        make_network(OBS, DISCRETE, config, value_streams=("", "_int"))
