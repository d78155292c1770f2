"""What a run writes when training ends: the learning curve and the exported policy."""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable

from agents.config.errors import UsageError
from agents.runtime import exit_cleanup, tf_loading
from agents.training import curves
from agents.training.progress import warn

POLICY_DIR = "policy"  # The exported SavedModel, in the run directory.


def has_policy(run_dir: str) -> bool:
    """Whether the run holds a complete exported policy."""
    return os.path.isfile(os.path.join(run_dir, POLICY_DIR, "saved_model.pb"))


def write_results(run, say: Callable[[str], None] = print) -> str | None:
    """Draw the learning curve and export the policy into the run directory; print where.

    The checkpoint is saved before. Nothing to plot yet is a warning; a file that cannot be
    written is returned as one line naming it and the error (the caller exits non-zero).
    Where each went is said with `say`.
    """
    failure = None
    if any(curves.has_events(run.run_dir, phase) for phase in ("train", "eval")):
        failure = _write("Learning curve", lambda: curves.plot_run(run.run_dir), say)
    policy_dir = os.path.join(run.run_dir, POLICY_DIR)
    write_policy = functools.partial(atomic_directory, policy_dir, run.export_policy)
    export = _write("Policy (SavedModel)", write_policy, say)
    return failure or export


def atomic_directory(path: str, export: Callable[[str], object]) -> str:
    """Write a policy to `path` whole or not at all: `export(directory)` writes it beside `path`,
    then it is swapped in (e.g. `Run.export_policy`).

    A failed export (a full disk) leaves the previous `path`, if any, as it was.
    """
    partial, old = f"{path}.partial", f"{path}.old"
    for leftover in (partial, old):
        shutil.rmtree(leftover, ignore_errors=True)
    remove_partial = functools.partial(shutil.rmtree, partial, ignore_errors=True)
    exit_cleanup.register(remove_partial)  # Also when a second stop signal ends the process.
    try:
        with tf_loading.quiet_native_logs():  # Freezing the graph logs from TensorFlow's C++.
            export(partial)
    except BaseException:
        remove_partial()
        raise
    finally:
        exit_cleanup.unregister(remove_partial)
    if os.path.exists(path):
        os.rename(path, old)
    os.rename(partial, path)
    shutil.rmtree(old, ignore_errors=True)
    return path


def _write(what: str, write_file: Callable[[], str], say: Callable[[str], None]) -> str | None:
    """Write one result; a failure to write is returned as a line, nothing to write warned."""
    try:
        path = write_file()
    except UsageError as error:  # E.g. no episode ended yet: nothing to plot.
        warn(f"warning: {what} not written: {error}")
    except Exception as error:
        reason = (str(error).strip().splitlines() or [""])[0]
        return f"{what} not written: {type(error).__name__}: {reason}"
    else:
        say(f"{what}: {path}")
    return None
