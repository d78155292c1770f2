"""What a training run shows in TensorBoard: grouped tags, histograms of the rollout, hparams.

Tags are grouped so that TensorBoard's cards sort by kind: `train/...` and `eval/...` (scores,
episode lengths, rollout diagnostics), `loss/...` (the update's losses and their diagnostics) and
`rnd/...` (the exploration bonus). Every summary's step is the number of training env steps.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

LOSS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "grad_norm")
RND = (
    "predictor_loss",
    "intrinsic_reward",
    "value_int",
    "value_ext",
    "explained_variance_int",
    "visited_cells",
)
UNLOGGED = ("env_steps",)  # The x axis of every summary already.
# Fields of the rollout shown as histograms (the RND agent adds `value_int`).
ROLLOUT_FIELDS = ("action", "value", "value_int", "advantage", "log_prob")


def tag(phase: str, name: str) -> str | None:
    """The summary tag of metric `name` of `phase`, or None for one not written.

    Args:
        phase: "train" or "eval".
        name: A metric's name, e.g. "policy_loss".

    Returns:
        E.g. "loss/policy_loss", "rnd/intrinsic_reward", "eval/mean_score".
    """
    if name in UNLOGGED:
        return None
    if name in LOSS:
        return f"loss/{name}"
    if name in RND:
        return f"rnd/{name}"
    return f"{phase}/{name}"


def histograms(rollout: Mapping[str, Any], log_std: Any = None) -> dict[str, np.ndarray]:
    """Histogram metrics of the latest rollout: actions, values, log-probabilities, log-std.

    Args:
        rollout: Fields of the rollout buffer, [time, batch, ...] arrays.
        log_std: The Gaussian policy's log-std variable, if it has one.

    Returns:
        Name -> flat float32 array; `tools.Loop` writes arrays as histograms.
    """
    result = {
        f"rollout_{key}": np.asarray(rollout[key], np.float32).ravel()
        for key in ROLLOUT_FIELDS
        if key in rollout
    }
    if log_std is not None:
        result["policy_log_std"] = np.asarray(log_std, np.float32).ravel()
    return result


def hparams(config: Mapping[str, Any]) -> dict[str, bool | int | float | str]:
    """The config as TensorBoard's hparams plugin accepts it (lists and None as strings)."""
    accepted = (bool, int, float, str)
    return {
        key: value if isinstance(value, accepted) else str(value) for key, value in config.items()
    }


def write_hparams(run_dir: str, config: Mapping[str, Any]) -> None:
    """Record the run's config in TensorBoard's hparams plugin, in the run directory itself.

    The plugin shows the config beside the run's metrics (`train/...` and `eval/...`, written in
    the same directory), one trial and one TensorBoard entry per run.
    """
    import tensorflow as tf
    from tensorboard.plugins.hparams import api as hp

    writer = tf.summary.create_file_writer(run_dir)
    with writer.as_default():
        hp.hparams(hparams(config), trial_id=os.path.basename(os.path.normpath(run_dir)))
    writer.close()
