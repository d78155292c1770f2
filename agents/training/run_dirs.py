"""Run directories: `<logdir>/<timestamp>[-N]-<label>`, created, found and named here only.

The label tells runs apart: `<config>[-<env>][-<name>]-s<seed>`, the env where it is not the
named config's own, a name the user chose, and the seed (`20261126T040000-pendulum-s0`,
`...-pendulum-MountainCarContinuous-v0-lr3e-4-s1`). Runs made before labels are `<config>` alone.

A run directory's lock (`acquire`) lets one process at a time own the run: an OS lock, which a
killed owner frees.
"""

from __future__ import annotations

import datetime
import fcntl
import os
import re
from typing import BinaryIO

from agents.config.errors import UsageError
from agents.config.files import CONFIG_FILE

# `<timestamp>[-N]-<label>`: -N numbers the runs of one label started in the same second.
_NAME = re.compile(r"(\d{8}T\d{6}(?:-\d+)?)-(.+)$")
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=+-]{0,63}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]")


def label(config_name: str, seed: int, env: str | None = None, name: str | None = None) -> str:
    """`<config>[-<env>][-<name>]-s<seed>`, the env id's `/` and `:` made `_`.

    Raises:
        UsageError: `name` is no run name (see `check_name`).
    """
    parts = [config_name]
    if env:
        parts.append(_UNSAFE.sub("_", env))
    if name is not None:
        parts.append(check_name(name))
    return "-".join([*parts, f"s{seed}"])


def check_name(name: str) -> str:
    """`name` if it may label a run directory, else a UsageError naming it."""
    if not isinstance(name, str) or not _RUN_NAME.fullmatch(name):
        raise UsageError(
            f"Bad run name {name!r}: 1-64 letters, digits and . _ = + -, starting with a letter "
            "or digit (e.g. lr3e-4)."
        )
    return name


def split_name(run_dir: str) -> tuple[str, str] | None:
    """`(timestamp, label)` of a run directory's name, or None for another name."""
    match = _NAME.match(os.path.basename(os.path.normpath(run_dir)))
    return (match.group(1), match.group(2)) if match else None


def existing_run(run_dir: str) -> str:
    """`run_dir`, normalized, once it is known to hold a run (a config.yaml).

    Raises:
        UsageError: It is no run directory.
    """
    path = os.path.normpath(run_dir)
    if split_name(path) is None or not os.path.isfile(os.path.join(path, CONFIG_FILE)):
        raise UsageError(
            f"{run_dir!r} is no run directory (<timestamp>-<label> holding a {CONFIG_FILE})."
        )
    return path


def timestamped_run(logdir: str, config_name: str, timestamp: str) -> str:
    """The run of `config_name` in `logdir` that `--timestamp` names: by its timestamp, or by
    its directory's whole name (where runs of one config started in the same second).

    Raises:
        UsageError: No such run, or several; the message lists the runs in `logdir`.
    """
    runs = sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []
    if split_name(timestamp) is not None and timestamp in runs:
        return os.path.join(logdir, timestamp)
    found = [
        run
        for run in runs
        if (parts := split_name(run)) is not None
        and parts[0] == timestamp
        and (parts[1] == config_name or parts[1].startswith(f"{config_name}-"))
    ]
    if len(found) == 1:
        return os.path.join(logdir, found[0])
    if found:
        raise UsageError(
            f"--timestamp {timestamp} names {len(found)} runs of {config_name} in {logdir!r}: "
            f"{', '.join(found)}; give one's directory name (--timestamp={found[0]})."
        )
    raise UsageError(
        f"No run of {config_name} with timestamp {timestamp} in {logdir!r} to resume; runs "
        f"there: {', '.join(runs) or 'none'}."
    )


def new_run(logdir: str, config_name: str) -> str:
    """Create a new, empty run directory labelled `config_name` (see `label`) in `logdir`;
    returns its path.

    Raises:
        UsageError: The logdir is not writable.
    """
    stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
    try:
        os.makedirs(logdir, exist_ok=True)
        path = _new_directory(logdir, stamp, config_name)
        probe = os.path.join(path, ".write-test")
        with open(probe, "w") as handle:
            handle.write("ok")
        os.remove(probe)
    except OSError as error:
        raise UsageError(f"Cannot write to logdir {logdir!r}: {error.strerror}.") from None
    return path


def _new_directory(logdir: str, stamp: str, config_name: str) -> str:
    """Create `<stamp>-<config>`, or `<stamp>-2-<config>`, ... when runs started that second.

    `mkdir` either creates a directory or fails because it exists, so concurrent starts (several
    seeds launched at once, several ranks' logdirs on one disk) each get their own.
    """
    for number in range(1, 10_000):
        suffix = "" if number == 1 else f"-{number}"
        path = os.path.join(logdir, f"{stamp}{suffix}-{config_name}")
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path
    raise OSError(17, f"too many runs of {config_name!r} started at {stamp}")


LOCK_FILE = "run.lock"  # In the run directory; holds the owner's process id.


def acquire(run_dir: str) -> BinaryIO:
    """An exclusive `flock` on `<run_dir>/run.lock`, held until the returned file is closed or
    the process ends.

    The kernel releases the lock when its owner dies, even by SIGKILL, so a stale file never
    blocks a resume. Env child processes are spawned, not forked, and do not inherit it.

    Args:
        run_dir: The run directory (existing).

    Returns:
        The lock file, open: closing it releases the lock (the file stays; its content, the
        owner's process id, is only a hint).

    Raises:
        UsageError: Another process holds the lock; the message names its process id.
    """
    path = os.path.join(run_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise UsageError(f"Cannot open the run's lock {path!r}: {error.strerror}.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        owner = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise UsageError(
            f"Run {run_dir!r} is in use by {_describe_owner(owner, path)}; wait for it to end "
            "or stop it, then resume."
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return os.fdopen(fd, "rb", buffering=0)  # Closing the only descriptor frees the flock.


def _describe_owner(recorded: str, path: str) -> str:
    """Who holds the lock: the process the file names if it runs, else another one.

    A process that locked the file without writing its id (not a trainer) leaves the previous
    trainer's id there, which may have ended long ago.
    """
    if recorded.isdigit():
        try:
            os.kill(int(recorded), 0)
        except ProcessLookupError:
            return (
                f"another process (it holds {LOCK_FILE}, which names process {recorded}, no "
                f"longer running; `fuser {path}` shows the holder)"
            )
        except PermissionError:  # Runs, under another user.
            pass
        return f"process {recorded} (it holds {LOCK_FILE})"
    return f"another process (it holds {LOCK_FILE}; `fuser {path}` shows which)"
