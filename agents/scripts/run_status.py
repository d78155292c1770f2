"""RunStatus: what a training run has kept, told in the line that ends it."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil

from agents.tools import mpi
from agents.tools.checkpoints import list_checkpoints


class RunStatus:
    """The run's progress as plain Python values, so that any thread can describe it.

    `train` sets `run` once the session is built, `env_steps` before each step and `saved` after
    the final checkpoint; `describe` is what `RunGuard` prints when it ends the process.

    Args:
        args: The command-line arguments (for the resume command).
        world: The MPI ranks; only rank 0 removes a new run's directory.
        run_dir: The run directory.
        resumed: Whether the run existed before this process.
    """

    def __init__(self, args: argparse.Namespace, world: mpi.World, run_dir: str, resumed: bool):
        self.run = None
        self.env_steps: int | None = None
        self.saved = False
        self._args, self._world, self._run_dir, self._resumed = args, world, run_dir, resumed

    def describe(self, reason: str) -> str:
        """`reason` with where the run stands: its step, what is on disk, how to resume.

        During start-up, a new run's directory is removed (it holds no training yet).
        """
        if self.run is None:
            if self._resumed:
                return f"{reason} during start-up; run {self._run_dir} is unchanged."
            if self._world.is_root:
                shutil.rmtree(self._run_dir, ignore_errors=True)
            return f"{reason} during start-up; removed the new run directory {self._run_dir}."
        where = f"at env step {self.env_steps}"
        if self.saved:
            return f"{reason} {where}; checkpoint saved. Resume with: {self.resume_command()}"
        kept = list_checkpoints(os.path.join(self._run_dir, "checkpoints"))
        if not kept:
            return f"{reason} {where}; no checkpoint was written."
        return (
            f"{reason} {where}; the latest checkpoint is {kept[-1]}. Resume with: "
            f"{self.resume_command()}"
        )

    def resume_command(self) -> str:
        """The shell command (quoted) that resumes this run."""
        args = self._args
        # `<timestamp>[-N]-<config>`: -N numbers runs that started in the same second.
        name = os.path.basename(self._run_dir)
        match = re.match(r"\d{8}T\d{6}(-\d+)?(?=-)", name)
        timestamp = match.group(0) if match else name.split("-")[0]
        command = ["python", "-m", "agents.scripts.train", f"--config={args.config}"]
        command += [f"--logdir={args.logdir}", f"--timestamp={timestamp}"]
        if self._world.size > 1:
            command = ["mpirun", "-n", str(self._world.size), *command]
        return shlex.join(command)
