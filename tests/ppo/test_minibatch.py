"""Tests that the config selects and parameterizes the losses of `agents.ppo.losses`.

The losses themselves are tested in test_losses.py; here a fixed, hand-made minibatch checks the
wiring: which loss each `policy_loss` runs, with which settings, and how the total combines them.
"""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_probability as tfp

from agents import tools
from agents.ppo import algorithm, losses
from agents.ppo.algorithm import PPO
from agents.ppo.networks.contract import NetworkOutput
from agents.scripts import configs
from tests.floats import assert_float32_close

tfd = tfp.distributions

# Two sequences of three steps. The ratios exp(log_prob - old) are 1, 1.65, 0.61, 4.95, 3.32 and
# 0.90: several outside the clip range, two above the dual-clip bound with negative advantages.
OLD_LOG_PROB = tf.constant([[-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0]])
LOG_PROB = tf.constant([[-1.0, -0.5, -1.5], [0.6, 0.2, -1.1]])
ADVANTAGE = tf.constant([[1.0, 1.0, -1.0], [-2.0, -1.0, 0.5]])


def _config(**overrides):
    config = configs.debug()
    config.update(clip_ratio=0.2, dual_clip=3.0, kl_target=0.01, value_coef=0.5)
    config.update(overrides)
    return tools.AttrDict(config)


def _policy_batch():
    return {"log_prob": OLD_LOG_PROB, "advantage": ADVANTAGE}


def _close(actual, expected):
    assert_float32_close(float(actual), float(expected))


@pytest.mark.parametrize("loss", ["clip", "dual_clip"])
def test_policy_objective_runs_the_configured_clipped_loss(loss):
    config = _config(policy_loss=loss)
    actual, clipfrac, kl = algorithm.policy_objective(LOG_PROB, _policy_batch(), 1.0, config)
    if loss == "clip":
        expected = losses.clip_policy_loss(LOG_PROB, OLD_LOG_PROB, ADVANTAGE, 0.2)
    else:
        expected = losses.dual_clip_policy_loss(LOG_PROB, OLD_LOG_PROB, ADVANTAGE, 0.2, 3.0)
    _close(actual, expected[0])
    _close(clipfrac, expected[1])
    _close(kl, losses.approx_kl(OLD_LOG_PROB, LOG_PROB))


def test_dual_clip_and_clip_differ_on_this_batch():
    # Otherwise the test above could not tell them apart.
    clip, _, _ = algorithm.policy_objective(LOG_PROB, _policy_batch(), 1.0, _config())
    dual, _, _ = algorithm.policy_objective(
        LOG_PROB, _policy_batch(), 1.0, _config(policy_loss="dual_clip")
    )
    assert float(dual) < float(clip)


@pytest.mark.parametrize("cutoff", [None, 2.0])
def test_policy_objective_kl_penalty_uses_beta_target_and_cutoff(cutoff):
    config = _config(policy_loss="kl_penalty", kl_cutoff_factor=cutoff)
    beta = tf.constant(0.7)
    actual, clipfrac, kl = algorithm.policy_objective(LOG_PROB, _policy_batch(), beta, config)
    expected_kl = losses.approx_kl(OLD_LOG_PROB, LOG_PROB)
    expected = losses.kl_penalty_policy_loss(
        LOG_PROB, OLD_LOG_PROB, ADVANTAGE, expected_kl, 0.7, 0.01, cutoff
    )
    _close(actual, expected)
    _close(kl, expected_kl)
    # The penalty loss has no clipping; clipfrac is still reported, from the clip range.
    _close(clipfrac, losses.clip_policy_loss(LOG_PROB, OLD_LOG_PROB, ADVANTAGE, 0.2)[1])
    without_cutoff = losses.kl_penalty_policy_loss(
        LOG_PROB, OLD_LOG_PROB, ADVANTAGE, expected_kl, 0.7, 0.01
    )
    # KL is far beyond 2 x kl_target here, so the cutoff adds a large penalty.
    assert (float(actual) > float(without_cutoff) + 1.0) == (cutoff is not None)


class _FixedNetwork:
    """Stands in for a network: the same Gaussian policy and values whatever the input."""

    def __init__(self):
        self.loc = tf.constant([[0.0, 0.5, -0.5], [1.0, 0.0, 0.2]])
        self.scale = tf.constant([[1.0, 0.5, 2.0], [0.8, 1.5, 1.0]])
        self.value = tf.constant([[0.0, 1.0, 2.0], [3.0, 1.1, 0.9]])

    def __call__(self, observ, reset, state):
        del observ, reset
        return NetworkOutput(tfd.Normal(self.loc, self.scale), {"": self.value}, state)


def _minibatch():
    return {
        "observ": tf.zeros([2, 3, 1]),
        "reset": tf.zeros([2, 3], tf.bool),
        "state": tf.zeros([2, 0]),
        "action": tf.constant([[0.3, -0.2, 1.0], [2.0, 0.4, -0.3]]),
        "log_prob": OLD_LOG_PROB,
        "advantage": ADVANTAGE,
        "value": tf.constant([[0.5, 0.5, 0.5], [2.0, 2.0, 0.0]]),  # At collection time.
        "return": tf.constant([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
    }


@pytest.mark.parametrize(
    "policy_loss, value_clip, entropy_coef",
    [("clip", None, 0.0), ("clip", 0.2, 0.01), ("dual_clip", 0.2, 0.0), ("kl_penalty", None, 0.1)],
)
def test_minibatch_loss_combines_the_configured_losses(policy_loss, value_clip, entropy_coef):
    config = _config(policy_loss=policy_loss, value_clip=value_clip, entropy_coef=entropy_coef)
    network, batch, beta = _FixedNetwork(), _minibatch(), tf.constant(1.0)
    loss, metrics = algorithm.minibatch_loss(network, batch, beta, config)

    policy = tfd.Normal(network.loc, network.scale)
    log_prob = policy.log_prob(batch["action"])
    policy_loss_value, clipfrac, kl = algorithm.policy_objective(log_prob, batch, beta, config)
    value_loss = losses.value_loss(network.value, batch["value"], batch["return"], value_clip)
    entropy = tf.reduce_mean(policy.entropy())
    _close(loss, policy_loss_value + 0.5 * value_loss - entropy_coef * entropy)
    _close(metrics["policy_loss"], policy_loss_value)
    _close(metrics["value_loss"], value_loss)
    _close(metrics["entropy"], entropy)
    _close(metrics["approx_kl"], kl)
    _close(metrics["clipfrac"], clipfrac)


def test_an_entropy_weight_given_replaces_the_configs():
    # What a decaying entropy schedule passes: the loss moves by the weights' difference
    # times the entropy (here the Normal's of scale 0.5 and 2: mean 1.4189 + log(0.5 * 2)).
    network, batch, beta = _FixedNetwork(), _minibatch(), tf.constant(1.0)
    config = _config(entropy_coef=0.1)
    full, metrics = algorithm.minibatch_loss(network, batch, beta, config)
    scaled, _ = algorithm.minibatch_loss(network, batch, beta, config, entropy_coef=0.025)
    entropy = float(metrics["entropy"])
    _close(scaled - full, 0.075 * entropy)
    zero, _ = algorithm.minibatch_loss(network, batch, beta, config, entropy_coef=0.0)
    _close(zero - full, 0.1 * entropy)


def test_value_clip_changes_the_value_loss_on_this_batch():
    network, batch, beta = _FixedNetwork(), _minibatch(), tf.constant(1.0)
    _, unclipped = algorithm.minibatch_loss(network, batch, beta, _config())
    _, clipped = algorithm.minibatch_loss(network, batch, beta, _config(value_clip=0.2))
    assert float(clipped["value_loss"]) > float(unclipped["value_loss"])


def _sgd_ppo(max_grad_norm):
    envs = [tools.MockEnvironment((3,), (2,), 5, 5, index) for index in range(2)]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    config = _config(optimizer="sgd", learning_rate=1.0, max_grad_norm=max_grad_norm)
    return PPO(batch_env, config, seed=0)


def _sequences(ppo):
    """A minibatch of four one-step sequences with large returns, hence large gradients."""
    count = 4
    observ = tf.reshape(tf.range(count * 3, dtype=tf.float32) / 10.0, [count, 1, 3])
    return {
        "observ": observ,
        "reset": tf.zeros([count, 1], tf.bool),
        "state": ppo.network.initial_state(count),
        "action": tf.ones([count, 1, 2]),
        "log_prob": tf.fill([count, 1], -2.0),
        "advantage": tf.constant([[1.0], [-1.0], [2.0], [-0.5]]),
        "value": tf.zeros([count, 1]),
        "return": tf.fill([count, 1], 50.0),
    }


@pytest.mark.parametrize("max_grad_norm", [0.1, None])
def test_gradients_are_clipped_to_max_grad_norm(max_grad_norm):
    ppo = _sgd_ppo(max_grad_norm)
    batch = _sequences(ppo)
    variables = ppo._trainable_variables()
    with tf.GradientTape() as tape:
        loss, _ = ppo._loss(batch)
    gradients = tape.gradient(loss, variables)
    norm = float(tf.linalg.global_norm(gradients))
    assert norm > 1.0  # Well above the clip norm of 0.1.
    before = [v.numpy().copy() for v in variables]

    metrics = ppo._gradient_step(batch)

    _close(metrics["grad_norm"], norm)  # Reported before clipping.
    scale = min(1.0, max_grad_norm / norm) if max_grad_norm else 1.0
    # Plain SGD at learning rate 1 subtracts the applied (clipped) gradient itself.
    for old, variable, gradient in zip(before, variables, gradients):
        np.testing.assert_allclose(
            old - variable.numpy(), scale * gradient.numpy(), rtol=1e-4, atol=1e-6
        )
    steps = [old - variable.numpy() for old, variable in zip(before, variables)]
    applied = np.sqrt(sum(np.sum(step**2) for step in steps))
    assert applied == pytest.approx(max_grad_norm or norm, rel=1e-4)
