"""Banks of initial layouts made by minigrid's own generator, cached on disk.

minigrid's generators retry until a layout fits (rooms, doors, keys placed at random), which a
program of fixed shapes cannot express; resets instead draw from a bank of layouts that minigrid's
`reset(seed=...)` made, so the layouts are minigrid's and none is invented. A bank holds each
layout in a few bytes (`compact`). A run's bank holds as many layouts as the run can draw
(`size_for`), each drawn once before any repeats, and is ready as the run needs it
(`open_bank`): its first chunk before training starts, the rest while it trains.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

from agents.envs.gridworld import build_progress, building, compact, growing
from agents.envs.gridworld.compact import FIELDS

# Which bank a file holds, stored in it beside the layouts.
IDENTITY = ("env_id", "size", "seed", "generator", "minigrid_version", "format")
FORMAT = 3  # The bank file's layout: raise it when FIELDS or IDENTITY change.
LARGE = 2**20  # The most layouts a bank holds: a long run draws them all, then starts over.
# Ids whose generator makes few layouts (minigrid's 2,000 resets give 1, 48 and 15 distinct):
# a bank of 4,096 draws holds each of them in about its frequency.
SMALL_SPACE = (
    "MiniGrid-Empty-5x5-v0",
    "MiniGrid-Empty-8x8-v0",
    "MiniGrid-Empty-16x16-v0",
    "MiniGrid-DoorKey-5x5-v0",
    "MiniGrid-LavaGapS7-v0",
)


def default_size(env_id: str) -> int:
    """The bank size of `env_id` when a run sets none and names no budget; the most
    `size_for` gives."""
    return 4096 if env_id in SMALL_SPACE else LARGE


def size_for(env_id: str, draws: int) -> int:
    """The bank of a run that draws at most `draws` layouts: that many rounded up to a power of
    two times `compact.CHUNK` (so a cache holds few sizes of one id), at most the id's own
    (`default_size`). Each layout is drawn once before any repeats (`MiniGridEnv`).

    Raises:
        ValueError: If `draws` is below 1.
    """
    if draws < 1:
        raise ValueError(f"A run draws at least one layout, not {draws}.")
    chunks = -(-draws // compact.CHUNK)
    return min(default_size(env_id), compact.CHUNK * 2 ** (chunks - 1).bit_length())


def cache_dir() -> pathlib.Path:
    """Where banks are kept: `$AGENTS_CACHE`, else `$XDG_CACHE_HOME/agents`, else
    `~/.cache/agents`."""
    if os.environ.get("AGENTS_CACHE"):
        return pathlib.Path(os.environ["AGENTS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "agents"


def generate(env_id: str, size: int, seed: int) -> dict[str, np.ndarray]:
    """`size` layouts: minigrid's `reset(seed=seed + k)` for k in range(size), encoded."""
    return building.generate(env_id, size, seed)


def describe(env_id: str, size: int, seed: int) -> str:
    """One line naming the bank of `env_id`, `size` and `seed`: cached (and where), or not and
    how long building it takes here (before training starts, and while it trains), from
    minigrid's rate measured in this process."""
    path = path_of(env_id, size, seed)
    what = f"Layout bank of {env_id}: {size:,} layouts from seed {seed}"
    if path.exists():
        try:
            _read(path, _identity(env_id, size, seed))
            return f"{what}, cached in {path}."
        except ValueError as error:
            what += f", cached in {path} but not usable ({error})"
    else:
        what += ", not cached"
    prefix = _largest_cached(env_id, size, seed)
    if prefix and prefix[0] >= size:
        return f"{what}; its layouts are the first of the bank cached in {prefix[1]}."
    rate = building.measure_rate(env_id)
    ready = prefix[0] if prefix else min(size, compact.CHUNK)
    first = min(size, compact.BASE_SAMPLE) / rate + (0 if prefix else ready / rate)
    how = f"{rate:,.0f} layouts/s measured here in one process"
    if ready >= size:
        return (
            f"{what}: the run builds it first, in about {build_progress.duration(first)} "
            f"({how}), and caches it in {path}."
        )
    cost = build_progress.cost(rate, size - ready, 0, 0, compact.CHUNK)
    start = f"reads {ready:,} from {prefix[1]}" if prefix else f"builds {ready:,}"
    processes = f"{cost.processes} process{'es' if cost.processes > 1 else ''}"
    return (
        f"{what}: the run {start} first, in about {build_progress.duration(first)}, then "
        f"trains while {processes} build the other {size - ready:,} in about "
        f"{build_progress.duration(cost.seconds)} ({how}), and caches it in {path}."
    )


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
    try:
        return importlib.metadata.version("minigrid")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _checksum(bank: dict[str, np.ndarray], identity: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for field in FIELDS:
        digest.update(np.ascontiguousarray(bank[field]).tobytes())
    for key in IDENTITY:
        digest.update(f"{key}={identity[key]};".encode())
    return digest.hexdigest()


def path_of(env_id: str, size: int, seed: int) -> pathlib.Path:
    """The cache file of a bank (the minigrid version and the file's format are part of the
    name, so checkouts of other formats keep files of their own)."""
    name = f"{env_id}-n{size}-s{seed}-minigrid{_minigrid_version()}-f{FORMAT}.npz"
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
    if len(bank["pos"]) != int(identity["size"]):
        raise ValueError(f"holds {len(bank['pos'])} layouts, expected {identity['size']}")
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
    _remove_held(env_id, size, seed)
    return layouts


def _cached(env_id: str, size: int, seed: int) -> list[tuple[int, pathlib.Path]]:
    """The cached banks of `env_id` from `seed` other than one of `size` layouts, as (layouts,
    path); banks below `compact.BASE_SAMPLE` layouts have a base of their own and are left
    out (the others are each the first layouts of every larger one)."""
    name = path_of(env_id, size, seed).name
    pattern = name.replace(f"-n{size}-", "-n*-", 1)
    found = []
    for path in path_of(env_id, size, seed).parent.glob(pattern):
        count = path.name[len(env_id) + 2 :].split("-", 1)[0]
        if (
            count.isdigit()
            and size != int(count) >= compact.BASE_SAMPLE
            and path.name == path_of(env_id, int(count), seed).name
        ):
            found.append((int(count), path))
    return found


def _largest_cached(env_id: str, size: int, seed: int) -> tuple[int, pathlib.Path] | None:
    """The cached bank (`_cached`) that holds the most of the first `size` layouts (the fewest
    layouts when several hold them all), as (layouts, path); None for none."""
    found = _cached(env_id, size, seed)
    if not found:
        return None
    holding = [entry for entry in found if entry[0] >= size]
    return min(holding) if holding else max(found)


def _remove_held(env_id: str, size: int, seed: int) -> None:
    """Delete the cached banks (`_cached`) smaller than the bank of `size` layouts just cached:
    they are its first layouts, and it serves their runs (a run that ended mid-build leaves
    one)."""
    if size < compact.BASE_SAMPLE:
        return
    for count, path in _cached(env_id, size, seed):
        if count < size:
            with contextlib.suppress(OSError):  # Another process removed it first.
                path.unlink()


def open_bank(env_id: str, size: int, seed: int = 0) -> growing.Growth:
    """The bank of `size` layouts of `env_id` from `seed`, ready as a run needs it: read from the
    cache (its own file, or the first layouts of a larger cached bank); else its first layouts
    (those of a smaller cached bank, or one chunk built here with progress lines) now and the
    rest from worker processes while the run trains, the whole bank cached once built. Banks of
    one chunk or less are built whole (`bank`). A damaged cache file is rebuilt, as `bank` does.

    Raises:
        ValueError: As `bank` does.
    """
    path = path_of(env_id, size, seed)
    if size <= compact.CHUNK:
        layouts = bank(env_id, size, seed)
        return growing.Growth(layouts["base"], [growing.chunk_of(layouts, size)], size, None)
    if path.exists():
        try:
            layouts = _read(path, _identity(env_id, size, seed))
            return growing.Growth(layouts["base"], [growing.chunk_of(layouts, size)], size, None)
        except ValueError as error:
            print(f"Layout bank {path} is not usable ({error}); rebuilding it.", file=sys.stderr)
    cached = _largest_cached(env_id, size, seed)
    found = None
    if cached:
        try:
            found = _read(cached[1], _identity(env_id, cached[0], seed))
        except ValueError as error:
            print(f"Layout bank {cached[1]} is not usable ({error}).", file=sys.stderr)
    if found is not None and cached[0] >= size:
        return growing.Growth(found["base"], [growing.chunk_of(found, size)], size, None)
    if found is not None:
        base, ready = found["base"].astype(np.int64), [growing.chunk_of(found, cached[0])]
    else:
        base = compact.base_layout(env_id, compact.BASE_SAMPLE, seed)
        started = time.monotonic()
        print(
            f"Building the first {compact.CHUNK:,} layouts of the layout bank of {env_id} "
            f"({size:,} layouts) from minigrid's generator before training starts.",
            flush=True,
        )
        ready = [compact.encode_chunk(env_id, range(seed, seed + compact.CHUNK), base)]
        took = build_progress.duration(time.monotonic() - started)
        print(f"Layout bank of {env_id}: its first {compact.CHUNK:,} in {took}.", flush=True)
    start = sum(len(chunk["pos"]) for chunk in ready)

    def cache(built: dict[str, np.ndarray]) -> None:
        count = len(built["pos"])
        path = path_of(env_id, count, seed)
        try:
            _write(path, built, _identity(env_id, count, seed))
        except OSError as error:
            print(f"Layout bank {path} cannot be written ({error}).", file=sys.stderr)
            return
        _remove_held(env_id, count, seed)

    growth = growing.Growth(base, ready, size, None)
    return growth._replace(rest=lambda: growing.build_rest(env_id, seed, growth, start, cache))
