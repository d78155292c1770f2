"""A process's scratch folder for XLA's compile cache: TensorFlow reads and writes it in the
cache's place, and its new entries reach the cache when the run ends.

TensorFlow stops a call whose cache entry it cannot write, and cannot drop the cache once
loaded. So it is given a folder of this process under `TMPDIR` holding a link to each entry of
the cache (reads hit as before) and room for its new entries, which `publish` copies into the
cache, each whole: a cache that stops taking entries during a run costs one warning line and
those entries, never the run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time

from agents.runtime import exit_cleanup

PREFIX = "agents-xla-"  # Then the process id: `agents-xla-<pid>-<random>`.
STALE_SECONDS = 3600  # A dead process's scratch folder older than this is cleared at a start.
ROOM_BYTES = 64 << 20  # Free space and file size a start needs for its entries (1-6 MB each).
_state: dict = {}  # This process's: folder (the scratch), cache, refused (publish failed).


def open_folder(directory: str) -> str | None:
    """This process's scratch folder for the cache `directory`: a link to each of its entries,
    and room for TensorFlow's new entries, which `publish` copies into the cache (at the latest
    when the process exits).

    Scratch folders of dead processes older than `STALE_SECONDS` are published and removed
    first (a killed run's entries still reach the cache). Returns None where the temporary
    folder has no room for entries (TensorFlow then uses the cache directly).
    """
    root, folder = tempfile.gettempdir(), None
    _clear_stale(root, directory)
    try:
        stat = os.statvfs(root)
        if stat.f_bavail * stat.f_frsize < ROOM_BYTES:
            return None
        folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root)
        for path in entries(directory):
            os.symlink(path, os.path.join(folder, os.path.basename(path)))
    except OSError:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        return None
    if not _state:
        exit_cleanup.register(close)
    _state.update(folder=folder, cache=directory, refused=False)
    return folder


def owner(folder: str) -> int | None:
    """The process id in a scratch folder's name, or None where `folder` is not one."""
    name = os.path.basename(os.path.normpath(folder))
    pid = name[len(PREFIX) :].split("-", 1)[0] if name.startswith(PREFIX) else ""
    return int(pid) if pid.isdigit() else None


def cache_of(folder: str) -> str:
    """The cache that `folder` stands in for: its cache if it is this process's scratch
    folder, else `folder` itself (TensorFlow was pointed at the cache)."""
    return _state["cache"] if _state.get("folder") == folder else folder


def publish() -> int:
    """Copies the entries TensorFlow wrote to this process's scratch folder into the cache, each
    whole (a temporary file, renamed), and links them there; returns how many it copied.

    A cache that cannot take them (a full disk, a folder deleted or made read-only, `ulimit -f`)
    keeps what it had: one warning line on stderr (once per process), the entries stay in the
    scratch folder and go when it does, and nothing else changes.
    """
    folder, directory = _state.get("folder"), _state.get("cache")
    if folder is None or _state.get("refused"):
        return 0
    copied, error = _copy_new_entries(folder, directory)
    if error is not None:
        _state["refused"] = True
        sys.stderr.write(
            f"warning: XLA's compile cache {directory} could not take this run's new entries "
            f"({error.strerror or error}); the run is unaffected and compiles them again next "
            "time. Free space or fix the folder, or set AGENTS_XLA_CACHE=0.\n"
        )
        sys.stderr.flush()
    return copied


def close() -> None:
    """Publishes this process's new entries (`publish`) and removes its scratch folder."""
    publish()
    folder = _state.pop("folder", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def entries(directory: str) -> list[str]:
    """The paths of the cache entries (`*.pb`) in `directory`; none where it cannot be read."""
    try:
        return [entry.path for entry in os.scandir(directory) if entry.name.endswith(".pb")]
    except OSError:
        return []


def remove(path: str) -> None:
    """Removes the file `path` if it can; a file already gone is no error."""
    with contextlib.suppress(OSError):
        os.remove(path)


def _copy_new_entries(folder: str, directory: str) -> tuple[int, OSError | None]:
    """Copies the entries of `folder` that are files (not links) into `directory`, each
    replaced by a link to its copy; returns how many, and the error that stopped it or None."""
    copied = 0
    for path in entries(folder):
        if os.path.islink(path):
            continue  # The cache's own entry, or one published already.
        target = os.path.join(directory, os.path.basename(path))
        partial = f"{target}.{os.getpid()}.tmp"
        try:
            os.makedirs(directory, exist_ok=True)
            shutil.copyfile(path, partial)
            os.replace(partial, target)
        except OSError as error:
            remove(partial)
            return copied, error
        copied += 1
        with contextlib.suppress(OSError):
            os.remove(path)
            os.symlink(target, path)
    return copied, None


def _clear_stale(root: str, directory: str) -> None:
    """Publishes into `directory` and removes the scratch folders under `root` of processes
    that are gone, unchanged for `STALE_SECONDS` (a process in another PID namespace may look
    gone: its folder is left while it may be in use)."""
    try:
        scan = [entry for entry in os.scandir(root) if entry.name.startswith(PREFIX)]
    except OSError:
        return
    for entry in scan:
        pid = owner(entry.name)
        try:
            old = time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
            if not (old and entry.is_dir(follow_symlinks=False) and pid is not None):
                continue
            os.kill(pid, 0)
            continue  # Alive.
        except ProcessLookupError:
            pass
        except OSError:
            continue  # Gone meanwhile, or alive under another user.
        _copy_new_entries(entry.path, directory)  # What fails is only not kept.
        shutil.rmtree(entry.path, ignore_errors=True)
