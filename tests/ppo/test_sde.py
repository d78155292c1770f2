"""Tests for gSDE: its std, exploration matrices, head, network choice and use in PPO."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.ppo.algorithm import PPO, Evaluator
from agents.ppo.export import export_policy
from agents.ppo.networks.contract import NetworkOutput
from agents.ppo.networks.mlp import make_network
from agents.ppo.networks.sde import EPSILON, ExplorationNoise, exploration_noise, sde_std
from agents.scripts import configs
from tests.floats import assert_float32_close

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
BOX = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)


def _naive_std(features, log_std):
    """Std of sum_f features[n, f] * W[f, a], W[f, a] ~ N(0, exp(log_std[f, a])^2): loops."""
    count, (size, actions) = len(features), log_std.shape
    std = np.zeros((count, actions))
    for n in range(count):
        for a in range(actions):
            variance = sum(features[n, f] ** 2 * np.exp(log_std[f, a]) ** 2 for f in range(size))
            std[n, a] = np.sqrt(variance + EPSILON)
    return std


def _network_config(**overrides):
    config = dict(configs.debug(), policy_layers=[8, 5], init_std=0.5, sde_sample_freq=4)
    return tools.AttrDict({**config, **overrides})


def test_sde_std_by_hand():
    # Features (1, 2) with entry stds 1 and 0.5: variance 1 * 1 + 4 * 0.25 = 2.
    log_std = np.log([[1.0], [0.5]]).astype(np.float32)
    std = sde_std(tf.constant([[1.0, 2.0]]), tf.constant(log_std))
    assert_float32_close(std.numpy(), [[np.sqrt(2.0 + EPSILON)]])


def test_sde_std_matches_naive_reference():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(6, 4)).astype(np.float32)
    log_std = rng.normal(scale=0.5, size=(4, 3)).astype(np.float32)
    std = sde_std(tf.constant(features), tf.constant(log_std)).numpy()
    assert_float32_close(std, _naive_std(features, log_std))


def test_noise_has_the_std_the_head_assumes():
    # 4,000 environments seeing the same features: their noise is spread as sde_std says.
    log_std = tf.Variable(np.log([[0.3, 1.0], [0.6, 0.2], [1.0, 0.5]]).astype(np.float32))
    features = tf.tile(tf.constant([[0.5, -1.0, 2.0]]), [4000, 1])
    noise = ExplorationNoise(log_std, 4000, sample_freq=1)
    sample = noise(features, tf.constant(0), tf.random.Generator.from_seed(0)).numpy()
    expected = sde_std(features[:1], log_std).numpy()[0]
    np.testing.assert_allclose(sample.mean(0), [0.0, 0.0], atol=4 * expected.max() / np.sqrt(4000))
    np.testing.assert_allclose(sample.std(0), expected, rtol=0.05)


@pytest.mark.parametrize(
    "sample_freq, redraws",
    [(3, [True, False, False, True, False, False, True]), (0, [True] + [False] * 6)],
)
def test_matrices_are_redrawn_every_sample_freq_rollout_steps(sample_freq, redraws):
    log_std = tf.Variable(tf.zeros([3, 2]))
    noise = ExplorationNoise(log_std, 2, sample_freq)
    rng, features = tf.random.Generator.from_seed(1), tf.ones([2, 3])
    step = tf.function(lambda index: noise(features, index, rng))
    previous, seen = noise.matrices.numpy().copy(), []
    for index in range(7):
        value = step(tf.constant(index)).numpy()
        matrices = noise.matrices.numpy().copy()
        seen.append(not np.array_equal(matrices, previous))
        # The noise of a step is drawn from the matrices in force at that step.
        assert_float32_close(value, np.einsum("bf,bfa->ba", features, matrices))
        previous = matrices
    assert seen == redraws
    assert not np.array_equal(matrices[0], matrices[1])  # One matrix per environment.


def test_new_matrices_use_the_current_log_std():
    log_std = tf.Variable(tf.fill([2, 1], np.log(1e-3).astype(np.float32)))
    noise = ExplorationNoise(log_std, 500, 1)
    rng, features = tf.random.Generator.from_seed(2), tf.ones([500, 2])
    small = noise(features, tf.constant(0), rng).numpy().std()
    log_std.assign(tf.zeros([2, 1]))
    large = noise(features, tf.constant(0), rng).numpy().std()
    np.testing.assert_allclose([small, large], [1e-3 * np.sqrt(2), np.sqrt(2)], rtol=0.1)


def test_network_with_sde_has_a_feature_by_action_log_std():
    network = make_network(OBS, BOX, _network_config())
    assert network.policy_head.state_dependent
    assert tuple(network.policy_head.log_std.shape) == (5, 2)
    assert_float32_close(network.policy_head.log_std.numpy(), np.log(0.5))
    plain = make_network(OBS, BOX, _network_config(sde_sample_freq=None))
    assert not plain.policy_head.state_dependent
    assert tuple(plain.policy_head.log_std.shape) == (2,)


@pytest.mark.parametrize("network", ["feed_forward_gaussian", "recurrent_gaussian"])
def test_sde_distribution_is_normal_with_the_feature_std(network):
    model = make_network(OBS, BOX, _network_config(network=network, recurrent_units=6))
    observ = tf.random.stateless_normal([3, 4, 3], seed=(0, 1))
    reset = tf.zeros([3, 4], tf.bool)
    output = model(observ, reset, model.initial_state(3))
    features = output.features.numpy().reshape(12, -1)
    std = _naive_std(features, model.policy_head.log_std.numpy()).reshape(3, 4, 2)
    assert_float32_close(output.policy.stddev().numpy(), std)
    action = np.zeros([3, 4, 2], np.float32) + 0.3
    mean = output.policy.mean().numpy()
    expected = np.sum(
        -0.5 * ((action - mean) / std) ** 2 - np.log(std) - 0.5 * np.log(2 * np.pi), axis=-1
    )
    assert_float32_close(output.policy.log_prob(action).numpy(), expected)


def test_std_trains_only_log_std_not_the_features():
    model = make_network(OBS, BOX, _network_config())
    observ = tf.random.stateless_normal([2, 3, 3], seed=(1, 1))
    with tf.GradientTape() as tape:
        output = model(observ, tf.zeros([2, 3], tf.bool), model.initial_state(2))
        entropy = tf.reduce_sum(output.policy.entropy())  # A function of the std alone.
    variables = model.trainable_variables
    gradients = dict(zip([v.path for v in variables], tape.gradient(entropy, variables)))
    assert np.abs(gradients.pop(model.policy_head.log_std.path).numpy()).sum() > 0
    assert all(g is None or not np.any(g.numpy()) for g in gradients.values())


def test_sde_on_discrete_actions_is_refused_by_name():
    with pytest.raises(ValueError, match="sde_sample_freq.*Discrete"):
        make_network(OBS, gym.spaces.Discrete(3), _network_config())


class _Featureless:
    """A user's network that keeps `inner`'s head but returns no features."""

    def __init__(self, inner):
        self.inner, self.policy_head = inner, inner.policy_head
        self.initial_state = inner.initial_state

    def __call__(self, observ, reset, state):
        output = self.inner(observ, reset, state)
        return NetworkOutput(output.policy, output.values, output.state)


@pytest.mark.parametrize(
    "sde_head, features, lacks",
    [
        (False, True, "a state-dependent Gaussian policy_head"),
        (True, False, "the features its policy head sees in its NetworkOutput"),
    ],
)
def test_a_network_unfit_for_sde_is_refused_naming_what_it_lacks_and_what_to_set(
    sde_head, features, lacks
):
    network = make_network(OBS, BOX, _network_config(sde_sample_freq=4 if sde_head else None))
    network = network if features else _Featureless(network)
    with pytest.raises(ValueError) as error:
        exploration_noise(network, OBS.shape, 3, 4, "my_net:build")
    message = str(error.value)
    assert message.startswith(f"sde_sample_freq=4 (gSDE) needs {lacks}")
    assert "network 'my_net:build' lacks: set sde_sample_freq=None" in message
    assert "\n" not in message


def test_a_network_fit_for_sde_gets_matrices_of_its_head_for_each_env():
    network = make_network(OBS, BOX, _network_config())
    noise = exploration_noise(network, OBS.shape, 3, 4, "feed_forward_gaussian")
    assert noise.matrices.shape == (3, 5, 2)  # 3 envs, 5 features of the last layer, 2 actions.


def _mock_env(count=3):
    envs = [tools.MockEnvironment((3,), (2,), 20, 30, index) for index in range(count)]
    return tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True, clip_actions=True))


def test_ppo_acts_with_the_mean_plus_features_times_the_current_matrix():
    batch_env = _mock_env()
    config = _network_config(rollout_length=8, num_minibatches=2, normalize_observ=False)
    ppo = PPO(batch_env, config, seed=3)
    run = tf.function(lambda: tools.simulate_steps(batch_env, ppo, 7))
    run()  # Seven of the rollout's eight steps: no update yet, the network is the one acting.
    data = ppo.last_rollout(["observ", "action", "log_prob", "reset", "state"])
    observ = tf.constant(np.swapaxes(data["observ"][:7], 0, 1))  # [B, T, 3]
    output = ppo.network(observ, tf.zeros([3, 7], tf.bool), ppo.network.initial_state(3))
    mean, features = output.policy.mean().numpy(), output.features.numpy()
    noise = np.swapaxes(data["action"][:7], 0, 1) - mean
    in_force = np.einsum("btf,bfa->bta", features, ppo._sde.matrices.numpy())
    # Steps 4-6 use the matrices drawn at step 4 (sample_freq 4); steps 0-3 used earlier ones.
    np.testing.assert_allclose(noise[:, 4:], in_force[:, 4:], atol=1e-5)
    assert not np.allclose(noise[:, :4], in_force[:, :4], atol=1e-3)
    log_prob = output.policy.log_prob(mean + noise).numpy()
    # One step at a time against a 7-step unroll: float32 rounding of values near 1, so an
    # absolute tolerance too (log-probs near zero met a relative one by chance only).
    stored = np.swapaxes(data["log_prob"][:7], 0, 1)
    np.testing.assert_allclose(stored, log_prob, rtol=1e-5, atol=1e-5)


def test_exported_sde_policy_acts_with_the_mean(tmp_path):
    batch_env = _mock_env()
    ppo = PPO(batch_env, _network_config(rollout_length=8, num_minibatches=2), seed=4)
    tf.function(lambda: tools.simulate_steps(batch_env, ppo, 8))()  # One rollout and update.
    observ = np.random.default_rng(5).uniform(-1, 1, (3, 3)).astype(np.float32)
    evaluator = Evaluator(ppo, batch_env)
    evaluator.begin_episode(tf.range(3))
    expected = evaluator.perform(tf.range(3), tf.constant(observ)).numpy()
    output = ppo.network(ppo.normalize(observ)[:, None], tf.ones([3, 1], tf.bool), tf.zeros([3, 0]))
    assert_float32_close(expected, output.policy.mean().numpy()[:, 0])
    loaded = tf.saved_model.load(export_policy(ppo, str(tmp_path / "policy")))
    np.testing.assert_allclose(loaded(observ).numpy(), expected, rtol=1e-5, atol=1e-6)
