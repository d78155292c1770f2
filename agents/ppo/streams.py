"""Value streams: each value head, its return and its share of the policy's advantage, as data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import tensorflow as tf

from agents.ppo import advantages


class ValueStream(NamedTuple):
    """One value head and the return it predicts; PPO computes one GAE per stream.

    Plain PPO has one stream (`extrinsic`); RND adds `intrinsic`, whose return is non-episodic.

    Attributes:
        key: Suffix of the stream's rollout fields: `value{key}`, `return{key}`, and
            `final_value{key}` for episodic streams ("" for the extrinsic stream).
        discount: Discount of its return.
        episodic: Whether episode ends cut its return (truncated episodes then bootstrap from the
            value of their final observation, stored as `final_value{key}`).
        coef: Weight of its advantage in the advantage the policy is trained on.
    """

    key: str
    discount: float
    episodic: bool = True
    coef: float = 1.0


def extrinsic(discount: float, coef: float = 1.0) -> ValueStream:
    """The environment's reward, episodic: the one stream of plain PPO."""
    return ValueStream("", discount, True, coef)


def stream_targets(
    data: Mapping[str, tf.Tensor],
    rewards: Mapping[str, tf.Tensor],
    bootstrap: Mapping[str, tf.Tensor],
    streams: Sequence[ValueStream],
    lambda_: float,
    coefs: Mapping[str, tf.Tensor | float] | None = None,
) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
    """GAE(lambda) of each stream of a [T, B] rollout, and their weighted sum.

    Args:
        data: The rollout: `value{key}` per stream, `terminated`, `truncated`, and
            `final_value{key}` per episodic stream.
        rewards: [T, B] rewards per stream key.
        bootstrap: [B] values of the observations after the rollout, per stream key.
        streams: The value streams.
        lambda_: The GAE parameter.
        coefs: Each stream's weight by key, where it changes over a run; else its `coef`.

    Returns:
        Tuple (advantage, returns): the sum of `coef * advantage` over the streams, and
        `return{key}` = advantage + value per stream.
    """
    never = tf.zeros_like(data["terminated"])
    total, returns = 0.0, {}
    for stream in streams:
        value = data["value" + stream.key]
        if stream.episodic:
            final, truncated, terminated = (
                data["final_value" + stream.key],
                data["truncated"],
                data["terminated"],
            )
        else:
            final, truncated, terminated = tf.zeros_like(value), never, never
        next_value = advantages.next_values(value, bootstrap[stream.key], final, truncated)
        advantage = advantages.lambda_advantage(
            rewards[stream.key],
            value,
            next_value,
            terminated,
            terminated | truncated,
            stream.discount,
            lambda_,
        )
        returns["return" + stream.key] = advantage + value
        total += (stream.coef if coefs is None else coefs[stream.key]) * advantage
    return total, returns
