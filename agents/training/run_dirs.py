"""Run directories: `<logdir>/<timestamp>[-N]-<config>`, created, found and named here only."""

from __future__ import annotations

import datetime
import os
import re

from agents.config.errors import UsageError
from agents.config.files import CONFIG_FILE

# `<timestamp>[-N]-<config>`: -N numbers the runs of one config started in the same second.
_NAME = re.compile(r"(\d{8}T\d{6}(?:-\d+)?)-(.+)$")
_TIMESTAMP = re.compile(r"\d{8}T\d{6}(?:-\d+)?")


def is_timestamp(text: str) -> bool:
    """Whether `text` is a run's timestamp (`20261125T070000`, or `...-2` for a second run)."""
    return _TIMESTAMP.fullmatch(text) is not None


def split_name(run_dir: str) -> tuple[str, str] | None:
    """`(timestamp, config name)` of a run directory's name, or None for another name."""
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
            f"{run_dir!r} is no run directory (<timestamp>-<config> holding a {CONFIG_FILE})."
        )
    return path


def timestamped_run(logdir: str, config_name: str, timestamp: str) -> str:
    """The run `<logdir>/<timestamp>-<config>` that `--timestamp` names.

    Raises:
        UsageError: No such run; the message lists the runs in `logdir`.
    """
    path = os.path.join(logdir, f"{timestamp}-{config_name}")
    if not os.path.isdir(path):
        runs = sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []
        raise UsageError(
            f"No run {path!r} to resume for --timestamp {timestamp}; runs in {logdir!r}: "
            f"{', '.join(runs) or 'none'}."
        )
    return path


def new_run(logdir: str, config_name: str) -> str:
    """Create a new, empty run directory for `config_name` in `logdir`; returns its path.

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
