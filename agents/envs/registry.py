"""Which gymnasium ids have a native implementation; plain Python (read before TensorFlow loads)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from agents.runtime import tf_loading

# gymnasium id -> (module in this package, class, keyword arguments); the registered time limits.
BUILTIN: dict[str, tuple[str, str, dict[str, Any]]] = {
    "CartPole-v0": ("cartpole", "CartPole", {"max_episode_steps": 200}),
    "CartPole-v1": ("cartpole", "CartPole", {"max_episode_steps": 500}),
    "Pendulum-v1": ("pendulum", "Pendulum", {"max_episode_steps": 200}),
    "Acrobot-v1": ("acrobot", "Acrobot", {"max_episode_steps": 500}),
    "MountainCar-v0": ("mountain_car", "MountainCar", {"max_episode_steps": 200}),
    "MountainCarContinuous-v0": (
        "mountain_car",
        "MountainCarContinuous",
        {"max_episode_steps": 999},
    ),
}
CLASSIC_CONTROL_IDS = tuple(BUILTIN)
# minigrid's ids (`gridworld.env.IDS`, kept here as plain strings so no TensorFlow loads).
MINIGRID_IDS = tuple(
    f"MiniGrid-{name}"
    for name in (
        "Empty-5x5-v0",
        "Empty-8x8-v0",
        "Empty-16x16-v0",
        "DoorKey-5x5-v0",
        "DoorKey-8x8-v0",
        "DoorKey-16x16-v0",
        "KeyCorridorS3R1-v0",
        "KeyCorridorS3R2-v0",
        "KeyCorridorS3R3-v0",
        "KeyCorridorS4R3-v0",
        "KeyCorridorS5R3-v0",
        "KeyCorridorS6R3-v0",
        "MultiRoom-N2-S4-v0",
        "MultiRoom-N4-S5-v0",
        "MultiRoom-N4-S5-v1",
        "MultiRoom-N6-v0",
        "FourRooms-v0",
        "LavaGapS7-v0",
        "ObstructedMaze-1Dlh-v0",
        "ObstructedMaze-2Dlh-v0",
        "ObstructedMaze-1Q-v0",
        "ObstructedMaze-Full-v0",
    )
)
BUILTIN.update(
    {env_id: ("gridworld.env", "MiniGridEnv", {"env_id": env_id}) for env_id in MINIGRID_IDS}
)
# Ids registered in this process (e.g. an env class given to `agents.train`): id -> constructor.
_REGISTERED: dict[str, Callable[[], Any]] = {}


def native_ids() -> tuple[str, ...]:
    """The env ids that `native_env=True` accepts."""
    return tuple(BUILTIN) + tuple(_REGISTERED)


def is_gymnasium_twin(env_id: str) -> bool:
    """Whether gymnasium (or minigrid) has the env of the native `env_id`: a built-in one."""
    return _resolve(env_id) in BUILTIN


def is_builtin(env_id: str) -> bool:
    """Whether `make_native(env_id)` builds one of the project's own envs (not a user's)."""
    name = _resolve(env_id)
    return name in BUILTIN and name not in _REGISTERED


def register(env_id: str, constructor: Callable[[], Any]) -> None:
    """Make `constructor` (returning a `NativeEnv`) the native implementation of `env_id`."""
    _REGISTERED[env_id] = constructor


def native_class(module: str, name: str) -> Any:
    """The class `name` of the native env module `agents.envs.<module>` (TensorFlow's: the
    caller has set its process settings), imported only when an env of it is used."""
    return getattr(importlib.import_module(f"agents.envs.{module}"), name)


def import_env_module(env_id: str) -> str:
    """The id without its module: `module:Name-v0` imports `module` first, as gymnasium does,
    so that the module can register `Name-v0` (here or in gymnasium).

    Raises:
        ImportError: The module cannot be imported.
    """
    module, _, name = env_id.rpartition(":")
    if module:
        importlib.import_module(module)  # A user's module, named only in the env id.
    return name


def _resolve(env_id: str) -> str:
    """The id itself; `module:Name-v0` imports `module` first (which may `register` it)."""
    try:
        return import_env_module(env_id)
    except ImportError as error:
        module = env_id.rpartition(":")[0]
        raise ValueError(f"env {env_id!r}: cannot import {module!r} ({error}).") from None


def check_native(env_id: str) -> None:
    """Raise ValueError naming the native ids if `env_id` has no native implementation.

    An id `module:Name-v0` imports `module` first, as gymnasium does, so a module that registers
    its native envs on import needs no other step.
    """
    if _resolve(env_id) not in native_ids():
        raise ValueError(
            f"env {env_id!r} has no native implementation (native_env=True); native envs: "
            f"{', '.join(native_ids())}."
        )


def native_wrappers(env_id: str) -> tuple[str, ...]:
    """The `env_wrapper` values a native env of `env_id` renders itself (MiniGrid's views)."""
    return ("minigrid_image", "minigrid_pixels") if _resolve(env_id) in MINIGRID_IDS else ()


def python_wrapper(env_id: str, wrapper: str | None = None) -> str | None:
    """The `env_wrapper` under which gymnasium's env of `env_id` observes what the native one
    does (minigrid's image for the MiniGrid ids, or the frames asked for), for evaluating
    natively trained policies."""
    if _resolve(env_id) in MINIGRID_IDS:
        return wrapper or "minigrid_image"
    return wrapper


def make_native(
    env_id: str,
    max_episode_steps: int | None = None,
    layout_bank: int | None = None,
    wrapper: str | None = None,
    layout_draws: int | None = None,
):
    """The native environment of `env_id`, with `max_episode_steps` overriding its time limit.

    `layout_bank` is the number of reset layouts of a MiniGrid id (None: its own, or the size
    for `layout_draws`, the most layouts a run draws), `wrapper` its observation
    (`native_wrappers`); other envs ignore them.

    Raises:
        ValueError: If `env_id` has no native implementation.
    """
    check_native(env_id)
    env_id = _resolve(env_id)
    if env_id in _REGISTERED:
        env = _REGISTERED[env_id]()
    else:
        module, name, kwargs = BUILTIN[env_id]
        if env_id in MINIGRID_IDS:
            kwargs = dict(kwargs, wrapper=wrapper)
            if layout_bank is not None:
                kwargs["layout_bank"] = layout_bank
            if layout_draws is not None:
                kwargs["layout_draws"] = layout_draws

        # The native envs load TensorFlow (its settings first): only the one asked for loads.
        tf_loading.prepare()
        env = native_class(module, name)(**kwargs)
    if max_episode_steps is not None:
        env.max_episode_steps = max_episode_steps
    return env
