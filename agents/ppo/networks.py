"""PPO policy/value networks: Keras models mapping [batch, time] observations to a NetworkOutput."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import keras
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

from agents.ppo import recurrence
from agents.ppo.distributions import make_policy_head, orthogonal_dense, unflatten

tfd = tfp.distributions

_HIDDEN_GAIN = math.sqrt(2.0)


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


def _mlp(sizes: Sequence[int], activation: str, name: str) -> list[keras.layers.Dense]:
    return [
        orthogonal_dense(int(size), _HIDDEN_GAIN, activation, name=f"{name}_{index}")
        for index, size in enumerate(sizes)
    ]


def _build(layers: Sequence[keras.layers.Layer], input_size: int) -> int:
    """Builds `layers` as a chain on inputs of `input_size` and returns the output size."""
    for layer in layers:
        layer.build((None, input_size))
        input_size = layer.units
    return input_size


def _apply(layers: Sequence[keras.layers.Layer], inputs: tf.Tensor) -> tf.Tensor:
    for layer in layers:
        inputs = layer(inputs)
    return inputs


class FeedForwardNetwork(keras.Model):
    """Separate policy and value MLPs on the flattened observation; ignores `reset` and `state`."""

    def __init__(
        self,
        observation_shape: Sequence[int],
        policy_head: keras.layers.Layer,
        policy_layers: Sequence[int],
        value_layers: Sequence[int],
        activation: str,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._observ_size = int(np.prod(observation_shape))
        self._policy_torso = _mlp(policy_layers, activation, "policy_hidden")
        self._policy_head = policy_head
        self._value_torso = _mlp(value_layers, activation, "value_hidden")
        self._value_head = orthogonal_dense(1, 1.0, name="value")
        # Built up front so that the variables exist before the first call (optimizers,
        # checkpoints) and are never created inside a traced function.
        with keras.name_scope(self.name):
            self._policy_head.build((None, _build(self._policy_torso, self._observ_size)))
            self._value_head.build((None, _build(self._value_torso, self._observ_size)))
        self.built = True

    @property
    def policy_head(self) -> keras.layers.Layer:
        """The layer that turns the policy features into the action distribution."""
        return self._policy_head

    def initial_state(self, batch_size: int | tf.Tensor) -> tf.Tensor:
        """Returns the empty [batch_size, 0] placeholder state."""
        return tf.zeros([batch_size, 0])

    def call(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor) -> NetworkOutput:
        """Evaluates the network on every step independently.

        Args:
            observ: [B, T, *observation_shape] float32 observations.
            reset: [B, T] bool episode starts (unused).
            state: [B, 0] placeholder from `initial_state`, returned unchanged.

        Returns:
            NetworkOutput with a policy of batch shape [B, T] and value [B, T].
        """
        del reset
        outer_shape = tf.shape(observ)[:2]
        flat = tf.reshape(observ, [-1, self._observ_size])
        features = _apply(self._policy_torso, flat)
        policy = self._policy_head(features, outer_shape)
        value = tf.reshape(self._value_head(_apply(self._value_torso, flat)), outer_shape)
        features = unflatten(features, outer_shape, [features.shape[-1]])
        return NetworkOutput(policy, {"": value}, state, features)


class RecurrentNetwork(keras.Model):
    """MLP torso, then a GRU, then the policy head and a value MLP sharing the GRU output."""

    def __init__(
        self,
        observation_shape: Sequence[int],
        policy_head: keras.layers.Layer,
        torso_layers: Sequence[int],
        value_layers: Sequence[int],
        activation: str,
        recurrent_units: int,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._observ_size = int(np.prod(observation_shape))
        self._units = int(recurrent_units)
        self._torso = _mlp(torso_layers, activation, "torso")
        self._cell = keras.layers.GRUCell(self._units, name="gru")
        self._policy_head = policy_head
        self._value_torso = _mlp(value_layers, activation, "value_hidden")
        self._value_head = orthogonal_dense(1, 1.0, name="value")
        with keras.name_scope(self.name):
            self._cell.build((None, _build(self._torso, self._observ_size)))
            self._policy_head.build((None, self._units))
            self._value_head.build((None, _build(self._value_torso, self._units)))
        self.built = True

    @property
    def policy_head(self) -> keras.layers.Layer:
        """The layer that turns the policy features into the action distribution."""
        return self._policy_head

    def initial_state(self, batch_size: int | tf.Tensor) -> tf.Tensor:
        """Returns the zero GRU state, [batch_size, recurrent_units] float32."""
        return tf.zeros([batch_size, self._units])

    def call(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor) -> NetworkOutput:
        """Unrolls the GRU over time, zeroing the state where an episode starts.

        Args:
            observ: [B, T, *observation_shape] float32 observations; T may be unknown.
            reset: [B, T] bool, True at the first step of an episode: the state is zeroed
                before that step is processed.
            state: [B, recurrent_units] state from `initial_state` or a previous call.

        Returns:
            NetworkOutput with a policy of batch shape [B, T], value [B, T] and the state after
            the last step.
        """
        outer_shape = tf.shape(observ)[:2]
        features = _apply(self._torso, tf.reshape(observ, [-1, self._observ_size]))
        features = unflatten(features, outer_shape, [-1])
        hidden, state = recurrence.unroll(self._step, features, tf.cast(reset, tf.bool), state)
        hidden = tf.reshape(hidden, [-1, self._units])
        policy = self._policy_head(hidden, outer_shape)
        value = tf.reshape(self._value_head(_apply(self._value_torso, hidden)), outer_shape)
        features = unflatten(hidden, outer_shape, [self._units])
        return NetworkOutput(policy, {"": value}, state, features)

    def _step(self, state: tf.Tensor, inputs: tuple[tf.Tensor, tf.Tensor]) -> tf.Tensor:
        features, reset = inputs
        output, _ = self._cell(features, recurrence.reset_state(state, reset))
        return output  # A GRU's output is its new state.


# Network name -> (model class, policy head kind).
_NETWORKS = {
    "feed_forward_gaussian": (FeedForwardNetwork, "gaussian"),
    "feed_forward_categorical": (FeedForwardNetwork, "categorical"),
    "feed_forward_multi_categorical": (FeedForwardNetwork, "multi_categorical"),
    "recurrent_gaussian": (RecurrentNetwork, "gaussian"),
}

# Action space type -> network chosen by network="auto".
_AUTO = (
    (gym.spaces.Box, "feed_forward_gaussian"),
    (gym.spaces.Discrete, "feed_forward_categorical"),
    (gym.spaces.MultiDiscrete, "feed_forward_multi_categorical"),
)


def _option(config: Any, key: str) -> Any:
    """Reads `key` from a Mapping or from an object with attributes."""
    try:
        return config[key] if isinstance(config, Mapping) else getattr(config, key)
    except (KeyError, AttributeError):
        raise KeyError(f"The network config has no {key!r} entry.") from None


def _has_sde(config: Any) -> bool:
    """Whether `config` asks for gSDE (a config without the key, e.g. an older one, does not)."""
    try:
        return _option(config, "sde_sample_freq") is not None
    except KeyError:
        return False


def _resolve_name(name: str, action_space: gym.Space) -> str:
    if name == "auto":
        for space_type, network in _AUTO:
            if isinstance(action_space, space_type):
                return network
        accepted = ", ".join(f"{space.__name__} -> {network}" for space, network in _AUTO)
        raise ValueError(
            f"Network 'auto' has no network for the action space {action_space!r}; "
            f"accepted: {accepted}."
        )
    if name not in _NETWORKS:
        valid = ", ".join(["auto", *_NETWORKS])
        raise ValueError(f"Unknown network {name!r}; valid names: {valid}.")
    return name


def make_network(
    observation_space: gym.Space, action_space: gym.Space, config: Mapping[str, Any] | Any
) -> keras.Model:
    """Creates the policy/value network named by `config["network"]`, built and ready to call.

    The model is called as `model(observ, reset, state)` with observ [B, T, *obs_shape] float32,
    reset [B, T] bool and state from `model.initial_state(B)`, and returns a `NetworkOutput`.
    Evaluation uses `output.policy.mode()`.

    Args:
        observation_space: A Box of any shape; observations are flattened.
        action_space: Box of shape (n,), Discrete, or MultiDiscrete with 1-D nvec, as the
            network requires.
        config: Mapping or attribute object with `network` (one of "auto",
            "feed_forward_gaussian", "feed_forward_categorical",
            "feed_forward_multi_categorical", "recurrent_gaussian"), `policy_layers`,
            `value_layers`, `activation`, `init_output_factor`, `init_std` (Gaussian policies),
            optionally `sde_sample_freq` (not None: a gSDE head) and `recurrent_units`
            (recurrent networks). "auto" picks the feed-forward network for the action space
            type. A recurrent network uses `policy_layers` as the torso before the GRU and
            `value_layers` between the GRU and the value output.

    Returns:
        A built `keras.Model` with `call(observ, reset, state)` and `initial_state(batch_size)`.

    Raises:
        ValueError: For an unknown network name or unsupported observation or action space.
        KeyError: If a needed config entry is missing.
    """
    name = _resolve_name(_option(config, "network"), action_space)
    if not isinstance(observation_space, gym.spaces.Box):
        raise ValueError(
            f"Network {name!r} does not support the observation space {observation_space!r}: "
            "it needs a Box observation space (of any shape)."
        )
    model_class, head_kind = _NETWORKS[name]
    init_std = None
    if head_kind == "gaussian":
        init_std = _option(config, "init_std")
        if _has_sde(config):
            head_kind = "sde_gaussian"
    elif _has_sde(config):
        raise ValueError(
            f"sde_sample_freq applies to Gaussian policies (a Box action space); network "
            f"{name!r} for {action_space!r} needs sde_sample_freq None."
        )
    head = make_policy_head(
        name, head_kind, action_space, _option(config, "init_output_factor"), init_std
    )
    kwargs = {}
    if model_class is RecurrentNetwork:
        kwargs["recurrent_units"] = _option(config, "recurrent_units")
    return model_class(
        observation_space.shape,
        head,
        tuple(_option(config, "policy_layers")),
        tuple(_option(config, "value_layers")),
        _option(config, "activation"),
        name=name,
        **kwargs,
    )
