"""XLA's persistent compilation cache: a run compiles the update once per machine, not per start.

Compiling the XLA update costs about 2 s of each start on a 2-core CPU. TensorFlow keeps compiled
clusters in the directory named by `--tf_xla_persistent_cache_directory` in `TF_XLA_FLAGS`,
which it reads when it loads, so this is set before TensorFlow is imported.
"""

from __future__ import annotations

import importlib.metadata
import os
import time
import warnings

FLAGS = "TF_XLA_FLAGS"
CACHE_FLAG = "--tf_xla_persistent_cache_directory"
LIMIT_VARIABLE = "AGENTS_XLA_CACHE_MB"
DEFAULT_LIMIT_MB = 1024


def cache_directory() -> str:
    """`$XDG_CACHE_HOME/agents/xla-<TensorFlow version>` (default `~/.cache/...`).

    Per TensorFlow version: compiled code of one version is never offered to another.
    """
    try:
        version = importlib.metadata.version("tensorflow")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "agents", f"xla-{version}")


def enable(environ=os.environ) -> str | None:
    """Add the cache flag to `TF_XLA_FLAGS` unless the user set one; returns the directory.

    `AGENTS_XLA_CACHE=0` turns the cache off. Does nothing once TensorFlow is loaded. The
    cache is first pruned to its size limit (`prune`).
    """
    if environ.get("AGENTS_XLA_CACHE") == "0" or CACHE_FLAG in environ.get(FLAGS, ""):
        return None
    directory = cache_directory()
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None  # E.g. a read-only home: compile every time, as without the cache.
    try:
        limit = limit_bytes(environ)
    except ValueError as error:
        warnings.warn(str(error), stacklevel=2)
        limit = DEFAULT_LIMIT_MB * 2**20
    prune(directory, limit)
    environ[FLAGS] = f"{environ.get(FLAGS, '')} {CACHE_FLAG}={directory}".strip()
    return directory


def limit_bytes(environ=os.environ) -> int:
    """The cache's size limit: `AGENTS_XLA_CACHE_MB` megabytes (default 1024).

    Raises:
        ValueError: The variable is set to something other than a positive number; the message
            is one line naming the value.
    """
    value = environ.get(LIMIT_VARIABLE)
    if value is None:
        return DEFAULT_LIMIT_MB * 2**20
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = float("nan")
    if not 0 < megabytes < float("inf"):
        raise ValueError(
            f"{LIMIT_VARIABLE}={value!r} is not a positive number of megabytes; the XLA compile "
            f"cache keeps its default limit of {DEFAULT_LIMIT_MB} MB"
        )
    return int(megabytes * 2**20)


def prune(directory: str, limit: int) -> int:
    """Deletes the least recently used entries until the cache holds at most 3/4 of `limit`
    bytes, when it holds more than `limit`; returns the bytes freed.

    Every config, shape and network size compiles its own programs (1-6 MB each), so without a
    limit the cache grows by gigabytes over weeks of runs. A deleted entry costs only a compile
    the next time its program is needed; an entry another process is reading stays readable to
    it (POSIX unlink), and one it cannot find is compiled afresh.
    """
    entries = []
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                try:
                    if entry.is_file(follow_symlinks=False):
                        stat = entry.stat(follow_symlinks=False)
                        entries.append(
                            (max(stat.st_atime, stat.st_mtime), stat.st_size, entry.path)
                        )
                except OSError:
                    continue  # Deleted by another process meanwhile.
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return 0
    freed = 0
    for _, size, path in sorted(entries):
        if total - freed <= limit * 3 // 4:
            break
        try:
            os.remove(path)
            freed += size
        except OSError:
            continue
    return freed


def unreadable(error: BaseException, environ=os.environ) -> str | None:
    """A line for an error of TensorFlow that is this cache's (an entry garbled or cut short),
    with the cache moved aside so that the next start compiles afresh; None for another error.

    TensorFlow reads the cache when it first compiles and stops the call on a damaged entry
    ("Can't parse <entry> as binary proto", "Read less bytes than requested"); it reads the
    flag once, at load, so this process cannot go on without the cache.
    """
    flags = environ.get(FLAGS, "")
    if type(error).__name__ not in ("DataLossError", "OutOfRangeError") or CACHE_FLAG not in flags:
        return None
    directory = flags.split(f"{CACHE_FLAG}=", 1)[1].split()[0]
    message = str(error)
    if directory not in message and "Read less bytes than requested" not in message:
        return None
    reason = "an entry is garbled" if directory in message else "an entry is cut short"
    moved = f"{directory}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}"
    try:
        os.rename(directory, moved)
        what = f"moved it to {moved}, so the next start compiles afresh"
    except OSError as failure:
        what = f"could not move it aside ({failure.strerror}): delete it"
    return (
        f"XLA's compile cache {directory} could not be read ({reason}); {what} "
        "(AGENTS_XLA_CACHE=0 turns the cache off)"
    )
