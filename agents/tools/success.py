"""The success rate: the share of episodes whose score exceeds a task's success score."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def success_rate(scores: Sequence[float], success_score: float | None) -> float:
    """The share of `scores` strictly above `success_score` (a score equal to it is no
    success), e.g. MiniGrid's goal reached where `success_score` is 0.

    Returns:
        The share in [0, 1]; nan where there is no score or no success score.
    """
    if success_score is None or len(scores) == 0:
        return float("nan")
    return float(np.mean(np.asarray(scores, np.float64) > success_score))
