"""What a run's policy is restored from, found without TensorFlow: its checkpoint and its env.

`agents.load_policy` uses it for a run without `policy/` (or when given a checkpoint), and
`python -m agents.scripts.visualize` for every run; `agents.ppo.restore` then restores the
checkpoint and exports its policy as training does.
"""

from __future__ import annotations

import os
from typing import Any

from agents import envs
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
            native = registry.make_native(config.env, config.max_episode_steps)
            return envs.NativeGymEnv(native, render_mode=render_mode)  # Played as a gym env.
        wrapper = config.env_wrapper
        if config.native_env:  # Gymnasium's env of the id, observed as the native one is.
            wrapper = registry.python_wrapper(config.env, config.env_wrapper)
        return make_env(config.env, config.max_episode_steps, wrapper, render_mode=render_mode)
    except ValueError as error:
        raise UsageError(str(error)) from None
