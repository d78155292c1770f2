"""The MLP and GRU policy/value networks of the `ppo` agent, and `make_network`.

Each maps [batch, time] observations to a `NetworkOutput` (see `agents.ppo.networks.contract` for
the contract); `agents.config.catalogue.NETWORKS` names them for configs.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import keras
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

from agents.config import catalogue
from agents.ppo.networks import recurrent_unroll
from agents.ppo.networks.contract import Network, NetworkOutput
from agents.ppo.networks.dict_encoder import DictEncoder
from agents.ppo.networks.distributions import (
    check_mask_size,
    make_policy_head,
    orthogonal_dense,
    unflatten,
)
from agents.tools.dict_observations import PackedDict, mask_field

tfd = tfp.distributions

_HIDDEN_GAIN = math.sqrt(2.0)


def _mlp(sizes: Sequence[int], activation: str, name: str) -> list[keras.layers.Dense]:
    return [
        orthogonal_dense(int(size), _HIDDEN_GAIN, activation, name=f"{name}_{index}")
        for index, size in enumerate(sizes)
    ]


def _build_values(torso: list, heads: dict, input_size: int) -> None:
    """Build the value torso on inputs of `input_size` features, then each value head on it."""
    value_size = _build(torso, input_size)
    for head in heads.values():
        head.build((None, value_size))


def _build(layers: Sequence[keras.layers.Layer], input_size: int) -> int:
    """Builds `layers` as a chain on inputs of `input_size` and returns the output size."""
    for layer in layers:
        layer.build((None, input_size))
        input_size = layer.units
    return input_size


def _value_heads(streams: Sequence[str]) -> dict[str, keras.layers.Dense]:
    """A linear value output per stream ("value" for the reward's, "value_int" for "_int")."""
    return {stream: orthogonal_dense(1, 1.0, name=f"value{stream}") for stream in streams}


def _values(heads: Mapping[str, keras.layers.Layer], features, outer_shape) -> dict:
    return {stream: tf.reshape(head(features), outer_shape) for stream, head in heads.items()}


def _apply(layers: Sequence[keras.layers.Layer], inputs: tf.Tensor) -> tf.Tensor:
    for layer in layers:
        inputs = layer(inputs)
    return inputs


def _input_size(encoder: DictEncoder | None, observ_size: int) -> int:
    """The size of what the torsos read: the encoder's features, or the flat observation."""
    if encoder is None:
        return observ_size
    encoder.build()
    return encoder.output_size


def _inputs(encoder: DictEncoder | None, flat: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor | None]:
    """What the torsos read from flat observations [N, size], and the action mask (or None)."""
    if encoder is None:
        return flat, None
    return encoder(flat), encoder.action_mask(flat)


class FeedForwardNetwork(Network):
    """Separate policy and value MLPs on the flattened observation; ignores `reset` and `state`."""

    def __init__(
        self,
        observation_shape: Sequence[int],
        policy_head: keras.layers.Layer,
        policy_layers: Sequence[int],
        value_layers: Sequence[int],
        activation: str,
        value_streams: Sequence[str] = ("",),
        encoder: DictEncoder | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._observ_size = int(np.prod(observation_shape))
        self._encoder = encoder
        self._policy_torso = _mlp(policy_layers, activation, "policy_hidden")
        self._policy_head = policy_head
        self._value_torso = _mlp(value_layers, activation, "value_hidden")
        self._value_heads = _value_heads(value_streams)
        # Built up front so that the variables exist before the first call (optimizers,
        # checkpoints) and are never created inside a traced function.
        with keras.name_scope(self.name):
            input_size = _input_size(encoder, self._observ_size)
            self._policy_head.build((None, _build(self._policy_torso, input_size)))
            _build_values(self._value_torso, self._value_heads, input_size)
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
        flat, mask = _inputs(self._encoder, tf.reshape(observ, [-1, self._observ_size]))
        features = _apply(self._policy_torso, flat)
        policy = self._policy_head(features, outer_shape, action_mask=mask)
        values = _values(self._value_heads, _apply(self._value_torso, flat), outer_shape)
        features = unflatten(features, outer_shape, [features.shape[-1]])
        return NetworkOutput(policy, values, state, features)


class RecurrentNetwork(Network):
    """MLP torso, then a GRU, then the policy head and a value MLP sharing the GRU output."""

    def __init__(
        self,
        observation_shape: Sequence[int],
        policy_head: keras.layers.Layer,
        torso_layers: Sequence[int],
        value_layers: Sequence[int],
        activation: str,
        recurrent_units: int,
        value_streams: Sequence[str] = ("",),
        encoder: DictEncoder | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._observ_size = int(np.prod(observation_shape))
        self._encoder = encoder
        self._units = int(recurrent_units)
        self._torso = _mlp(torso_layers, activation, "torso")
        self._cell = keras.layers.GRUCell(self._units, name="gru")
        self._policy_head = policy_head
        self._value_torso = _mlp(value_layers, activation, "value_hidden")
        self._value_heads = _value_heads(value_streams)
        with keras.name_scope(self.name):
            input_size = _input_size(encoder, self._observ_size)
            self._cell.build((None, _build(self._torso, input_size)))
            self._policy_head.build((None, self._units))
            _build_values(self._value_torso, self._value_heads, self._units)
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
        flat, mask = _inputs(self._encoder, tf.reshape(observ, [-1, self._observ_size]))
        features = unflatten(_apply(self._torso, flat), outer_shape, [-1])
        hidden, state = recurrent_unroll.unroll(
            self._step, features, tf.cast(reset, tf.bool), state
        )
        hidden = tf.reshape(hidden, [-1, self._units])
        policy = self._policy_head(hidden, outer_shape, action_mask=mask)
        values = _values(self._value_heads, _apply(self._value_torso, hidden), outer_shape)
        features = unflatten(hidden, outer_shape, [self._units])
        return NetworkOutput(policy, values, state, features)

    def _step(self, state: tf.Tensor, inputs: tuple[tf.Tensor, tf.Tensor]) -> tf.Tensor:
        features, reset = inputs
        output, _ = self._cell(features, recurrent_unroll.reset_state(state, reset))
        return output  # A GRU's output is its new state.


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


def _head(
    name: str, kind: str, action_space: gym.Space, config: Any, observation_space: gym.Space
) -> keras.layers.Layer:
    """The policy head of kind "gaussian" (gSDE with `sde_sample_freq`), "categorical" or
    "multi_categorical" for `action_space`, masked where the observation has an action mask."""
    mask = mask_field(observation_space)
    if mask is not None:
        check_mask_size(mask.size, action_space, name)
    init_std = None
    if kind == "gaussian":
        init_std = _option(config, "init_std")
        if _has_sde(config):
            kind = "sde_gaussian"
    elif _has_sde(config):
        raise ValueError(
            f"sde_sample_freq applies to Gaussian policies (a Box action space); network "
            f"{name!r} for {action_space!r} needs sde_sample_freq None."
        )
    return make_policy_head(
        name, kind, action_space, _option(config, "init_output_factor"), init_std
    )


def _encoder(observation_space: gym.Space, config: Any) -> DictEncoder | None:
    """The dict encoder of a packed dict observation space; None for any other space."""
    if not isinstance(observation_space, PackedDict):
        return None
    try:  # Normalized observations are scaled already; raw pixels are divided by 255.
        normalized = bool(_option(config, "normalize_observ"))
    except KeyError:
        normalized = False
    scale = 1.0 if normalized else 1.0 / 255.0
    return DictEncoder(observation_space, _option(config, "activation"), image_scale=scale)


def _feed_forward(name: str, kind: str):
    def build(observation_space, action_space, config, value_streams=("",)):
        return FeedForwardNetwork(
            observation_space.shape,
            _head(name, kind, action_space, config, observation_space),
            tuple(_option(config, "policy_layers")),
            tuple(_option(config, "value_layers")),
            _option(config, "activation"),
            value_streams=value_streams,
            encoder=_encoder(observation_space, config),
            name=name,
        )

    build.__name__ = name
    build.__doc__ = f"The {name} network of `config` (policy_layers, value_layers, ...)."
    return build


feed_forward_gaussian = _feed_forward("feed_forward_gaussian", "gaussian")
feed_forward_categorical = _feed_forward("feed_forward_categorical", "categorical")
feed_forward_multi_categorical = _feed_forward(
    "feed_forward_multi_categorical", "multi_categorical"
)


def _recurrent(name: str, kind: str):
    def build(observation_space, action_space, config, value_streams=("",)):
        return RecurrentNetwork(
            observation_space.shape,
            _head(name, kind, action_space, config, observation_space),
            tuple(_option(config, "policy_layers")),
            tuple(_option(config, "value_layers")),
            _option(config, "activation"),
            recurrent_units=_option(config, "recurrent_units"),
            value_streams=value_streams,
            encoder=_encoder(observation_space, config),
            name=name,
        )

    build.__name__ = name
    build.__doc__ = (
        f"The {name} network of `config`: `policy_layers` as the torso before the GRU of "
        "`recurrent_units`, `value_layers` between the GRU and the value outputs."
    )
    return build


recurrent_gaussian = _recurrent("recurrent_gaussian", "gaussian")
recurrent_categorical = _recurrent("recurrent_categorical", "categorical")


def make_network(
    observation_space: gym.Space,
    action_space: gym.Space,
    config: Mapping[str, Any] | Any,
    value_streams: Sequence[str] = ("",),
) -> Network:
    """Creates the policy/value network named by `config["network"]`, built and ready to call.

    The model is called as `model(observ, reset, state)` with observ [B, T, *obs_shape] float32,
    reset [B, T] bool and state from `model.initial_state(B)`, and returns a `NetworkOutput`
    (see `agents.ppo.networks.contract`). Evaluation uses `output.policy.mode()`.

    Args:
        observation_space: A Box of any shape, which the MLP networks flatten, or a packed dict
            (`agents.tools.dict_observations.PackedDict`), which they read through a
            `DictEncoder` (with an `action_mask` key, the policy samples allowed actions only).
        action_space: What the network's policy head supports (Box of shape (n,), Discrete,
            MultiDiscrete with 1-D nvec).
        config: Mapping or attribute object with `network`: a name of
            `agents.config.catalogue.NETWORKS`, "auto" (the feed-forward network for the action
            space type) or a "module:builder" path, and the keys that network reads
            (`policy_layers`, `value_layers`, `activation`, `init_output_factor`, `init_std`,
            `sde_sample_freq`, `recurrent_units`, the CNN+GRU's sizes).
        value_streams: The value streams the agent needs a value head for ("" is the
            reward's; `rnd_ppo` adds "_int"); passed to builders as `value_streams=` when there
            are more than the reward's.

    Returns:
        A built `Network`.

    Raises:
        ValueError: For an unknown network name or unsupported observation or action space,
            or a builder that does not return a `Network`.
        KeyError: If a needed config entry is missing.
    """
    name, builder = catalogue.network_builder(
        _option(config, "network"), type(action_space).__name__, repr(action_space)
    )
    if not isinstance(observation_space, gym.spaces.Box):
        raise ValueError(
            f"Network {name!r} does not support the observation space {observation_space!r}: "
            "it needs a Box observation space (of any shape) or a packed Dict "
            "(agents.tools.PackDictObservation)."
        )
    if tuple(value_streams) == ("",):
        network = builder(observation_space, action_space, config)
    else:
        if "value_streams" not in inspect.signature(builder).parameters:
            raise ValueError(
                f"Network {name!r} has one value head; this agent needs value heads for the "
                f"streams {tuple(value_streams)} (a builder parameter value_streams)."
            )
        network = builder(observation_space, action_space, config, value_streams=value_streams)
    if not isinstance(network, Network):
        raise ValueError(
            f"Network {name!r} built a {type(network).__name__}, not an "
            "agents.ppo.networks.contract.Network (see its contract)."
        )
    return network
