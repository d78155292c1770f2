"""The network contract: what every policy/value network of the agents is and returns.

A network is a `Network` (a `keras.Model`) called as `network(observ, reset, state)` on B
sequences of T steps: observ [B, T, *observation_shape] float32 (as the agent normalizes
them), reset [B, T] bool (set where an episode starts, so a recurrent network zeroes its state
there) and the state from `initial_state(B)` or from the previous call. It returns a
`NetworkOutput`. Its variables exist once it is built (before the first call), and its
`policy_head` turns features into the action distribution (`distributions.make_policy_head`).
`act` runs one step of B environments. `agents.config.catalogue.NETWORKS` names the networks a
config can choose; a builder `builder(observation_space, action_space, config) -> Network`
elsewhere is chosen with `network: "module:builder"`. `Weights` lists a network's variables for
checkpoints and SavedModels; `RecurrentState` holds its state between the steps of B envs.
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


CONTRACT = ("call", "initial_state", "policy_head")  # What every network defines itself.


class Network(keras.Model):
    """Base class of the networks: the contract in code (see the module).

    A subclass builds its layers in `__init__` (variables created before the first call, never
    inside a traced function) and defines `call(observ, reset, state) -> NetworkOutput`,
    `initial_state(batch_size)` and the `policy_head` property; a class that lacks one of them
    is refused where it is defined.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [name for name in CONTRACT if not _defined_below_network(cls, name)]
        if missing:
            raise TypeError(
                f"Network {cls.__name__} lacks {', '.join(missing)} "
                "(see agents.ppo.networks.contract)."
            )


def _defined_below_network(cls: type, name: str) -> bool:
    """Whether a class between `cls` and `Network` (`cls` included) defines `name`."""
    for klass in cls.__mro__:
        if klass is Network:
            return False
        if name in vars(klass):
            return True
    return False


class Weights(tf.Module):
    """A Keras model's variables as an explicit list, for `tf.train.Checkpoint`.

    TF's object-based checkpoints do not see Keras 3 layers kept in lists or nested inside other
    layers (only 3 of 9 variables of a small MLP were saved), so the network is saved through this
    list instead: the architecture fixes the order of `model.variables`.
    """

    def __init__(self, model: keras.Model) -> None:
        super().__init__(name="weights")
        self.weights = list(model.variables)


class RecurrentState(tf.Module):
    """The state a recurrent policy carries between steps, per environment, and episode starts.

    `begin_episode` marks environments whose next step starts an episode (the network zeroes
    their state then); `advance` stores the state after a step and clears the marks. Both are
    variables, transient: a resumed run restarts every episode. Feed-forward networks carry an
    empty [B, 0] state.

    Args:
        network: Has `initial_state(batch_size)`.
        size: Number of environments.
    """

    def __init__(self, network, size: int) -> None:
        super().__init__(name="recurrent")
        self.state = tf.Variable(
            network.initial_state(size), trainable=False, name="recurrent_state"
        )
        self.reset = tf.Variable(tf.ones([size], tf.bool), trainable=False, name="episode_start")

    def begin_episode(self, indices: tf.Tensor) -> None:
        """Episodes start at `indices` with their next step."""
        self.reset.scatter_nd_update(indices[:, None], tf.ones_like(indices, tf.bool))

    def advance(self, state: tf.Tensor) -> None:
        """Store the state after a step of every environment."""
        self.state.assign(state)
        self.reset.assign(tf.zeros_like(self.reset))
