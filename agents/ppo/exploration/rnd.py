"""Random network distillation (Burda et al., 2018): an exploration bonus from prediction error."""

from __future__ import annotations

import math
from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from agents.ppo.networks import conv
from agents.ppo.networks.contract import Weights
from agents.ppo.networks.distributions import orthogonal
from agents.ppo.networks.patch_conv import conv2d_layer
from agents.tools.collectives import CrossReplicaSum
from agents.tools.normalize import RunningMeanStd

TensorLike = tf.types.experimental.TensorLike

_OBSERVATION_CLIP = 5.0


def checked_stack(torso: str, conv_stack: str, observation_shape, proportion: float) -> list:
    """The conv stack named `conv_stack`, once the torso, the frames and the proportion suit it.

    Raises:
        ValueError: An unknown torso or stack, frames the conv torso cannot take, or a
            proportion outside (0, 1].
    """
    if torso not in ("conv", "mlp"):
        raise ValueError(f"RND torso must be 'conv' or 'mlp', got {torso!r}.")
    if conv_stack not in conv.RND_STACKS:
        raise ValueError(f"Unknown conv_stack {conv_stack!r}; valid: {list(conv.RND_STACKS)}.")
    stack = conv.RND_STACKS[conv_stack]
    smallest = conv.min_input_size(stack)
    if torso == "conv" and (len(observation_shape) != 3 or min(observation_shape[:2]) < smallest):
        raise ValueError(
            f"RND needs (H, W, C) frames with H, W >= {smallest} for conv_stack "
            f"{conv_stack!r}, got {tuple(observation_shape)} (rnd_network=mlp reads any shape)."
        )
    if not 0.0 < proportion <= 1.0:
        raise ValueError(
            f"proportion_of_exp_used_for_predictor_update must be in (0, 1], got {proportion}."
        )
    return stack


def feature_network(
    input_shape: tuple[int, ...],
    torso: str,
    torso_width: int,
    dense_sizes: Sequence[int],
    seeds: Sequence[int],
    name: str,
    stack: conv.ConvStack = conv.RND_STACKS["dqn"],
    conv_layer: type[keras.layers.Conv2D] = keras.layers.Conv2D,
) -> keras.Sequential:
    """Leaky-ReLU torso (the conv `stack` on frames, or two dense layers of `torso_width` on the
    flattened observation), then ReLU dense layers; the last dense layer is linear."""
    layers = [keras.Input(input_shape)]
    torso_seeds, dense_seeds = seeds[: len(stack)], seeds[len(stack) :]
    if torso == "conv":
        for (filters, kernel, stride), seed in zip(stack, torso_seeds, strict=True):
            init = orthogonal(math.sqrt(2.0), seed)
            layers.append(
                conv_layer(
                    filters, kernel, stride, activation="leaky_relu", kernel_initializer=init
                )
            )
        layers.append(keras.layers.Flatten())
    else:
        layers.append(keras.layers.Flatten())
        for seed in torso_seeds[:2]:
            init = orthogonal(math.sqrt(2.0), seed)
            layers.append(
                keras.layers.Dense(torso_width, activation="leaky_relu", kernel_initializer=init)
            )
    for index, (units, seed) in enumerate(zip(dense_sizes, dense_seeds, strict=True)):
        activation = "relu" if index < len(dense_sizes) - 1 else None
        layers.append(
            keras.layers.Dense(
                units, activation=activation, kernel_initializer=orthogonal(math.sqrt(2.0), seed)
            )
        )
    return keras.Sequential(layers, name=name)


def choose_torso(
    observation_shape: Sequence[int], choice: str = "auto", conv_stack: str = "dqn"
) -> str:
    """RND's torso for observations of `observation_shape`: `choice`, or for "auto" the conv
    stack (`conv_stack`, a name in `agents.ppo.networks.conv.RND_STACKS`) where frames are large
    enough for it, else the MLP (e.g. MiniGrid's 7x7 symbolic view)."""
    if choice != "auto":
        return choice
    frames = len(observation_shape) == 3
    smallest = conv.min_input_size(conv.RND_STACKS[conv_stack])
    return "conv" if frames and min(observation_shape[:2]) >= smallest else "mlp"


class RND(tf.Module):
    """A fixed random target network and a predictor trained to match its features.

    The intrinsic reward of a frame is the predictor's squared error on it: small for frames like
    those it was trained on, large for novel ones. Both networks see only the last frame of a
    stacked observation (`frames[..., -1:]`), normalized per pixel by `observation_stats` and
    clipped to [-5, 5]. The target (conv stack, then a linear layer of `feature_size`) is never
    trained: it is not trainable and not in `trainable_variables`. The predictor (the same conv
    stack, two ReLU layers of `512 * enlargement`, then a linear `feature_size` layer) is trained
    by the caller: add `predictor_loss` to the PPO loss and optimize `trainable_variables`.

    Before training, the caller runs a random agent for `rnd_init_steps` steps (config key; each
    step gives one frame per environment) and passes the frames to `initialize_observation_stats`,
    so that the first intrinsic rewards are not dominated by unnormalized pixels; during training,
    `update_observation_stats` adds every rollout's frames.

    All variables exist after `__init__`, and every method runs eagerly or inside `tf.function`.
    Save what `checkpointables()` returns (Keras 3 layers are held as `Weights`).
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        feature_size: int = 512,
        cross_replica_sum: CrossReplicaSum | None = None,
        proportion_of_exp_used_for_predictor_update: float = 0.25,
        enlargement: int = 1,
        seed: int = 0,
        name: str = "rnd",
        torso: str = "conv",
        torso_width: int = 512,
        conv_stack: str = "dqn",
        conv_matmul: bool = False,
    ):
        """Creates the networks, the observation statistics and the mask generator.

        Args:
          observation_shape: (H, W, C) of the uint8 frame stacks; H and W at least 36.
          feature_size: Size of the target and predictor features.
          cross_replica_sum: Function summing a float64 tensor over MPI ranks (see
            `agents.tools.collectives.mpi_cross_replica_sum`), for the observation statistics;
            or None.
          proportion_of_exp_used_for_predictor_update: Fraction of the samples, drawn at random,
            that `predictor_loss` trains on; keeps the predictor from learning too fast when
            many environments feed it (the RND code draws a Bernoulli mask of this rate; here
            the count is fixed, which keeps shapes static and the loss's scale the same).
          enlargement: Width factor of the predictor's hidden dense layers (512 * enlargement).
          seed: Seed of the network initializations and of the predictor update mask.
          name: Name of the module.
          torso: "conv": the conv stack on the last frame of each stack, normalized per pixel
            (the paper's); "mlp": two dense layers of `torso_width` on the whole flattened
            observation, normalized per element (small symbolic observations).
          torso_width: Width of the MLP torso's layers (and of the predictor's layers after it).
          conv_stack: The conv torso's stack, a name in `agents.ppo.networks.conv.RND_STACKS`.
          conv_matmul: Whether the conv torso's convolutions run as matrix products over their
            patches (`PatchConv2D`: the same layers, faster under XLA on a CPU).

        Raises:
          ValueError: For an unknown conv stack, a frame shape it cannot process, or a
            proportion outside (0, 1].
        """
        super().__init__(name=name)
        stack = checked_stack(
            torso, conv_stack, observation_shape, proportion_of_exp_used_for_predictor_update
        )
        self._torso = torso
        if torso == "conv":
            height, width = (int(d) for d in observation_shape[:2])
            self._frame_shape = (height, width, 1)
        else:
            self._frame_shape = tuple(int(d) for d in observation_shape)
        self._proportion = float(proportion_of_exp_used_for_predictor_update)
        seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(10)]
        hidden = (512 if torso == "conv" else int(torso_width)) * int(enlargement)
        with self.name_scope:
            self.observation_stats = RunningMeanStd(
                self._frame_shape, cross_replica_sum=cross_replica_sum, name="observation_stats"
            )
            shape, width = self._frame_shape, int(torso_width)
            layer = conv2d_layer(conv_matmul)
            self.target = feature_network(
                shape, torso, width, [feature_size], seeds[:4], "rnd_target", stack, layer
            )
            self.target.trainable = False
            self.predictor = feature_network(
                shape,
                torso,
                width,
                [hidden, hidden, feature_size],
                seeds[4:],
                "rnd_predictor",
                stack,
                layer,
            )
            self.rng = tf.random.Generator.from_seed(seed)

    @property
    def trainable_variables(self) -> tuple[tf.Variable, ...]:
        """The predictor's variables, the only ones to train."""
        return tuple(self.predictor.trainable_variables)

    @property
    def variables(self) -> tuple[tf.Variable, ...]:
        """Target, predictor, observation statistics and generator state, in a fixed order."""
        return (
            *self.target.variables,
            *self.predictor.variables,
            *self.observation_stats.variables,
            self.rng.state,
        )

    def checkpointables(self) -> dict:
        """What `tf.train.Checkpoint(**rnd.checkpointables())` must hold to resume."""
        return {
            "target": Weights(self.target),
            "predictor": Weights(self.predictor),
            "observation_stats": self.observation_stats,
            "rng": self.rng,
        }

    def update_observation_stats(self, frames: TensorLike) -> None:
        """Adds the last frames of `frames` [..., H, W, C] to the per-pixel statistics (the
        whole observations [..., *shape] with the MLP torso)."""
        self.observation_stats.update(self._inputs(frames))

    def _inputs(self, frames: TensorLike) -> tf.Tensor:
        """What the networks read: the last frame of each stack, or the whole observation."""
        frames = tf.convert_to_tensor(frames)
        return frames[..., -1:] if self._torso == "conv" else frames

    def initialize_observation_stats(self, frames: TensorLike) -> None:
        """Seeds the statistics with a random agent's frames ([..., H, W, C]) before training."""
        self.update_observation_stats(frames)

    def intrinsic_reward(self, frames: TensorLike) -> tf.Tensor:
        """The unnormalized exploration bonus of each frame stack.

        Args:
          frames: uint8 tensor [..., H, W, C], e.g. [N] or [T, B] leading dimensions.

        Returns:
          float32 tensor [...]: the mean squared error between predictor and target features.
        """
        return tf.stop_gradient(self._prediction_error(frames))

    def predictor_sample(self, size: int) -> tf.Tensor:
        """Draws which of `size` samples train the predictor: `round(proportion * size)` (at
        least one) distinct indices, int32, uniformly at random."""
        count = max(1, round(self._proportion * size))
        return tf.math.top_k(self.rng.uniform([size]), count, sorted=False).indices

    def predictor_loss(self, frames: TensorLike) -> tf.Tensor:
        """The predictor's training loss on a random subset of the frame stacks.

        Only the drawn frames go through the target and the predictor (with the default
        proportion, a quarter of the compute of scoring them all, forward and backward).

        Args:
          frames: uint8 tensor [..., H, W, C] with a static number of frame stacks.

        Returns:
          Scalar float32: the mean, over the samples drawn by `predictor_sample`, of the squared
          error between predictor and (stop-gradient) target features.
        """
        frames = tf.convert_to_tensor(frames)
        frames = tf.reshape(frames, [-1, *frames.shape[-len(self._frame_shape) :]])
        chosen = tf.gather(frames, self.predictor_sample(int(frames.shape[0])))
        return tf.reduce_mean(self._prediction_error(chosen))

    def _normalize(self, frames: TensorLike) -> tf.Tensor:
        """The last frame of each stack, normalized per pixel and clipped, as [N, H, W, 1]."""
        last = tf.cast(self._inputs(frames), tf.float32)
        last = tf.reshape(last, [-1, *self._frame_shape])
        mean = tf.cast(self.observation_stats.mean, tf.float32)
        std = tf.cast(self.observation_stats.std, tf.float32)
        return tf.clip_by_value((last - mean) / std, -_OBSERVATION_CLIP, _OBSERVATION_CLIP)

    def _prediction_error(self, frames: TensorLike) -> tf.Tensor:
        frames = tf.convert_to_tensor(frames)
        observ = self._normalize(frames)
        target = tf.stop_gradient(self.target(observ))
        error = tf.reduce_mean(tf.square(self.predictor(observ) - target), -1)
        return tf.reshape(error, tf.shape(frames)[: -len(self._frame_shape)])
