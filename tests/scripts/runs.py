"""A finished debug run, copies of it to damage, and resuming them: shared by the fault tests."""

import glob
import os
import shutil

from agents.scripts import train
from tests.scripts.capture import run_main

TIMESTAMP = "20000101T000000"  # Of every copy: `--timestamp` resumes it.


def finished_run(logdir, *sets: str) -> str:
    """Train a debug run in `logdir` (with `--set` pairs `sets`) to its end; its directory."""
    argv = ["--config=debug", f"--logdir={logdir}"] + (["--set", *sets] if sets else [])
    code, _, stderr = run_main(train.main, argv)
    assert code == 0, stderr
    (run_dir,) = glob.glob(os.path.join(logdir, "*-debug*"))
    return run_dir


def copy_run(run_dir: str, parent) -> str:
    """A copy of `run_dir` in `parent`, named with `TIMESTAMP`."""
    copy = os.path.join(parent, f"{TIMESTAMP}-debug")
    shutil.copytree(run_dir, copy)
    return copy


def resume(run_dir: str, *argv: str):
    """Resume a copy in this process: (exit status, stdout, stderr)."""
    logdir = os.path.dirname(run_dir)
    argv = ["--config=debug", f"--logdir={logdir}", f"--timestamp={TIMESTAMP}", *argv]
    return run_main(train.main, argv)
