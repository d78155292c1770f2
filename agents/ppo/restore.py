"""A run's policy from one of its checkpoints: restored, then exported as training exports it.

The checkpoint and the env are found by `agents.ppo.checkpoint_policy` (no TensorFlow); this
module is imported once TensorFlow is loaded (`agents.runtime.tf_loading`).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import tensorflow as tf

from agents import tools
from agents.config.errors import UsageError
from agents.ppo.checkpoint_policy import find_checkpoint
from agents.ppo.export import export_policy
from agents.ppo.factory import make_agent
from agents.tools import checkpoints


def restore_saved_model(run_dir: str, checkpoint: str | None, env: Any, config: Any) -> tuple:
    """The policy of a run's checkpoint (the newest readable one by default) for `env`.

    The network and normalizer are restored and exported as training exports them (into a
    temporary directory), then loaded back.

    Args:
        run_dir: The run directory.
        checkpoint: A checkpoint path, or None for the newest readable one (a warning is
            printed for each unreadable newer one).
        env: The run's environment (its spaces build the agent).
        config: The run's config (`agents.config.files.load_config(run_dir)`).

    Returns:
        The loaded SavedModel and the path of the checkpoint it holds.

    Raises:
        UsageError: The checkpoint is missing or cannot be read.
    """
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv([env], blocking=True, clip_actions=True))
    agent = make_agent(batch_env, config)
    saved = tf.train.Checkpoint(**agent.policy_checkpointables())

    def restore(path: str) -> None:
        saved.restore(path).expect_partial().assert_existing_objects_matched()

    if checkpoint:
        path = find_checkpoint(run_dir, checkpoint)
        try:
            restore(path)
        except (tf.errors.OpError, IndexError, OSError) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise UsageError(f"Checkpoint {path} cannot be read ({reason}).") from None
    else:
        try:
            path = checkpoints.restore_latest(os.path.join(run_dir, "checkpoints"), restore)
        except checkpoints.CheckpointError as error:
            raise UsageError(str(error)) from None
    with tempfile.TemporaryDirectory() as directory:
        export_policy(agent, directory)
        return tf.saved_model.load(directory), path


def load_saved_model(path: str) -> Any:
    """The SavedModel at `path` (`tf.saved_model.load`), for a caller that loads no TensorFlow
    itself before it is set up (`agents.load_policy`)."""
    return tf.saved_model.load(path)
