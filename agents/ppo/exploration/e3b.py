"""E3B (Henaff et al., 2022, "Exploration via Elliptical Episodic Bonuses"): an episodic bonus
from the elliptical norm of learned embeddings.

An embedding network, trained by inverse dynamics (from the embeddings of an observation and the
next one, a head predicts the action taken between them), maps each observation to a vector
phi. Within an episode, each env keeps the inverse of `C = ridge * I + sum of phi phi^T` over
the observations seen so far; an observation's bonus is `phi^T C^-1 phi` before it joins the
sum, and the inverse follows by rank-one updates (Sherman-Morrison): shapes stay fixed, so a
whole rollout's bonuses are one compiled loop. A new episode starts from `I / ridge`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from agents.ppo.exploration.rnd import checked_stack, feature_network
from agents.ppo.networks.contract import Weights
from agents.ppo.networks.distributions import orthogonal
from agents.ppo.networks.patch_conv import conv2d_layer

TensorLike = tf.types.experimental.TensorLike


def elliptical_bonus(
    embeddings: tf.Tensor, starts: tf.Tensor, inverse: tf.Tensor, ridge: float
) -> tuple[tf.Tensor, tf.Tensor]:
    """The elliptical bonus of each embedding of a rollout, and the inverses after it.

    Args:
        embeddings: float32 [T, N, d]: phi of observation t of env n.
        starts: bool [T, N]: observation t is the first of a new episode.
        inverse: float32 [N, d, d]: each env's `C^-1` before the rollout.
        ridge: The `ridge` of `C = ridge * I + ...` a new episode starts from.

    Returns:
        `(bonus [T, N], inverse [N, d, d])`: `phi_t^T C_t^-1 phi_t` with `C_t` the sum over the
        episode's earlier observations, and each env's `C^-1` with the whole rollout in it.
    """
    steps = embeddings.shape[0] or tf.shape(embeddings)[0]
    fresh = tf.eye(tf.shape(embeddings)[-1], dtype=embeddings.dtype)[None] / ridge
    bonuses = tf.TensorArray(embeddings.dtype, size=steps)

    def body(t, inverse, bonuses):
        phi = embeddings[t]
        inverse = tf.where(starts[t][:, None, None], fresh, inverse)
        projected = tf.linalg.matvec(inverse, phi)  # C^-1 phi, [N, d]
        bonus = tf.reduce_sum(phi * projected, -1)
        update = projected[:, :, None] * projected[:, None, :] / (1.0 + bonus)[:, None, None]
        return t + 1, inverse - update, bonuses.write(t, bonus)

    _, inverse, bonuses = tf.while_loop(
        lambda t, *_: t < steps, body, (tf.constant(0), inverse, bonuses)
    )
    return bonuses.stack(), inverse


class E3B(tf.Module):
    """The embedding network, its inverse-dynamics head and each env's episodic inverse.

    Args:
        observation_shape: Shape of the observations it reads (`rnd_view`'s).
        num_actions: Actions of the discrete action space (the head's outputs).
        num_envs: Envs of the batch (each keeps its own inverse).
        embedding_size: Size of phi.
        ridge: `C`'s diagonal at an episode's start (the paper's lambda).
        torso: "conv" (the last frame of each stack) or "mlp" (the flattened observation).
        torso_width: Width of the MLP torso's layers and of the head's hidden layer.
        conv_stack: The conv torso's stack (`agents.ppo.networks.conv.RND_STACKS`).
        conv_matmul: Convolutions as patch products (faster under XLA on a CPU).
        seed: Seed of the initializations.

    Raises:
        ValueError: An unknown torso or stack, or frames the conv torso cannot read.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        num_actions: int,
        num_envs: int,
        embedding_size: int = 256,
        ridge: float = 0.1,
        torso: str = "mlp",
        torso_width: int = 256,
        conv_stack: str = "dqn",
        conv_matmul: bool = False,
        seed: int = 0,
    ):
        super().__init__(name="e3b")
        stack = checked_stack(torso, conv_stack, observation_shape, 1.0)
        self._torso, self.ridge = torso, float(ridge)
        if torso == "conv":
            self._shape = (int(observation_shape[0]), int(observation_shape[1]), 1)
        else:
            self._shape = tuple(int(d) for d in observation_shape)
        seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(len(stack) + 3)]
        with self.name_scope:
            self.embedding = feature_network(
                self._shape, torso, int(torso_width), [embedding_size], seeds[: len(stack) + 1],
                "e3b_embedding", stack, conv2d_layer(conv_matmul),
            )  # fmt: skip
            self.head = keras.Sequential(
                [
                    keras.Input([2 * embedding_size]),
                    keras.layers.Dense(
                        torso_width,
                        "relu",
                        kernel_initializer=orthogonal(math.sqrt(2.0), seeds[-2]),
                    ),
                    keras.layers.Dense(num_actions, kernel_initializer=orthogonal(0.01, seeds[-1])),
                ],
                name="e3b_inverse_dynamics",
            )
            # Transient, as the envs' episodes are: a resumed run restarts every env.
            self.inverse = tf.Variable(
                tf.eye(embedding_size, batch_shape=[num_envs]) / self.ridge,
                trainable=False,
                name="inverse",
            )

    @property
    def trainable_variables(self) -> tuple[tf.Variable, ...]:
        return (*self.embedding.trainable_variables, *self.head.trainable_variables)

    def checkpointables(self) -> dict:
        """What a checkpoint must hold to resume (the inverses restart with the envs)."""
        return {"embedding": Weights(self.embedding), "head": Weights(self.head)}

    def embed(self, observ: TensorLike) -> tf.Tensor:
        """phi of observations [..., *shape] (float32 [..., d])."""
        observ = tf.convert_to_tensor(observ)
        inputs = observ[..., -1:] if self._torso == "conv" else observ
        lead = tf.shape(observ)[: observ.shape.rank - len(self._shape)]
        flat = tf.reshape(tf.cast(inputs, tf.float32), [-1, *self._shape])
        phi = self.embedding(flat)
        return tf.reshape(phi, tf.concat([lead, tf.shape(phi)[-1:]], 0))

    def bonus(self, observ: TensorLike, starts: tf.Tensor) -> tf.Tensor:
        """The elliptical bonus [T, N] of a rollout's observations [T, N, *shape] (see
        `elliptical_bonus`); each env's inverse goes on to the next rollout."""
        phi = tf.stop_gradient(self.embed(observ))
        bonus, inverse = elliptical_bonus(phi, starts, self.inverse, self.ridge)
        self.inverse.assign(inverse)
        return bonus

    def inverse_dynamics_loss(
        self, observ: TensorLike, next_observ: TensorLike, action: tf.Tensor, valid: tf.Tensor
    ) -> tf.Tensor:
        """Cross-entropy of the action between each observation and the next, over the valid
        transitions (a step that ended an episode is followed by a reset, not by its action).

        Args:
            observ, next_observ: [..., *shape] observations before and after each action.
            action: int [...] actions.
            valid: bool [...]: which transitions count.
        """
        pair = tf.concat([self.embed(observ), self.embed(next_observ)], -1)
        logits = self.head(tf.reshape(pair, [-1, pair.shape[-1]]))
        labels = tf.reshape(tf.cast(action, tf.int32), [-1])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        weight = tf.reshape(tf.cast(valid, tf.float32), [-1])
        return tf.reduce_sum(loss * weight) / tf.maximum(tf.reduce_sum(weight), 1.0)
