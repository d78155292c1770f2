"""Banks of initial layouts made by minigrid's own generator, cached on disk.

minigrid's generators retry until a layout fits (rooms, doors, keys placed at random), which a
program of fixed shapes cannot express; resets instead draw from a bank of layouts that minigrid's
`reset(seed=...)` made, so the layouts are minigrid's and none is invented.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import sys
import tempfile

import numpy as np

from agents.envs.gridworld.convert import stack, state_of

FIELDS = ("grid", "pos", "direction", "carried", "step_count", "target")
# Which bank a file holds, stored in it beside the layouts.
IDENTITY = ("env_id", "size", "seed", "generator", "minigrid_version", "format")
FORMAT = 2  # The bank file's layout: raise it when FIELDS or IDENTITY change.


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


def _identity(env_id: str, size: int, seed: int) -> dict[str, str]:
    """What a bank file must hold to be the bank of `env_id`, `size` and `seed`: the file name
    says so too, but a file copied or renamed under it would be used for another env's."""
    return {
        "env_id": env_id,
        "size": str(size),
        "seed": str(seed),
        "generator": "minigrid",
        "minigrid_version": _minigrid_version(),
        "format": str(FORMAT),
    }


def _minigrid_version() -> str:
    import minigrid

    return getattr(minigrid, "__version__", "unknown")


def _checksum(bank: dict[str, np.ndarray], identity: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for field in FIELDS:
        digest.update(np.ascontiguousarray(bank[field]).tobytes())
    for key in IDENTITY:
        digest.update(f"{key}={identity[key]};".encode())
    return digest.hexdigest()


def path_of(env_id: str, size: int, seed: int) -> pathlib.Path:
    """The cache file of a bank (the minigrid version is part of the name)."""
    name = f"{env_id}-n{size}-s{seed}-minigrid{_minigrid_version()}.npz"
    return cache_dir() / "minigrid_layouts" / name


def _read(path: pathlib.Path, identity: dict[str, str]) -> dict[str, np.ndarray]:
    """The bank stored at `path` if it is the one `identity` names; else ValueError saying what
    is wrong with the file."""
    try:
        with np.load(path) as stored:
            bank = {field: stored[field] for field in FIELDS}
            held = {key: str(stored[key]) for key in IDENTITY if key in stored.files}
            checksum = str(stored["checksum"])
    except Exception as error:  # noqa: BLE001  (zip, pickle and key errors alike)
        raise ValueError(f"unreadable ({type(error).__name__}: {error})") from None
    if set(held) != set(IDENTITY):
        raise ValueError("a bank file of an older format")
    wrong = [key for key in IDENTITY if held[key] != identity[key]]
    if wrong:
        found = ", ".join(f"{key} {held[key]!r}" for key in wrong)
        wanted = ", ".join(f"{identity[key]!r}" for key in wrong)
        raise ValueError(f"it holds {found}, not {wanted}")
    if len(bank["grid"]) != int(identity["size"]):
        raise ValueError(f"holds {len(bank['grid'])} layouts, expected {identity['size']}")
    if _checksum(bank, held) != checksum:
        raise ValueError("checksum mismatch")
    return bank


def _write(path: pathlib.Path, layouts: dict[str, np.ndarray], identity: dict[str, str]) -> None:
    """Write the bank beside `path` under a name of this writer's own, then rename it: builders
    in other processes never write the same file, and a reader sees a whole bank or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as file:
            arrays = {key: np.asarray(identity[key]) for key in IDENTITY}
            np.savez(file, checksum=np.asarray(_checksum(layouts, identity)), **arrays, **layouts)
        os.chmod(partial, 0o644)  # mkstemp's 0600 would hide a shared cache from other users.
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise


def bank(env_id: str, size: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The bank of `size` layouts of `env_id` from `seed`: read from the cache, else generated
    (and cached). A cache file that cannot be read, fails its checksum or holds another bank
    (another env, size, seed, minigrid version or format) is rebuilt, with one line on stderr
    saying so. Processes that build the same bank at once each write a file of their own and
    rename it into place, so none fails and the last one's (equal) bank stays.

    Raises:
        ValueError: If the bank can be neither read nor written, naming the file and how to
            rebuild it.
    """
    path, identity = path_of(env_id, size, seed), _identity(env_id, size, seed)
    if path.exists():
        try:
            return _read(path, identity)
        except ValueError as error:
            print(f"Layout bank {path} is not usable ({error}); rebuilding it.", file=sys.stderr)
    layouts = generate(env_id, size, seed)
    try:
        _write(path, layouts, identity)
    except OSError as error:
        raise ValueError(
            f"Layout bank {path} cannot be written ({error.strerror or error}); set AGENTS_CACHE "
            "to a writable folder and run again to rebuild it."
        ) from None
    return layouts
