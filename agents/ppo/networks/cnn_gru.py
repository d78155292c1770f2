"""The RND paper's CNN+GRU policy: conv torso, GRU memory, a policy head and two value heads."""

from __future__ import annotations

import math
from collections.abc import Sequence

import gymnasium as gym
import keras
import tensorflow as tf
import tensorflow_probability as tfp

from agents.ppo.networks import conv, recurrent_unroll
from agents.ppo.networks.contract import Network, NetworkOutput
from agents.ppo.networks.distributions import (
    make_policy_head,
    orthogonal,
    orthogonal_dense,
    unflatten,
)
from agents.ppo.networks.patch_conv import conv2d_layer

tfd = tfp.distributions

# Width multiplier of hidsize and memsize, as `enlargement` in the RND code. The policy's conv
# filters stay 32/64/64 there for every size (its `convfeat = 16 * enlargement` only widens the
# RND target and predictor networks), and so they do here.
POLICY_SIZES = {"small": 1, "normal": 2, "large": 4}

# 'valid' padding needs frames of at least this height and width with the default "dqn" stack,
# 44 (84x84 gives 6x6x64 features).
MIN_FRAME_SIZE = conv.min_input_size(conv.POLICY_STACKS["dqn"])

_HIDDEN_GAIN = math.sqrt(2.0)


class CnnGruPolicy(Network):
    """Recurrent Atari policy of Burda et al. (2018), "Exploration by Random Network Distillation".

    uint8 frames / 255 -> convs (ReLU, 'valid'; "dqn": 32x8/4, 64x4/2, 64x4/1, the paper's; or
    "tiles8", see `agents.ppo.networks.conv`) -> dense `hidsize` (ReLU) ->
    GRU of `memsize` units -> optional residual layers `x + relu(dense(x))` (one on the policy
    path, one on the value path) -> categorical logits and two value heads: "" (the extrinsic
    reward's, RND's `vpred_ext`) and "_int" (the intrinsic reward's, `vpred_int`). Like every
    network it maps B sequences of T steps to a `NetworkOutput`; `networks.act` runs one step.

    The GRU is the RND code's: with h zeroed where `reset` is set, [m, r] = sigmoid(W [h, x] + b)
    and h' = m * h + (1 - m) * tanh(U [r * h, x] + c). `rec_gate_init` initializes the bias b of
    both gates, which share that dense layer as in the original; positive values keep the state.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_space: gym.Space,
        policy_size: str = "normal",
        hidsize: int = 128,
        memsize: int = 128,
        extrahid: bool = True,
        rec_gate_init: float = 0.0,
        conv_stack: str = "dqn",
        conv_matmul: bool = False,
        **kwargs,
    ):
        """Creates the model with all its variables.

        Args:
            observation_shape: (H, W, C) of one observation: C stacked frames large enough for
                the conv stack (`MIN_FRAME_SIZE` x `MIN_FRAME_SIZE` pixels for "dqn").
            action_space: A Discrete action space with start=0.
            policy_size: "small", "normal" or "large": multiplies `hidsize` and `memsize` by 1,
                2 or 4 (the RND defaults, "normal" with 128/128, give 256/256).
            hidsize: Base width of the dense layer after the convs.
            memsize: Base number of GRU units; the state has `memsize * multiplier` entries.
            extrahid: Whether to add the residual hidden layers on the policy and value paths.
            rec_gate_init: Initial bias of the GRU gates.
            conv_stack: The convolutions, a name in `agents.ppo.networks.conv.POLICY_STACKS`.
            conv_matmul: Whether the convolutions run as matrix products over their patches
                (`PatchConv2D`: the same layers, faster under XLA on a CPU).
            **kwargs: Passed on to `keras.Model` (e.g. `name`).

        Raises:
            ValueError: If `policy_size` or `conv_stack` is unknown, the observation is not
                (H, W, C) with H and W at least the stack's smallest input (`MIN_FRAME_SIZE` for
                "dqn"), or the action space is not Discrete.
        """
        kwargs.setdefault("name", "cnn_gru_policy")
        super().__init__(**kwargs)
        self._observation_shape = tuple(int(size) for size in observation_shape)
        stack = _checked_stack(policy_size, conv_stack, self._observation_shape)
        height, width, channels = self._observation_shape
        self._hidsize = int(hidsize) * POLICY_SIZES[policy_size]
        self._memsize = int(memsize) * POLICY_SIZES[policy_size]
        self._flat_size = (
            conv.output_size(height, stack) * conv.output_size(width, stack) * stack[-1][0]
        )

        layer = conv2d_layer(conv_matmul)
        self._convs = [
            layer(
                filters,
                kernel,
                strides=stride,
                padding="valid",
                activation="relu",
                kernel_initializer=orthogonal(_HIDDEN_GAIN),
                name=f"conv{index + 1}",
            )
            for index, (filters, kernel, stride) in enumerate(stack)
        ]
        self._hidden = orthogonal_dense(self._hidsize, _HIDDEN_GAIN, "relu", name="hidden")
        self._gates = keras.layers.Dense(
            2 * self._memsize,
            activation="sigmoid",
            kernel_initializer=orthogonal(1.0),
            bias_initializer=keras.initializers.Constant(rec_gate_init),
            name="gru_gates",
        )
        self._candidate = orthogonal_dense(self._memsize, 1.0, "tanh", name="gru_candidate")
        self._policy_extra = self._value_extra = None
        if extrahid:
            self._policy_extra = orthogonal_dense(self._memsize, 0.1, "relu", name="policy_extra")
            self._value_extra = orthogonal_dense(self._memsize, 0.1, "relu", name="value_extra")
        self._policy_head = make_policy_head("cnn_gru", "categorical", action_space, 0.01)
        self._vpred_int = orthogonal_dense(1, 0.01, name="vpred_int")
        self._vpred_ext = orthogonal_dense(1, 0.01, name="vpred_ext")
        self._build_layers(channels)

    def _build_layers(self, channels: int) -> None:
        """Creates every variable now, so that none is created inside a traced function."""
        memsize = self._memsize
        with keras.name_scope(self.name):
            shape = (None, *self._observation_shape[:2], channels)
            for conv in self._convs:
                conv.build(shape)
                shape = conv.compute_output_shape(shape)
            self._hidden.build((None, self._flat_size))
            self._gates.build((None, memsize + self._hidsize))
            self._candidate.build((None, memsize + self._hidsize))
            for layer in (self._policy_extra, self._value_extra):
                if layer is not None:
                    layer.build((None, memsize))
            for layer in (self._policy_head, self._vpred_int, self._vpred_ext):
                layer.build((None, memsize))
        self.built = True

    @property
    def state_size(self) -> int:
        """Number of GRU units: `memsize` times the `policy_size` multiplier."""
        return self._memsize

    @property
    def policy_head(self) -> keras.layers.Layer:
        """The categorical head on the GRU's (residual) output."""
        return self._policy_head

    def initial_state(self, batch_size: int | tf.Tensor) -> tf.Tensor:
        """Returns the zero GRU state, [batch_size, state_size] float32."""
        return tf.zeros([batch_size, self._memsize])

    def call(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor) -> NetworkOutput:
        """Evaluates B sequences of T steps, carrying the GRU state through time.

        Args:
            observ: [B, T, H, W, C] frames with values in 0..255 (uint8 or any numeric dtype).
            reset: [B, T] bool or 0/1 numbers, set at episode starts: the state is zeroed before
                that step is processed.
            state: [B, state_size] state before the first step.

        Returns:
            NetworkOutput with a policy of batch shape [B, T] (int32 samples), the values "" and
            "_int" [B, T] and the last state.
        """
        outer_shape = tf.shape(observ)[:2]
        frames = tf.reshape(observ, [-1, *self._observation_shape])  # Convs see B*T images.
        features = tf.cast(frames, tf.float32) / 255.0
        for layer in self._convs:
            features = layer(features)
        features = self._hidden(tf.reshape(features, [-1, self._flat_size]))
        features = unflatten(features, outer_shape, [self._hidsize])
        single_step = observ.shape[1] == 1  # Static: the rollout hot path needs no while loop.
        memory, state = recurrent_unroll.unroll(
            self._step, features, tf.cast(reset, tf.bool), state, single_step
        )
        memory = tf.reshape(memory, [-1, self._memsize])
        policy_features = value_features = memory
        if self._policy_extra is not None:
            policy_features = memory + self._policy_extra(memory)
            value_features = memory + self._value_extra(memory)
        values = {
            "": tf.reshape(self._vpred_ext(value_features), outer_shape),
            "_int": tf.reshape(self._vpred_int(value_features), outer_shape),
        }
        return NetworkOutput(self._policy_head(policy_features, outer_shape), values, state)

    def _step(self, state: tf.Tensor, inputs: tuple[tf.Tensor, tf.Tensor]) -> tf.Tensor:
        """One GRU step; its output is its new state."""
        features, reset = inputs
        state = recurrent_unroll.reset_state(state, reset)
        keep, read = tf.split(self._gates(tf.concat([state, features], axis=1)), 2, axis=1)
        candidate = self._candidate(tf.concat([read * state, features], axis=1))
        return keep * state + (1.0 - keep) * candidate


def cnn_gru(
    observation_space, action_space, config, value_streams=("", "_int"), conv_matmul=False
) -> CnnGruPolicy:
    """The CNN+GRU of `config` (`policy_size`, `hidsize`, `memsize`, `extrahid`,
    `rec_gate_init`, `conv_stack`): the `rnd_ppo` agent's network, and `ppo`'s with
    `network: cnn_gru`. It has the value heads "" and "_int" whichever `value_streams` the
    agent asks for; `conv_matmul` as `CnnGruPolicy`'s."""
    del value_streams
    return CnnGruPolicy(
        observation_space.shape,
        action_space,
        policy_size=config["policy_size"],
        hidsize=config["hidsize"],
        memsize=config["memsize"],
        extrahid=config["extrahid"],
        rec_gate_init=config["rec_gate_init"],
        conv_stack=config["conv_stack"],
        conv_matmul=conv_matmul,
    )


def _checked_stack(policy_size: str, conv_stack: str, observation_shape: tuple) -> list:
    """The conv stack named `conv_stack`, once the sizes and the observation's shape suit it.

    Raises:
        ValueError: An unknown size or stack, or an observation the stack cannot take.
    """
    if policy_size not in POLICY_SIZES:
        raise ValueError(f"Unknown policy_size {policy_size!r}; valid: {list(POLICY_SIZES)}.")
    if conv_stack not in conv.POLICY_STACKS:
        raise ValueError(f"Unknown conv_stack {conv_stack!r}; valid: {list(conv.POLICY_STACKS)}.")
    stack = conv.POLICY_STACKS[conv_stack]
    smallest = conv.min_input_size(stack)
    if len(observation_shape) != 3 or min(observation_shape[:2]) < smallest:
        raise ValueError(
            f"CnnGruPolicy needs observations of shape (H, W, C) with H, W >= "
            f"{smallest} for conv_stack {conv_stack!r}, got {observation_shape}."
        )
    return stack
