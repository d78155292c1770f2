"""Environment construction for the scripts; imports no TensorFlow (used in env processes)."""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import gymnasium as gym
import numpy as np

from agents.envs import registry
from agents.envs.python import env_warnings
from agents.envs.python.extras import optional_package
from agents.tools.observation_wrappers import InfoActionMask, PackDictObservation
from agents.tools.wrappers import ExternalProcess, VisitedCells

# The package each family of environments needs, and the extra of setup.py that installs it: by
# id prefix (importing the package registers the ids) or by the module of the entry point
# gymnasium registers (gymnasium knows the ids; stepping them needs the package).
ID_PACKAGES = {"MiniGrid-": ("minigrid", "minigrid"), "ALE/": ("ale_py", "atari")}
ENTRY_POINT_PACKAGES = {"gymnasium.envs.mujoco.": ("mujoco", "mujoco")}
WRAPPERS = ("minigrid_pixels", "minigrid_image", "minigrid_dict", "atari", "info_action_mask")
API_NAMESPACE = (
    "agents_api"  # Gymnasium namespace of environments given to agents.train as callables.
)


def make_env(
    env_id: str, max_episode_steps: int | None = None, wrapper: str | None = None, **kwargs: Any
) -> gym.Env:
    """Create a gymnasium environment with the wrappers PPO needs.

    Continuous actions are not clipped here, though the Gaussian policy is unbounded: the
    `tools.BatchEnv` that steps these envs clips the whole batch at once (`clip_actions=True`),
    as gymnasium's `ClipAction` would per env. `wrapper` selects a pixel preprocessing:
    "minigrid_pixels" (the agent's partial view rendered as a 56x56 grayscale image, plus a count
    of visited cells), "minigrid_image" (minigrid's symbolic 7x7x3 view, what the native MiniGrid
    envs observe), "minigrid_dict" (that view and the agent's direction, minigrid's dict without
    its mission string), "atari" (84x84 grayscale, 4 stacked frames, frame skip 4, sticky actions
    as in ALE v5) or "info_action_mask" (gymnasium's `info["action_mask"]` moved into the
    observation as its `action_mask` key). A dict observation is packed into one float32 vector
    (`tools.observation_wrappers.PackDictObservation`).

    Raises:
        ValueError: If gymnasium does not know `env_id` or `wrapper` is unknown.
    """
    _check_wrapper(wrapper)
    _register(env_id)
    check_packages(env_id)
    env_warnings.quiet_mujoco(env_id)
    # Atari's limit counts agent steps (4 frames each), as EnvPool's does: it wraps the
    # preprocessing, since beneath it the emulator's frames would be counted.
    agent_steps_limit = max_episode_steps if wrapper == "atari" else None
    if wrapper == "atari":
        kwargs.setdefault("frameskip", 1)  # AtariPreprocessing skips frames itself.
        max_episode_steps = None
    try:
        env = gym.make(env_id, max_episode_steps=max_episode_steps, **kwargs)
    except (gym.error.Error, ImportError) as error:  # ImportError: an id's `module:` part.
        _check_api_env(env_id)
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise ValueError(f"Unknown environment {env_id!r}: {first}") from None
    if wrapper == "minigrid_pixels":
        env = _minigrid_pixels(env)
    elif wrapper == "minigrid_image":
        env = _minigrid_wrappers().ImgObsWrapper(env)
    elif wrapper == "minigrid_dict":
        env = gym.wrappers.FilterObservation(env, ["direction", "image"])
    elif wrapper == "atari":
        env = _atari(env)
        if agent_steps_limit is not None:
            env = gym.wrappers.TimeLimit(env, agent_steps_limit)
    elif wrapper == "info_action_mask":
        env = InfoActionMask(env)
    if isinstance(env.observation_space, gym.spaces.Dict):
        env = PackDictObservation(env)
    return env


def make_envs(
    env_id: str, count: int, max_episode_steps=None, processes: bool = False, wrapper=None
) -> list:
    """`count` environments, each in its own process when `processes` is True.

    Warnings raised while an env process makes its environment are shown in this process, so that
    a warning of every environment shows once, as it does without processes.

    Raises:
        ValueError: If gymnasium does not know `env_id` or `wrapper` is unknown (checked in this
            process also when the environments live in child processes).
    """
    constructor = functools.partial(make_env, env_id, max_episode_steps, wrapper)
    if not processes:
        return [constructor() for _ in range(count)]
    check_env(env_id, wrapper)  # Here: a child's error would come as its traceback.

    envs = []
    try:
        for _ in range(count):
            envs.append(ExternalProcess(functools.partial(env_warnings.record, constructor)))
            env_warnings.show_recorded(envs[-1])
    except BaseException:
        for env in envs:
            env.close()
        raise
    return envs


def _register(env_id: str) -> None:
    """Import the package that registers `env_id`'s family, with a hint if it is missing."""
    for prefix, (module, extra) in ID_PACKAGES.items():
        if env_id.startswith(prefix):
            package = optional_package(module, extra, env_id)
            if module == "ale_py":
                gym.register_envs(package)


def check_packages(env_id: str) -> None:
    """Raise ValueError, one line with the install command, if a package that steps `env_id`
    in Python is missing (MuJoCo's envs are gymnasium's, their simulator is not)."""
    try:
        entry_point = gym.spec(env_id.rpartition(":")[2]).entry_point
    except gym.error.Error:
        return  # An unknown id: `check_env` and `gym.make` say so.
    location = str(getattr(entry_point, "__module__", entry_point))
    for prefix, (module, extra) in ENTRY_POINT_PACKAGES.items():
        if location.startswith(prefix):
            optional_package(module, extra, env_id)


def check_env(env_id: str, wrapper: str | None, packages: bool = True) -> None:
    """Raise ValueError if `wrapper` is unknown or gymnasium cannot find `env_id`, without
    building the environment (its error would otherwise come from a child process).

    Args:
        env_id: A gymnasium id, or "module:id".
        wrapper: An `env_wrapper` name, or None.
        packages: Also check that the packages stepping `env_id` in Python are installed (not
            needed where EnvPool steps it in C++).
    """
    _check_wrapper(wrapper)
    _check_known(env_id)
    if packages:
        check_packages(env_id)


def _check_wrapper(wrapper: str | None) -> None:
    if wrapper not in (None, *WRAPPERS):
        raise ValueError(f"Unknown env_wrapper {wrapper!r}; accepted: None, {', '.join(WRAPPERS)}.")


def _check_known(env_id: str) -> None:
    """Raise ValueError if gymnasium cannot find `env_id`, without building the environment."""
    _register(env_id)
    not_found = (gym.error.NameNotFound, gym.error.VersionNotFound, gym.error.NamespaceNotFound)
    try:
        gym.spec(registry.import_env_module(env_id))  # "module:Name-v0" imports `module` first.
    except (ImportError, *not_found) as error:
        _check_api_env(env_id)
        raise ValueError(f"Unknown environment {env_id!r}: {error}") from None
    except gym.error.Error:
        pass  # E.g. an id without version, which `gym.make` resolves to the latest one.


def _check_api_env(env_id: str) -> None:
    """Raise ValueError saying how to go on where `env_id` names an env that `agents.train` got
    as a Python object in another process: only Python can give it again."""
    if env_id.startswith(f"{API_NAMESPACE}/"):
        raise ValueError(
            f"The env {env_id!r} was given to agents.train as a Python object, which this "
            "process does not have: from Python, resume with agents.train(resume=RUN_DIR, "
            "env=YOUR_ENV) and evaluate with agents.evaluate(policy, YOUR_ENV)."
        )


def _minigrid_wrappers() -> Any:
    """minigrid's observation wrappers (an optional package: the `minigrid` extra)."""
    return optional_package("minigrid", "minigrid", "The minigrid env wrappers").wrappers


def _minigrid_pixels(env: gym.Env) -> gym.Env:
    wrappers = _minigrid_wrappers()
    env = VisitedCells(env, lambda inner: tuple(inner.unwrapped.agent_pos))
    env = wrappers.ImgObsWrapper(wrappers.RGBImgPartialObsWrapper(env, tile_size=8))
    return gym.wrappers.GrayscaleObservation(env, keep_dim=True)


def _atari(env: gym.Env, noop_max: int = 30) -> gym.Env:
    env = gym.wrappers.AtariPreprocessing(env, frame_skip=4, screen_size=84, noop_max=noop_max)
    env = gym.wrappers.FrameStackObservation(env, 4)
    space = env.observation_space
    channels_last = gym.spaces.Box(0, 255, (*space.shape[1:], space.shape[0]), np.uint8)
    return gym.wrappers.TransformObservation(
        env, lambda observ: np.moveaxis(np.asarray(observ), 0, -1), channels_last
    )


def episode_limit(env: Any) -> int | None:
    """The most steps an episode of `env` can take, where the env says so; else None.

    Read from gymnasium's time limit (`spec.max_episode_steps`, or a `TimeLimit` wrapper's own
    where the env has no spec), ALE's frame cap (a step is at least one frame) and MiniGrid's own
    `max_steps`, in that order. `env` may be an
    `ExternalProcess`, whose attributes are read in its child.
    """
    limit = spec_limit(getattr(env, "spec", None))
    if limit is not None:
        return limit
    if isinstance(env, gym.Env):  # A TimeLimit around an env of no spec (a user's class).
        with contextlib.suppress(AttributeError):
            return steps_limit(env.get_wrapper_attr("_max_episode_steps"))
    try:
        steps = env.get_wrapper_attr("max_steps") if isinstance(env, gym.Env) else env.max_steps
    except AttributeError:
        return None
    return steps_limit(steps)


def spec_limit(spec: Any) -> int | None:
    """The episode limit a gymnasium spec gives: its time limit, or ALE's frame cap; else None."""
    if spec is None:
        return None
    if spec.max_episode_steps:
        return int(spec.max_episode_steps)
    frames = (spec.kwargs or {}).get("max_num_frames_per_episode")
    return int(frames) if frames else None


def steps_limit(steps: Any) -> int | None:
    """An env's own `max_steps` (MiniGrid's) as an episode limit, if it is one."""
    return int(steps) if isinstance(steps, int) and steps > 0 else None
