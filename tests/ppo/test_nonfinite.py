"""Tests for the non-finite flag of the PPO update."""

import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.nonfinite import FINITE, GRADIENT, LOSS, NonfiniteFlag, nonfinite_code


@pytest.mark.parametrize(
    "loss, norm, code",
    [
        (1.0, 2.0, FINITE),
        (np.nan, 2.0, LOSS),
        (np.inf, np.nan, LOSS),  # The loss is named first: its gradient follows from it.
        (1.0, np.inf, GRADIENT),
        (-1.0, np.nan, GRADIENT),
    ],
)
def test_nonfinite_code(loss, norm, code):
    assert int(nonfinite_code(tf.constant(loss), tf.constant(norm))) == code


def test_flag_keeps_the_first_code_and_its_step():
    flag = NonfiniteFlag()
    flag.raise_if_set("the update")  # Nothing recorded: no error.

    @tf.function
    def record(code, step):  # As the update calls it, in a graph.
        flag.record(code, step)

    record(tf.constant(GRADIENT), tf.constant(96, tf.int64))
    record(tf.constant(LOSS), tf.constant(128, tf.int64))
    with pytest.raises(FloatingPointError) as error:
        flag.raise_if_set("the update")
    assert str(error.value) == (
        "Non-finite gradient in the update at env step 96; the update was skipped and training "
        "stopped."
    )
