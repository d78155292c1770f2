"""Tests for the RND CNN+GRU policy: the network contract with a value head per stream."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.networks.cnn_gru import MIN_FRAME_SIZE, CnnGruPolicy
from agents.ppo.networks.contract import NetworkOutput, act

SHAPE = (MIN_FRAME_SIZE, MIN_FRAME_SIZE, 4)
ACTIONS = gym.spaces.Discrete(5)
B, T, HID, MEM = 3, 5, 8, 6


def _policy(**overrides):
    options = {"policy_size": "small", "hidsize": HID, "memsize": MEM, "extrahid": True}
    return CnnGruPolicy(SHAPE, ACTIONS, **{**options, **overrides})


def _randomized(**overrides):
    """A policy with O(1) random weights, so logits and values depend visibly on the inputs."""
    net = _policy(**overrides)
    for index, variable in enumerate(net.variables):
        fan_in = int(np.prod(variable.shape[:-1])) if len(variable.shape) > 1 else 4
        noise = tf.random.stateless_normal(variable.shape, seed=(index, 7))
        variable.assign(noise / np.sqrt(fan_in))
    return net


def _frames(batch=B, time=T, seed=0):
    frames = tf.random.stateless_uniform((batch, time, *SHAPE), (seed, 1), 0, 256, tf.int32)
    return tf.cast(frames, tf.uint8)


def _new(time=T, start=None):
    new = np.zeros((B, time), bool)
    if start is not None:
        new[:, start] = True
    return tf.constant(new)


def _state(seed=0):
    return tf.random.stateless_uniform((B, MEM), (seed, 2), -1.0, 1.0)


def _summary(out):
    """Log-probs of actions 0 and 3, entropy and both values side by side: [B, T, 5]."""
    policy, values = out.policy, out.values
    columns = [policy.log_prob(tf.fill(tf.shape(values["_int"]), a)) for a in (0, 3)]
    columns += [policy.entropy(), values["_int"], values[""]]
    return tf.stack(columns, axis=-1).numpy()


def test_output_is_the_network_contract_with_a_value_per_stream():
    net = _policy()
    out = net(_frames(), _new(), net.initial_state(B))
    assert isinstance(out, NetworkOutput) and sorted(out.values) == ["", "_int"]
    action = out.policy.sample()
    assert action.shape == (B, T) and action.dtype == tf.int32
    assert np.all((action.numpy() >= 0) & (action.numpy() < ACTIONS.n))
    assert out.policy.logits_parameter().shape == (B, T, ACTIONS.n)
    for value in out.values.values():
        assert value.shape == (B, T) and value.dtype == tf.float32
    assert out.value is out.values[""]
    assert out.state.shape == (B, MEM) and out.state.dtype == tf.float32


def test_one_step_shapes_dtypes_and_seeded_sampling():
    net = _randomized()
    frames, new, state = _frames(time=1)[:, 0], tf.zeros(B, tf.bool), net.initial_state(B)
    out = act(net, frames, new, state)
    action = out.policy.sample(seed=tf.constant([1, 2]))
    assert action.shape == (B, 1) and action.dtype == tf.int32
    for value in out.values.values():
        assert value.shape == (B,) and value.dtype == tf.float32
    assert np.all(out.policy.log_prob(action).numpy() < 0)
    assert out.state.shape == (B, MEM)
    again = act(net, frames, new, state).policy.sample(seed=tf.constant([1, 2]))
    np.testing.assert_array_equal(action, again)


def test_an_unrolled_sequence_equals_single_steps_carrying_the_state():
    net = _randomized()
    frames, new, initial = _frames(), _new(start=2), _state()
    unrolled = net(frames, new, initial)
    state, steps = initial, []
    for t in range(T):
        out = act(net, frames[:, t], new[:, t], state)
        step = net(frames[:, t : t + 1], new[:, t : t + 1], state)
        steps.append(_summary(step))
        np.testing.assert_allclose(out.values["_int"], steps[-1][:, 0, 3])
        np.testing.assert_allclose(out.values[""], steps[-1][:, 0, 4])
        state = out.state
    np.testing.assert_allclose(_summary(unrolled), np.concatenate(steps, axis=1), atol=1e-5)
    np.testing.assert_allclose(unrolled.state, state, atol=1e-5)


def test_new_resets_the_state_before_its_step():
    net = _randomized()
    frames = _frames()
    carried = net(frames, _new(start=2), _state(seed=1))
    fresh = net(frames[:, 2:], _new(time=T - 2), net.initial_state(B))
    np.testing.assert_allclose(_summary(carried)[:, 2:], _summary(fresh), atol=1e-5)
    np.testing.assert_allclose(carried.state, fresh.state, atol=1e-5)
    kept = net(frames, _new(), _state(seed=1))
    assert not np.allclose(_summary(kept)[:, 2], _summary(fresh)[:, 0], atol=1e-3)
    as_float = net(frames, tf.cast(_new(start=2), tf.float32), _state(seed=1))
    np.testing.assert_allclose(_summary(as_float), _summary(carried), atol=1e-6)


def _variables(net):
    return {variable.path.split("/", 1)[1]: variable for variable in net.variables}


def test_rec_gate_init_sets_the_gate_bias_and_keeps_the_state():
    biases = _variables(_policy(rec_gate_init=1.5))
    np.testing.assert_array_equal(biases["gru_gates/bias"], np.full(2 * MEM, 1.5))
    np.testing.assert_array_equal(biases["gru_candidate/bias"], np.zeros(MEM))
    np.testing.assert_array_equal(_variables(_policy())["gru_gates/bias"], np.zeros(2 * MEM))
    frames, state = _frames(time=1)[:, 0], _state()
    no_reset = tf.zeros(B, tf.bool)
    keep = act(_policy(rec_gate_init=30.0), frames, no_reset, state).state
    np.testing.assert_allclose(keep, state, atol=1e-6)
    forget = _policy(rec_gate_init=-30.0)
    other = act(forget, frames, no_reset, _state(seed=5)).state
    np.testing.assert_allclose(act(forget, frames, no_reset, state).state, other, atol=1e-6)


def test_extrahid_adds_residual_layers():
    with_extra, without = _variables(_policy()), _variables(_policy(extrahid=False))
    added = sorted(set(with_extra) - set(without))
    assert added == [
        f"{path}_extra/{w}" for path in ("policy", "value") for w in ("bias", "kernel")
    ]
    assert set(without) < set(with_extra)
    assert with_extra["policy_extra/kernel"].shape == (MEM, MEM)


@pytest.mark.parametrize("policy_size, factor", [("small", 1), ("normal", 2), ("large", 4)])
def test_policy_size_scales_hidden_and_memory_widths(policy_size, factor):
    net = _policy(policy_size=policy_size)
    shapes = {path: tuple(v.shape) for path, v in _variables(net).items()}
    assert net.state_size == MEM * factor
    assert net.initial_state(2).shape == (2, MEM * factor)
    assert shapes["hidden/kernel"] == (64, HID * factor)  # 44x44 frames -> 1x1x64 features.
    assert shapes["gru_candidate/kernel"] == ((MEM + HID) * factor, MEM * factor)
    assert shapes["policy/logits/kernel"] == (MEM * factor, ACTIONS.n)
    # As in the RND code, the policy's conv filters do not grow with the policy size.
    assert [shapes[f"conv{i}/kernel"] for i in (1, 2, 3)] == [
        (8, 8, 4, 32),
        (4, 4, 32, 64),
        (4, 4, 64, 64),
    ]


def test_84x84_frames_give_the_rnd_feature_size():
    net = CnnGruPolicy((84, 84, 4), ACTIONS, policy_size="small", hidsize=4, memsize=4)
    assert _variables(net)["hidden/kernel"].shape == (6 * 6 * 64, 4)


def test_the_tile_stack_embeds_each_8x8_tile_and_trains():
    net = CnnGruPolicy(
        (56, 56, 1), ACTIONS, policy_size="small", hidsize=4, memsize=4, conv_stack="tiles8"
    )
    assert [tuple(v.shape) for v in net.variables if "conv" in v.path and "kernel" in v.path] == [
        (8, 8, 1, 16),
        (3, 3, 16, 64),
        (3, 3, 64, 64),
    ]
    assert _variables(net)["hidden/kernel"].shape == (64, 4)  # 56 -> 7 -> 3 -> 1 cell.
    frames = tf.cast(
        tf.random.stateless_uniform((2, 3, 56, 56, 1), (0, 1), 0, 256, tf.int32), tf.uint8
    )
    with tf.GradientTape() as tape:
        out = net(frames, tf.zeros((2, 3), tf.bool), tf.zeros((2, 4)))
        loss = tf.reduce_sum(out.values[""] + out.values["_int"] + out.policy.entropy())
    assert all(g is not None for g in tape.gradient(loss, net.trainable_variables))


def test_frames_are_scaled_to_unit_range(monkeypatch):
    net = _policy()
    seen = []
    conv_call = net._convs[0].call
    monkeypatch.setattr(net._convs[0], "call", lambda x: seen.append(x) or conv_call(x))
    frames = _frames(time=2)
    frames = tf.concat([frames[:, :1] * 0, frames[:, 1:] * 0 + 255], axis=1)  # All 0, all 255.
    uint8 = net(frames, _new(time=2), net.initial_state(B))
    inputs = seen[0].numpy().reshape(B, 2, -1)
    assert seen[0].dtype == tf.float32
    assert np.all(inputs[:, 0] == 0.0) and np.all(inputs[:, 1] == 1.0)
    as_float = net(tf.cast(frames, tf.float32), _new(time=2), net.initial_state(B))
    np.testing.assert_array_equal(_summary(uint8), _summary(as_float))


def test_tf_function_traces_once_for_the_same_shapes():
    net = _policy()
    traces = []

    @tf.function
    def step(observ, new, state, seed):
        traces.append("step")
        out = act(net, observ, new, state)
        return out.policy.sample(seed=seed)[:, 0], out.state

    @tf.function
    def evaluate(observ, new, state):
        traces.append("sequence")
        out = net(observ, new, state)
        return out.policy.log_prob(tf.zeros_like(new, tf.int32)), out.values["_int"], out.state

    state = net.initial_state(B)
    for seed in range(3):
        frames, seed_tensor = _frames(time=1, seed=seed)[:, 0], tf.constant([seed, 0])
        action, state = step(frames, tf.zeros(B, tf.bool), state, seed_tensor)
        log_prob, _, _ = evaluate(_frames(seed=seed), _new(start=seed), state)
        assert action.shape == (B,) and log_prob.shape == (B, T)
    assert traces == ["step", "sequence"]


def test_gradients_reach_every_variable():
    net = _policy()
    with tf.GradientTape() as tape:
        out = net(_frames(), _new(start=1), _state())
        loss = tf.reduce_sum(out.policy.log_prob(tf.ones((B, T), tf.int32)))
        loss += tf.reduce_sum(out.values["_int"]) + tf.reduce_sum(out.values[""])
    grads = tape.gradient(loss, net.trainable_variables)
    assert len(net.trainable_variables) == len(net.variables) == 22
    assert all(grad is not None for grad in grads)


def test_checkpoint_of_variables_restores_outputs_exactly(tmp_path):
    source, target = _randomized(), _policy()
    assert [v.path for v in source.variables] == [v.path for v in target.variables]
    frames, new, state = _frames(), _new(start=3), _state()
    expected = source(frames, new, state)
    assert not np.allclose(_summary(target(frames, new, state)), _summary(expected))
    path = tf.train.Checkpoint(weights=list(source.variables)).save(str(tmp_path / "ckpt"))
    tf.train.Checkpoint(weights=list(target.variables)).restore(path).assert_consumed()
    restored = target(frames, new, state)
    np.testing.assert_array_equal(_summary(restored), _summary(expected))
    np.testing.assert_array_equal(restored.state, expected.state)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"policy_size": "huge"}, "Unknown policy_size 'huge'"),
        ({"conv_stack": "resnet"}, "Unknown conv_stack 'resnet'; valid: \\['dqn', 'tiles8'\\]"),
        ({"observation_shape": (43, 84, 4)}, "H, W >= 44"),
        ({"observation_shape": (48, 56, 1), "conv_stack": "tiles8"}, "H, W >= 56 for .*tiles8"),
        ({"observation_shape": (84, 84)}, r"shape \(H, W, C\)"),
        ({"action_space": gym.spaces.Box(-1, 1, (2,))}, "Discrete action space"),
    ],
)
def test_invalid_arguments_raise(kwargs, message):
    arguments = {"observation_shape": SHAPE, "action_space": ACTIONS, **kwargs}
    with pytest.raises(ValueError, match=message):
        CnnGruPolicy(**arguments)
