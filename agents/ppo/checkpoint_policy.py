"""A run's policy from one of its checkpoints: found, restored and exported as training exports it.

`agents.load_policy` uses it for a run without `policy/` (or when given a checkpoint), and
`python -m agents.scripts.visualize` for every run.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from agents.config.errors import UsageError
from agents.envs import registry
from agents.envs.python.environments import API_NAMESPACE, make_env
from agents.tools.checkpoints import list_checkpoints


def find_checkpoint(run_dir: str, checkpoint: str | None) -> str:
    """The checkpoint to restore (the newest one on disk by default), or a clear error.

    Raises:
        UsageError: `checkpoint` does not exist, or the run has none.
    """
    if checkpoint:
        if not os.path.isfile(checkpoint + ".index"):
            raise UsageError(f"No checkpoint {checkpoint!r} (expected {checkpoint}.index).")
        return checkpoint
    found = list_checkpoints(os.path.join(run_dir, "checkpoints"))
    if not found:
        raise UsageError(f"No checkpoint in {run_dir!r}: train first, or pass --checkpoint.")
    return found[-1]


def make_run_env(config: Any, render_mode: str | None = None) -> Any:
    """The run's environment, rendering as asked; an env that cannot be made is one line.

    Raises:
        UsageError: The env is unknown here, or was a Python callable of another process.
    """
    if config.env.startswith(f"{API_NAMESPACE}/"):
        what = "native env" if config.native_env else "Python callable"
        raise UsageError(
            f"The run was trained on {config.env}, an environment given to agents.train as a "
            f"{what}, which exists only in that process: evaluate it with "
            "agents.evaluate(run_dir, <your env>), or register it (agents.envs.register for a "
            "native env, gymnasium.register otherwise) in a module named in its id."
        )
    try:
        if config.native_env and not registry.is_gymnasium_twin(config.env):
            from agents.envs.gym_env import NativeGymEnv  # A user's native env, played as one.

            native = registry.make_native(config.env, config.max_episode_steps)
            return NativeGymEnv(native, render_mode=render_mode)
        wrapper = config.env_wrapper
        if config.native_env:  # Gymnasium's env of the id, observed as the native one is.
            wrapper = registry.python_wrapper(config.env, config.env_wrapper)
        return make_env(config.env, config.max_episode_steps, wrapper, render_mode=render_mode)
    except ValueError as error:
        raise UsageError(str(error)) from None


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
    import tensorflow as tf

    from agents import tools
    from agents.ppo.export import export_policy
    from agents.ppo.factory import make_agent
    from agents.tools import checkpoints

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
