"""Banks of initial layouts made by minigrid's own generator, cached on disk.

minigrid's generators retry until a layout fits (rooms, doors, keys placed at random), which a
program of fixed shapes cannot express; resets instead draw from a bank of layouts that minigrid's
`reset(seed=...)` made, so the layouts are minigrid's and none is invented.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import sys

import numpy as np

from agents.envs.gridworld.convert import stack, state_of

FIELDS = ("grid", "pos", "direction", "carried", "step_count", "target")


def cache_dir() -> pathlib.Path:
    """Where banks are kept: `$AGENTS_CACHE`, else `$XDG_CACHE_HOME/agents`, else
    `~/.cache/agents`."""
    if os.environ.get("AGENTS_CACHE"):
        return pathlib.Path(os.environ["AGENTS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "agents"


def make_minigrid(env_id: str):
    """minigrid's own env of `env_id`, unwrapped.

    Raises:
        ValueError: minigrid is not installed (native MiniGrid reads its rules' constants and
            makes its layouts with it).
    """
    import gymnasium as gym

    try:
        import minigrid  # noqa: F401  (registers the MiniGrid ids)
    except ImportError:
        raise ValueError(
            f"Native {env_id} makes its layouts with minigrid, which is not installed: "
            'pip install -e ".[minigrid]".'
        ) from None
    return gym.make(env_id).unwrapped


def generate(env_id: str, size: int, seed: int) -> dict[str, np.ndarray]:
    """`size` layouts: minigrid's `reset(seed=seed + k)` for k in range(size)."""
    env = make_minigrid(env_id)
    states = []
    for k in range(size):
        env.reset(seed=seed + k)
        states.append(state_of(env))
    return stack(states)


def _checksum(bank: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for field in FIELDS:
        digest.update(np.ascontiguousarray(bank[field]).tobytes())
    return digest.hexdigest()


def path_of(env_id: str, size: int, seed: int) -> pathlib.Path:
    """The cache file of a bank (the minigrid version is part of the name)."""
    import minigrid

    version = getattr(minigrid, "__version__", "unknown")
    return cache_dir() / "minigrid_layouts" / f"{env_id}-n{size}-s{seed}-minigrid{version}.npz"


def _read(path: pathlib.Path, size: int) -> dict[str, np.ndarray]:
    """The bank stored at `path`; ValueError saying what is wrong with the file."""
    try:
        with np.load(path) as stored:
            bank = {field: stored[field] for field in FIELDS}
            checksum = str(stored["checksum"])
    except Exception as error:  # noqa: BLE001  (zip, pickle and key errors alike)
        raise ValueError(f"unreadable ({type(error).__name__}: {error})") from None
    if len(bank["grid"]) != size:
        raise ValueError(f"holds {len(bank['grid'])} layouts, expected {size}")
    if _checksum(bank) != checksum:
        raise ValueError("checksum mismatch")
    return bank


def bank(env_id: str, size: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The bank of `size` layouts of `env_id` from `seed`: read from the cache, else generated
    (and cached). A cache file that cannot be read or fails its checksum is rebuilt, with one line
    on stderr saying so.

    Raises:
        ValueError: If the bank can be neither read nor written, naming the file and how to
            rebuild it.
    """
    path = path_of(env_id, size, seed)
    if path.exists():
        try:
            return _read(path, size)
        except ValueError as error:
            print(f"Layout bank {path} is corrupt ({error}); rebuilding it.", file=sys.stderr)
    layouts = generate(env_id, size, seed)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial.npz")
        np.savez(partial, checksum=np.asarray(_checksum(layouts)), **layouts)
        os.replace(partial, path)
    except OSError as error:
        raise ValueError(
            f"Layout bank {path} cannot be written ({error.strerror or error}); set AGENTS_CACHE "
            "to a writable folder and run again to rebuild it."
        ) from None
    return layouts
