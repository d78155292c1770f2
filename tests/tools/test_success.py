"""The success rate: the share of scores strictly above the success score."""

import math

import numpy as np
import pytest

from agents.tools.success import success_rate


def test_success_is_strictly_above_the_success_score():
    # Above 0: 0.5 and 2.0 of four; a score equal to it is no success.
    assert success_rate([0.5, 0.0, -1.0, 2.0], 0.0) == 0.5
    assert success_rate(np.array([-190.0, -150.0, -120.0]), -160.0) == pytest.approx(2 / 3)


@pytest.mark.parametrize("scores, success_score", [([], 0.0), ([1.0, 2.0], None)])
def test_no_scores_or_no_success_score_is_nan(scores, success_score):
    assert math.isnan(success_rate(scores, success_score))
