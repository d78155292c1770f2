"""Tests for sampled actions and values of a deployed policy (`Policy`, `sample_step`, `value`)."""

import types

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.policy import Policy
from agents.ppo.export import export_policy
from agents.ppo.networks.contract import act
from tests.floats import assert_float32_close
from tests.ppo.test_algorithm import PPO, _config, _run

DRAWS = 4000  # Samples per observation: the moments below hold within 5 standard errors.


def _agent(action_space=None, **overrides):
    """A PPO agent trained a little on mock envs, so its normalizer is not the identity; its
    weights drawn from a fixed seed, whatever the process ran before (the suite's other tests
    draw from the same global generators)."""
    keras.utils.set_random_seed(0)
    envs = [tools.MockEnvironment((3,), (2,), 3, 9, i, action_space) for i in range(2)]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True, clip_actions=True))
    agent = PPO(batch_env, _config(**overrides), seed=0)
    _run(batch_env, agent, 16)
    return agent


def _set_head(agent, kernel_scale, std=None):
    """Widens the policy head's output (its initial one is near zero) and sets a Gaussian's std.

    A near-uniform categorical or a mode near zero would let a wrong sampler pass the tests.
    """
    head = agent.network.policy_head
    kernel = next(v for v in head.variables if v.name == "kernel")
    rng = np.random.default_rng(0)
    kernel.assign(rng.normal(size=kernel.shape).astype(np.float32) * kernel_scale)
    if std is not None:
        head.log_std.assign(np.log(np.broadcast_to(std, head.log_std.shape)).astype(np.float32))


def _load(agent, path, seed=None):
    return Policy(tf.saved_model.load(export_policy(agent, str(path))), seed=seed)


def _normalized(agent, observ):
    """The numpy reference of the observation normalizer: centered, scaled, clipped at 5."""
    normalizer = agent.observ_normalizer
    mean, var = normalizer.mean.numpy(), normalizer.var.numpy()
    return np.clip((observ - mean) / np.sqrt(var + 1e-8), -5.0, 5.0).astype(np.float32)


def _reference(agent, observ):
    """The network's output on the normalized observations, each the first step of an episode."""
    batch = len(observ)
    state = agent.network.initial_state(batch)
    return act(
        agent.network, tf.constant(_normalized(agent, observ)), tf.ones([batch], bool), state
    )


def _observ(count=4, seed=1):
    return np.random.default_rng(seed).uniform(-1, 1, (count, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def gaussian(tmp_path_factory):
    """A Gaussian agent on Box(-1, 1, (2,)) and two exports: `narrow` (std 0.1 and 0.05,
    samples far inside the bounds) and `wide` (std 3, samples often clipped)."""
    directory = tmp_path_factory.mktemp("gaussian")
    agent = _agent()
    _set_head(agent, kernel_scale=0.1, std=[0.1, 0.05])
    narrow = _load(agent, directory / "narrow", seed=0)
    reference = _reference(agent, _observ())
    _set_head(agent, kernel_scale=0.1, std=3.0)
    wide = _load(agent, directory / "wide", seed=0)
    return types.SimpleNamespace(agent=agent, narrow=narrow, wide=wide, reference=reference)


@pytest.mark.slow
def test_sampled_gaussian_actions_have_the_mean_and_std_of_the_policy(gaussian):
    observ = _observ()
    mean = gaussian.reference.policy.mean()[:, 0].numpy()
    std = gaussian.reference.policy.stddev()[:, 0].numpy()
    assert 0.1 < np.abs(mean).max() < 0.6  # Far from the bounds +-1, yet not near zero.
    np.testing.assert_allclose(std, np.broadcast_to([0.1, 0.05], std.shape), rtol=1e-5)
    samples = gaussian.narrow(np.tile(observ, (DRAWS, 1)), deterministic=False)
    samples = samples.reshape(DRAWS, *mean.shape)
    np.testing.assert_allclose(samples.mean(0), mean, atol=5 * std.max() / np.sqrt(DRAWS))
    np.testing.assert_allclose(samples.std(0), std, rtol=5 / np.sqrt(2 * DRAWS))
    assert_float32_close(gaussian.narrow(observ), mean)  # The default stays the mode.


def test_sampled_actions_stay_in_the_box_and_spread_over_it(gaussian):
    samples = gaussian.wide(np.tile(_observ(), (DRAWS // 4, 1)), deterministic=False)
    assert samples.dtype == np.float32 and samples.min() >= -1.0 and samples.max() <= 1.0
    assert (samples == -1.0).any() and (samples == 1.0).any()  # Std 3: clipped at both bounds.
    inside = samples[np.abs(samples) < 1.0]
    assert len(inside) > samples.size // 4 and len(np.unique(inside)) > 0.99 * len(inside)
    single = gaussian.wide(_observ()[0], deterministic=False)
    assert single.shape == (2,) and np.abs(single).max() <= 1.0


def test_categorical_samples_follow_the_softmax_of_the_logits(tmp_path):
    agent = _agent(gym.spaces.Discrete(3))
    _set_head(agent, kernel_scale=1.0)
    policy = _load(agent, tmp_path / "policy", seed=0)
    observ = _observ()
    logits = _reference(agent, observ).policy.logits_parameter()[:, 0].numpy().astype(np.float64)
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    assert probs.max() > 0.5  # Not near uniform: a wrong sampler would show.
    samples = policy(np.tile(observ, (DRAWS, 1)), deterministic=False).reshape(DRAWS, 4)
    assert samples.dtype == np.int32 and set(np.unique(samples)) <= {0, 1, 2}
    frequencies = np.stack([(samples == action).mean(0) for action in range(3)], axis=1)
    np.testing.assert_allclose(frequencies, probs, atol=5 * 0.5 / np.sqrt(DRAWS))
    np.testing.assert_array_equal(policy(observ), probs.argmax(1))


def test_a_seed_reproduces_the_samples_and_another_seed_differs(gaussian):
    saved, observ = gaussian.narrow.saved_model, _observ()

    def draws(seed):
        policy = Policy(saved, seed=seed)
        return np.stack([policy(observ, deterministic=False) for _ in range(3)])

    first = draws(7)
    np.testing.assert_array_equal(draws(7), first)
    assert not np.array_equal(first[0], first[1])  # Each call draws anew.
    assert np.abs(draws(8) - first).min() > 0
    assert np.abs(draws(None) - draws(None)).min() > 0  # Unseeded: from the system's entropy.
    state = saved.initial_state(tf.constant(4))
    reset = tf.ones([4], tf.bool)

    def sample(seed):
        return saved.sample_step(observ, reset, state, tf.constant(seed))[0].numpy()

    np.testing.assert_array_equal(sample([1, 2]), sample([1, 2]))
    assert np.abs(sample([1, 2]) - sample([1, 3])).min() > 0


def test_value_is_the_value_head_on_the_normalized_observation(gaussian):
    observ = _observ(6)
    observ[4:] *= 50  # The normalizer clips these at 5.
    assert np.abs(_normalized(gaussian.agent, observ)).max() == 5.0
    expected = _reference(gaussian.agent, observ).value.numpy()
    value = gaussian.narrow.value(observ)
    assert value.dtype == np.float32 and value.shape == (6,)
    assert_float32_close(value, expected)
    assert_float32_close(gaussian.narrow.value(observ[2]), expected[2])
    state = gaussian.narrow.saved_model.initial_state(tf.constant(6))
    exported = gaussian.narrow.saved_model.value(observ, tf.ones([6], tf.bool), state)
    assert_float32_close(exported.numpy(), expected)


def test_bad_observations_raise_the_one_line_value_error_in_every_mode(gaussian):
    policy = gaussian.narrow
    calls = [lambda o: policy(o, deterministic=False), policy.value]
    for call in calls:
        with pytest.raises(ValueError, match=r"shape \(4,\): the policy takes \(3,\) or a batch"):
            call(np.zeros(4))
        with pytest.raises(ValueError, match=r"entry \(1, 2\) is nan: the policy acts on finite"):
            call(np.array([[0.1, 0.2, 0.3], [0.1, 0.2, np.nan]]))


def test_a_policy_exported_before_sampling_says_how_to_get_one(gaussian):
    saved = gaussian.narrow.saved_model
    old = types.SimpleNamespace(
        signatures=saved.signatures, step=saved.step, initial_state=saved.initial_state
    )
    policy = Policy(old)
    assert policy(_observ()).shape == (4, 2)
    for call in (lambda: policy(_observ(), deterministic=False), lambda: policy.value(_observ())):
        with pytest.raises(ValueError, match=r"has no '(sample_step|value)'.*load_policy"):
            call()


@pytest.mark.slow
def test_a_recurrent_policy_samples_and_values_from_the_state_it_carries(tmp_path):
    """Sampled calls advance the state as deterministic ones do; `value` leaves it alone."""
    agent = _agent(network="recurrent_gaussian", chunk_length=4)
    _set_head(agent, kernel_scale=0.1, std=0.01)
    saved = _load(agent, tmp_path / "policy").saved_model
    observations = np.random.default_rng(0).uniform(-1, 1, (12, 2, 3)).astype(np.float32)
    state, reset, modes, values, alone = saved.initial_state(tf.constant(2)), True, [], [], []
    for observation in observations:
        values.append(saved.value(observation, tf.fill([2], reset), state).numpy())
        seed = tf.constant([3, 4])
        _, sampled_state = saved.sample_step(observation, tf.fill([2], reset), state, seed)
        action, state = saved.step(observation, tf.fill([2], reset), state)
        np.testing.assert_array_equal(sampled_state.numpy(), state.numpy())
        reset = False
        modes.append(action.numpy())
        alone.append(saved(observation).numpy())
    assert np.abs(np.array(modes) - np.array(alone)).max() > 0.01  # The state matters.
    assert np.abs(modes).max() < 0.9  # Inside the bounds, where clipping leaves the mean alone.

    policy = Policy(saved, seed=0)
    for index, observation in enumerate(observations):
        assert_float32_close(policy.value(observation), values[index])
        if index % 2:
            assert_float32_close(policy(observation), modes[index])
        else:
            policy(observation, deterministic=False)

    tiled = Policy(saved, seed=0)  # Many copies of the two envs: the samples' mean is the mode.
    for index, observation in enumerate(observations):
        samples = tiled(np.tile(observation, (DRAWS // 4, 1)), deterministic=False)
        mean = samples.reshape(-1, 2, 2).mean(0)
        np.testing.assert_allclose(mean, modes[index], atol=5 * 0.01 / np.sqrt(DRAWS // 4))
