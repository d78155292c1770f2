"""XLA's persistent compilation cache: a run compiles the update once per machine, not per start.

Compiling the XLA update costs seconds of each start on a 2-core CPU. TensorFlow keeps compiled
clusters in the directory named by `--tf_xla_persistent_cache_directory` in `TF_XLA_FLAGS`,
which it reads when it loads, so this is set before TensorFlow is imported.

A cache exists to save time, so it must not cost a run: before it is enabled the folder is
checked (made, written, with room for entries and a file size limit that allows them); a folder
that fails is left off for the run with one warning line. TensorFlow never writes to the cache
itself: it is pointed at a scratch folder of this process (`xla_scratch`), whose new entries
reach the cache when the process ends. A failure TensorFlow meets anyway (the scratch folder
itself failing, an entry garbled) stops the run with one line that says which (a failed write
is never called a garbled read), sets a garbled entry aside alone, and leaves the rest of the
cache as it was.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import re
import resource
import sys
import tempfile
import warnings

from agents.runtime import xla_scratch
from agents.runtime.xla_scratch import ROOM_BYTES, entries, remove

FLAGS = "TF_XLA_FLAGS"
CACHE_FLAG = "--tf_xla_persistent_cache_directory"
LIMIT_VARIABLE = "AGENTS_XLA_CACHE_MB"
DEFAULT_LIMIT_MB = 1024
CHECKED = ".checked"  # Its time: when the entries were last checked for damage.
_FOUND_UNUSABLE: set[str] = set()  # Folders this process found unusable (and warned of).


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
    cache is first pruned to its size limit (`prune`). A folder that cannot hold entries
    (`unusable`) leaves the cache off for this process, with one warning line on stderr.
    """
    if environ.get("AGENTS_XLA_CACHE") == "0" or CACHE_FLAG in environ.get(FLAGS, ""):
        return None
    directory = cache_directory()
    if directory in _FOUND_UNUSABLE:  # Said once per process: the cache stays off.
        return None
    reason = unusable(directory)
    if reason is not None:
        _FOUND_UNUSABLE.add(directory)
        sys.stderr.write(
            f"warning: XLA's compile cache {directory} is not usable ({reason}); this run "
            "compiles without it. Free space or fix the folder's permissions, or set "
            "AGENTS_XLA_CACHE=0 to turn the cache off.\n"
        )
        sys.stderr.flush()
        return None
    damaged = set_aside_damaged(directory)
    if damaged:
        sys.stderr.write(
            f"warning: XLA's compile cache {directory}: set aside {len(damaged)} damaged "
            f"entr{'y' if len(damaged) == 1 else 'ies'} as .unreadable ({', '.join(damaged)}); "
            "they compile afresh.\n"
        )
        sys.stderr.flush()
    try:
        limit = limit_bytes(environ)
    except ValueError as error:
        warnings.warn(str(error), stacklevel=2)
        limit = DEFAULT_LIMIT_MB * 2**20
    prune(directory, limit)
    read_and_written = xla_scratch.open_folder(directory) or directory
    environ[FLAGS] = f"{environ.get(FLAGS, '')} {CACHE_FLAG}={read_and_written}".strip()
    return directory


def unusable(directory: str) -> str | None:
    """Why `directory` cannot hold the cache's entries now, or None: it cannot be made or
    written (e.g. permissions, a read-only file system), the file system has less than
    `ROOM_BYTES` free, or the process may not write files that large (`ulimit -f`)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY and soft < ROOM_BYTES:
        return f"ulimit -f lets this process write files of {soft // 1024} KiB at most"
    try:
        os.makedirs(directory, exist_ok=True)
        stat = os.statvfs(directory)
        if stat.f_bavail * stat.f_frsize < ROOM_BYTES:
            return f"{stat.f_bavail * stat.f_frsize // 2**20} MB free on its file system"
        handle, probe = tempfile.mkstemp(prefix=".probe-", dir=directory)
        try:
            os.write(handle, b"\0" * 4096)
            os.fsync(handle)
        finally:
            os.close(handle)
            os.remove(probe)
    except OSError as error:
        return error.strerror or str(error)
    return None


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


def failure(error: BaseException, environ=os.environ) -> str | None:
    """A line for an error of TensorFlow that is this cache's, or None for another error.

    A failed write (TensorFlow names the entry's temporary file and the system's reason, e.g.
    "File too large", "No space left on device") removes the partial file and leaves the cache
    as it was. A garbled entry ("Can't parse <entry> as binary proto") or one cut short ("Read
    less bytes than requested", unnamed: found by reading the entries' framing) is set aside
    alone as `<entry>.unreadable`, so the next start compiles it afresh.
    """
    flags = environ.get(FLAGS, "")
    if CACHE_FLAG not in flags:
        return None
    directory = flags.split(f"{CACHE_FLAG}=", 1)[1].split()[0]  # The cache, or the scratch.
    cache = xla_scratch.cache_of(directory)
    message = str(error)
    # Any error type: TensorFlow raises a failed write as whatever its file system said
    # (ResourceExhausted for a full disk, OutOfRange for `ulimit -f`, NotFound, ...).
    written = re.search(re.escape(directory) + r"/(\S+\.tmp); ([^\n\[]+)", message)
    if written:
        name, reason = written.group(1), written.group(2).strip()
        remove(os.path.join(directory, name))
        if cache == directory:
            return (
                f"XLA's compile cache {directory} could not be written ({reason}); the cache is "
                "unchanged. Free space there, or set AGENTS_XLA_CACHE=0 to run without it"
            )
        return (
            f"XLA's compile cache could not write a new entry to its scratch folder {directory} "
            f"({reason}); the cache {cache} is unchanged. Free space there (or set TMPDIR to a "
            "folder with room), or set AGENTS_XLA_CACHE=0 to run without it"
        )
    if type(error).__name__ not in ("DataLossError", "OutOfRangeError"):
        return None
    named = re.search(re.escape(directory) + r"/(\S+?) as binary proto", message)
    if named:
        damaged = [os.path.join(directory, named.group(1))]
    elif "Read less bytes than requested" in message:
        damaged = [path for path in entries(directory) if not _whole(path)]
    else:
        return None
    moved = [path for path in damaged if _set_aside(os.path.realpath(path))]
    for path in damaged:  # A scratch folder's link to an entry set aside.
        if os.path.islink(path):
            remove(path)
    if not moved:
        return (
            f"XLA's compile cache {cache} could not be read (an entry is damaged and could "
            "not be found or set aside): delete the folder, or set AGENTS_XLA_CACHE=0"
        )
    names = ", ".join(os.path.basename(path) for path in moved)
    return (
        f"XLA's compile cache {cache} could not be read (garbled: {names}); set it aside "
        "as .unreadable, so the next start compiles it afresh (AGENTS_XLA_CACHE=0 turns the "
        "cache off)"
    )


def set_aside_damaged(directory: str) -> list[str]:
    """Set aside (as `<entry>.unreadable`) the entries written or changed since the last check
    whose framing is not whole (`_whole`), before TensorFlow reads them; returns their names.

    TensorFlow writes an entry whole (a temporary file, renamed), so only a damaged disk or
    another writer garbles one; checking only what changed since `CHECKED` keeps a start from
    reading the whole cache.
    """
    marker = os.path.join(directory, CHECKED)
    try:
        since = os.stat(marker).st_mtime
    except OSError:
        since = 0.0
    damaged = []
    for path in entries(directory):
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if stat.st_mtime < since:
            continue
        whole = _whole(path)
        with contextlib.suppress(OSError):  # Reading is no use: `prune` keeps its order.
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if not whole and _set_aside(path):
            damaged.append(os.path.basename(path))
    with contextlib.suppress(OSError), open(marker, "w"):
        pass
    return damaged


def _whole(path: str) -> bool:
    """Whether the file parses as protocol buffer fields to its very end (its framing only: a
    file cut short, or random bytes, almost never does)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        kind = key & 7
        if key >> 3 == 0 or at < 0:
            return False
        if kind == 0:
            _, at = _varint(data, at)
        elif kind in (1, 5):
            at += 8 if kind == 1 else 4
        elif kind == 2:
            size, at = _varint(data, at)
            at = at + size if at >= 0 else at
        else:
            return False
        if at < 0 or at > len(data):
            return False
    return True


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and the position after it; position -1 where it does not end."""
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at
    return 0, -1


def _set_aside(path: str) -> bool:
    try:
        os.replace(path, f"{path}.unreadable")
        return True
    except OSError:
        return False
