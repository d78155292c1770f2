"""Generalized state-dependent exploration (gSDE; Raffin, Kober and Stulp, CoRL 2021).

Instead of fresh noise at every step, each environment holds an exploration matrix W [F, A]
(F policy features, A action dimensions), drawn with entries W_fa ~ N(0, exp(log_std_fa)^2) and
kept for `sample_freq` steps; the action is `mean(s) + phi(s) @ W`, with phi(s) the features the
policy head sees. The noise is then a smooth function of the state over those steps, which
explores better than white noise on low-frequency control tasks (Pendulum). Given phi, the action
is Gaussian with per-dimension variance `phi^2 @ exp(2 log_std)`: that distribution is what PPO's
log-probabilities, ratios, entropy and KL use (as Stable-Baselines3's
`StateDependentNoiseDistribution` with `full_std=True`, `learn_features=False`, exp, no squash).
The head is `distributions.GaussianHead` with `state_dependent=True`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

EPSILON = 1e-6  # Added to the variance: features near zero would give a zero std.


def sde_std(features: tf.Tensor, log_std: tf.Tensor, epsilon: float = EPSILON) -> tf.Tensor:
    """Std of `features @ W` per action dimension, W_fa ~ N(0, exp(log_std_fa)^2) independent.

    Args:
        features: [N, F] policy features.
        log_std: [F, A] log-stds of the exploration matrix's entries.
        epsilon: Added to the variance.

    Returns:
        [N, A]: sqrt(features^2 @ exp(log_std)^2 + epsilon).
    """
    return tf.sqrt(tf.matmul(tf.square(features), tf.exp(2.0 * log_std)) + epsilon)


class ExplorationNoise(tf.Module):
    """One exploration matrix per environment, redrawn every `sample_freq` rollout steps.

    The matrices are transient state, like the recurrent state: a resumed run draws new ones.

    Args:
        log_std: The head's [F, A] log-std variable; new matrices are drawn with its current value.
        size: Number of environments.
        sample_freq: Redraw at rollout steps 0, k, 2k, ... (k = sample_freq); 0 draws once per
            rollout, at its first step.
    """

    def __init__(self, log_std: tf.Variable, size: int, sample_freq: int) -> None:
        super().__init__(name="sde")
        self._log_std, self._sample_freq = log_std, int(sample_freq)
        self.matrices = tf.Variable(
            tf.zeros([size, *log_std.shape]), trainable=False, name="sde_matrices"
        )

    def __call__(self, features: tf.Tensor, step: tf.Tensor, rng: tf.random.Generator) -> tf.Tensor:
        """Noise of one step, after redrawing the matrices if `step` says so (in tf.function).

        Args:
            features: [B, F] policy features of the step.
            step: Scalar int32 index of the step within the rollout.
            rng: Draws the new matrices.

        Returns:
            [B, A]: `features[b] @ W_b` with the matrices in force at this step.
        """
        due = tf.equal(step % self._sample_freq, 0) if self._sample_freq else tf.equal(step, 0)

        def redraw():
            scale = tf.exp(tf.convert_to_tensor(self._log_std))
            self.matrices.assign(rng.normal(self.matrices.shape) * scale)

        tf.cond(due, redraw, lambda: None)
        return tf.einsum("bf,bfa->ba", tf.stop_gradient(features), self.matrices)


def exploration_noise(
    network: Any, observation_shape: tuple, size: int, sample_freq: int, name: str
) -> ExplorationNoise:
    """The exploration matrices of `size` environments for `network`, checked to suit gSDE.

    gSDE needs what only the network can give: a state-dependent Gaussian head (its log-std
    [F, A] over the F features it sees) and those features in its output. A network of the
    user's may have neither, and would fail deep inside the first traced step.

    Args:
        network: The agent's `contract.Network`.
        observation_shape: Shape of one observation, as the network reads it.
        size: Number of environments.
        sample_freq: As `ExplorationNoise`'s.
        name: The network as the config names it, for the error.

    Raises:
        ValueError: One line saying what the network lacks and what to set instead.
    """
    head = network.policy_head
    lacks = None
    if not getattr(head, "state_dependent", False):
        lacks = "a state-dependent Gaussian policy_head (make_policy_head's 'sde_gaussian')"
    else:
        observ = tf.zeros([1, 1, *observation_shape], tf.float32)
        output = network(observ, tf.zeros([1, 1], tf.bool), network.initial_state(1))
        if output.features is None:
            lacks = "the features its policy head sees in its NetworkOutput (features=)"
    if lacks is not None:
        raise ValueError(
            f"sde_sample_freq={sample_freq} (gSDE) needs {lacks}, which network {name!r} "
            "lacks: set sde_sample_freq=None for per-step noise, or build the network for gSDE "
            "(docs/extending.md)."
        )
    return ExplorationNoise(head.log_std, size, sample_freq)
