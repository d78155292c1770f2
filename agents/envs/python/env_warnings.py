"""Third-party warnings of environments: shown once per process, no log file in the working dir.

MuJoCo's C library prints its warnings straight to the console and appends them to MUJOCO_LOG.TXT
in the working directory: MuJoCo 4.0 warns "compiler attribute 'settotalmass' is deprecated" for
every HalfCheetah model it compiles, so once per environment. Routed into Python's `warnings` as
`MujocoWarning`, they show once per process and obey the user's filters, and the log file stays
off (the Python bindings raise MuJoCo's errors as exceptions). A warning callback or log file the
user set is kept.

Environments built in env processes record the warnings of their construction, and the parent
shows them under its own filters, so that 16 env processes say the same thing once.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from agents.envs.python.extras import optional_package

# MuJoCo's default log file, relative to the working directory.
MUJOCO_LOG_FILE = "MUJOCO_LOG.TXT"
# The env attribute that carries the warnings recorded in an env process to the parent.
RECORDED = "agents_construction_warnings"

# The warning registry of warnings shown for env processes: a "default" filter shows each once.
_SHOWN: dict = {}


class MujocoWarning(UserWarning):
    """A warning of MuJoCo's C library (e.g. a deprecated model attribute)."""


def quiet_mujoco(env_id: str) -> None:
    """Before `env_id` is made in this process: route MuJoCo's warnings, and no log file.

    Does nothing for an environment that is not MuJoCo's while MuJoCo is not loaded (importing
    it takes a few tenths of a second).
    """
    if not _uses_mujoco(env_id):
        return
    mujoco = optional_package("mujoco", "mujoco", env_id)

    show_once()
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_warn)
    if hasattr(mujoco, "MjLogConfig"):  # MuJoCo >= 3.4; before, the callback keeps the file off.
        config = mujoco.MjLogConfig.get()
        if config.logto_file and config.logfile == MUJOCO_LOG_FILE:
            config.logto_file = False
            config.set()


def show_once() -> None:
    """Show each `MujocoWarning` once per process, unless the user's filters say otherwise."""
    if not any(item[0] == "once" and item[2] is MujocoWarning for item in warnings.filters):
        warnings.filterwarnings("once", category=MujocoWarning, append=True)


def record(constructor: Callable[[], gym.Env]) -> gym.Env:
    """`constructor()`, with the warnings it raised kept on the environment (in env processes).

    All are kept, whatever this process's filters: the parent's filters decide, in
    `show_recorded`.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = constructor()
    recorded = [(str(item.message), item.category, item.filename, item.lineno) for item in caught]
    setattr(env, RECORDED, recorded)
    return env


def show_recorded(env: Any) -> None:
    """Show in this process the warnings recorded while `env` was made in an env process."""
    show_once()
    for message, category, filename, lineno in getattr(env, RECORDED, ()):
        warnings.warn_explicit(message, category, filename, lineno, registry=_SHOWN)


def _uses_mujoco(env_id: str) -> bool:
    """Whether MuJoCo is loaded, or gymnasium's entry point of `env_id` is in a MuJoCo module."""
    if "mujoco" in sys.modules:
        return True
    try:
        entry_point = gym.spec(env_id.rpartition(":")[2]).entry_point
    except gym.error.Error:
        return False
    return "mujoco" in str(getattr(entry_point, "__module__", entry_point))


def _warn(message: str) -> None:
    """MuJoCo's warning callback; it must not raise, as an exception into MuJoCo aborts Python."""
    try:
        warnings.warn(message, MujocoWarning, stacklevel=2)
    except Exception:  # E.g. a filter that turns warnings into errors.
        print(f"MuJoCo warning: {message}", file=sys.stderr)
