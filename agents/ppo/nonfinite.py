"""NonfiniteFlag: the first non-finite loss or gradient of training, recorded inside the update."""

from __future__ import annotations

import tensorflow as tf

FINITE, LOSS, GRADIENT = 0, 1, 2  # Codes of `nonfinite_code`.
_WHAT = {LOSS: "loss", GRADIENT: "gradient"}


def nonfinite_code(loss: tf.Tensor, grad_norm: tf.Tensor) -> tf.Tensor:
    """FINITE, or LOSS when the loss is not finite, else GRADIENT when the gradient norm is not."""
    return tf.where(
        tf.math.is_finite(loss), tf.where(tf.math.is_finite(grad_norm), FINITE, GRADIENT), LOSS
    )


class NonfiniteFlag(tf.Module):
    """Remembers the first non-finite code and the env step it happened at.

    Transient (in no checkpoint): a run stops as soon as it is set, before it saves.
    """

    def __init__(self) -> None:
        super().__init__(name="nonfinite_flag")
        self.code = tf.Variable(FINITE, trainable=False, name="nonfinite")
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="nonfinite_step")

    def record(self, code: tf.Tensor, env_step: tf.Tensor) -> tf.Operation:
        """Keep `code` and `env_step` unless an earlier code is kept already (in tf.function)."""
        tf.cond(
            tf.equal(self.code, FINITE),
            lambda: tf.group(self.code.assign(code), self.step.assign(env_step)),
            tf.no_op,
        )
        return tf.no_op()  # As `tf.cond` branches beside it return.

    def raise_if_set(self, where: str) -> None:
        """Raise FloatingPointError naming the non-finite value, `where` and the env step."""
        code = int(self.code.numpy())
        if code != FINITE:
            raise FloatingPointError(
                f"Non-finite {_WHAT[code]} in {where} at env step {int(self.step.numpy())}; "
                "the update was skipped and training stopped."
            )
