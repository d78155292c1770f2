"""Finding the checkpoint to resume from: from the files, past corrupt ones, never silently none.

`tf.train.CheckpointManager` trusts its index file (`checkpoint`): without it a run would start
again from step 0, and a corrupt latest checkpoint would fail the restore although the one
before is intact. Here the files are the truth; the index is rewritten to match them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

INDEX_FILE = "checkpoint"  # tf.train.CheckpointManager's index of the checkpoints.
CORRUPT_SUFFIX = ".corrupt"  # Added to the files of a checkpoint that could not be read.
_NAME = re.compile(r"^(?P<prefix>.+)-(?P<number>\d+)\.index$")


class CheckpointError(Exception):
    """No checkpoint of a directory can be read, or one cannot be written; one-line message."""


def list_checkpoints(directory: str) -> list[str]:
    """Paths (prefixes) of the checkpoints in `directory` with an index and data, oldest first."""
    if not os.path.isdir(directory):
        return []
    names = set(os.listdir(directory))
    found = []
    for name in names:
        match = _NAME.match(name)
        stem = name[: -len(".index")]
        if match and any(other.startswith(stem + ".data-") for other in names):
            found.append((int(match["number"]), os.path.join(directory, stem)))
    return [path for _, path in sorted(found)]


def restore_latest(
    directory: str,
    restore: Callable[[str], object],
    set_aside: bool = False,
    warn: Callable[[str], None] | None = None,
) -> str | None:
    """Restore the newest readable checkpoint of `directory`; returns its path, None if none.

    The candidates are the checkpoints that the index lists and whose files exist; when the index
    is missing, garbled or lists none of them, every checkpoint whose files exist.
    A checkpoint that fails to read (truncated, garbled) is skipped with a warning naming it;
    with `set_aside` its files get the suffix `.corrupt` (kept, not deleted) and the index is
    rewritten to list the checkpoints up to the restored one, so that a `CheckpointManager`
    keeps rotating them.

    Args:
        directory: The checkpoint directory.
        restore: Restores the checkpoint at a path; raises if it cannot be read. Other errors
            than reading ones (e.g. a ValueError for mismatching shapes) propagate.
        set_aside: Rename unreadable checkpoints and rewrite the index (the run's owner only).
        warn: Receives each warning line (default: printed to stderr).

    Raises:
        CheckpointError: There are checkpoint files but none can be read, or the index names
            checkpoints whose files are all missing.
    """
    import tensorflow as tf  # Its read errors; listing needs no TensorFlow.

    warn = warn or _print_warning
    candidates = list_checkpoints(directory)
    indexed = _indexed(directory)
    recorded = [path for path in candidates if path in indexed]
    if recorded:  # Files the index does not list yet are of a save cut short: not trusted.
        candidates = recorded
    if indexed and not candidates:
        raise CheckpointError(
            f"The index of {directory!r} names {os.path.basename(indexed[-1])}, but no "
            "checkpoint files are there: restore them, or move the directory aside to start over."
        )
    if indexed and indexed[-1] not in candidates:
        warn(f"warning: The index names {indexed[-1]}, whose files are missing.")
    failed = []
    for path in reversed(candidates):
        try:
            restore(path)
        except (tf.errors.OpError, IndexError, OSError, EOFError) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            older = "an older one" if path != candidates[0] else "none older"
            warn(f"warning: Checkpoint {path} cannot be read ({reason}); trying {older}.")
            failed.append(path)
            continue
        if set_aside:
            for bad in failed:
                _set_aside(bad, warn)
            if indexed != candidates[: candidates.index(path) + 1]:
                _write_index(directory, candidates[: candidates.index(path) + 1])
        return path
    if failed:
        names = ", ".join(os.path.basename(path) for path in failed)
        raise CheckpointError(
            f"No checkpoint of {directory!r} can be read ({names}); restore one from a backup, "
            "or move the directory aside to start over."
        )
    return None


def _indexed(directory: str) -> list[str]:
    """The checkpoints the index lists, oldest first; [] when it is missing or garbled."""
    path = os.path.join(directory, INDEX_FILE)
    try:
        with open(path) as handle:
            text = handle.read()
    except OSError:
        return []
    names = re.findall(r'^all_model_checkpoint_paths: "(.*)"$', text, re.MULTILINE)
    latest = re.findall(r'^model_checkpoint_path: "(.*)"$', text, re.MULTILINE)
    names = names or latest
    return [name if os.path.isabs(name) else os.path.join(directory, name) for name in names]


def _write_index(directory: str, paths: list[str]) -> None:
    """Write the index listing `paths` (relative names), atomically.

    Each gets its file's time as its timestamp, later than `last_preserved_timestamp`: without
    them, a `CheckpointManager` would keep these checkpoints forever instead of rotating them.
    """
    names = [os.path.basename(path) for path in paths]
    times = [os.path.getmtime(path + ".index") for path in paths]
    lines = [f'model_checkpoint_path: "{names[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{name}"' for name in names]
    lines += [f"all_model_checkpoint_timestamps: {time!r}" for time in times]
    lines += [f"last_preserved_timestamp: {min(times) - 1.0!r}"]
    temporary = os.path.join(directory, INDEX_FILE + ".tmp")
    with open(temporary, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(temporary, os.path.join(directory, INDEX_FILE))


def _set_aside(path: str, warn: Callable[[str], None]) -> None:
    directory, stem = os.path.split(path)
    for name in os.listdir(directory):
        if name == stem + ".index" or name.startswith(stem + ".data-"):
            source = os.path.join(directory, name)
            os.replace(source, source + CORRUPT_SUFFIX)
    warn(f"warning: Kept the unreadable checkpoint as {path}.*{CORRUPT_SUFFIX}.")


def _print_warning(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
