"""The network contract: what every policy/value network of the agents is and returns.

A network is a `Network` (a `keras.Model`) called as `network(observ, reset, state)` on B
sequences of T steps: observ [B, T, *observation_shape] float32 (as the agent normalizes
them), reset [B, T] bool (set where an episode starts, so a recurrent network zeroes its state
there) and the state from `initial_state(B)` or from the previous call. It returns a
`NetworkOutput`. Its variables exist once it is built (before the first call), and its
`policy_head` turns features into the action distribution (`distributions.make_policy_head`).
`act` runs one step of B environments. `agents.config.catalogue.NETWORKS` names the networks a
config can choose; a builder `builder(observation_space, action_space, config) -> Network`
elsewhere is chosen with `network: "module:builder"`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import keras
import tensorflow as tf
import tensorflow_probability as tfp

tfd = tfp.distributions


class NetworkOutput(NamedTuple):
    """What every network returns for observations of shape [B, T, ...].

    Attributes:
        policy: Action distribution with batch shape [B, T]; its event shape is the action shape.
        values: State-value estimates by value stream, each [B, T] float32: "" for the
            environment's reward, and one per further stream (e.g. "_int" for an exploration
            bonus).
        state: Recurrent state after the last step, [B, ...]; [B, 0] for feed-forward networks.
        features: What the policy head saw, [B, T, F] (gSDE's noise is a function of them);
            None where a network does not say.
    """

    policy: tfd.Distribution
    values: dict[str, tf.Tensor]
    state: Any
    features: tf.Tensor | None = None

    @property
    def value(self) -> tf.Tensor:
        """The value of the environment's reward stream, [B, T]."""
        return self.values[""]


def act(network, observ: tf.Tensor, reset: tf.Tensor, state: Any) -> NetworkOutput:
    """One step of B environments: `network` on [B, 1, ...] observations.

    Args:
        network: A network returning `NetworkOutput`.
        observ: [B, ...] observations as the network reads them.
        reset: [B] bool, set where an episode starts at this step.
        state: The recurrent state before the step.

    Returns:
        The output with its time axis dropped from values and features ([B]); the policy keeps
        batch shape [B, 1] (slice its samples and log-probs with `[:, 0]`).
    """
    output = network(observ[:, None], reset[:, None], state)
    features = None if output.features is None else output.features[:, 0]
    values = {key: value[:, 0] for key, value in output.values.items()}
    return NetworkOutput(output.policy, values, output.state, features)


class Network(keras.Model):
    """Base class of the networks: the contract in code (see the module).

    A subclass builds its layers in `__init__` (variables created before the first call, never
    inside a traced function) and implements `call`, `initial_state` and `policy_head`.
    """

    def call(self, observ: tf.Tensor, reset: tf.Tensor, state: Any) -> NetworkOutput:
        """Map B sequences of T steps to a `NetworkOutput` (policy of batch shape [B, T],
        values [B, T] by stream, the state after the last step)."""
        raise NotImplementedError

    def initial_state(self, batch_size: int | tf.Tensor) -> Any:
        """The state before an episode's first step: [batch_size, 0] for feed-forward ones."""
        raise NotImplementedError

    @property
    def policy_head(self) -> keras.layers.Layer:
        """The layer that turns the policy features into the action distribution."""
        raise NotImplementedError
