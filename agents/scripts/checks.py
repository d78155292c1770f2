"""Checks of the run settings that PPO does not read: schedule, episodes, environment limits."""

from __future__ import annotations

from typing import Any

from agents.scripts.utility import UsageError


def check_run_settings(config: Any) -> None:
    """Raise `UsageError` naming the first bad value of the run's own settings."""
    value = config["checkpoint_every"]
    if not _is_int(value) or value < 1:
        raise UsageError(f"checkpoint_every must be a positive integer, got {value!r}.")
    value = config.get("max_episode_steps")
    if value is not None and (not _is_int(value) or value < 1):
        raise UsageError(
            f"max_episode_steps must be a positive integer, or None for the env's own limit, "
            f"got {value!r}."
        )
    value = config.get("env_timeout")
    if value is not None and (not isinstance(value, (int, float)) or not value > 0):
        raise UsageError(
            f"env_timeout must be a number of seconds > 0, or None for no limit, got {value!r}."
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
