"""RunStatus: what a training run has kept, told in the line that ends it."""

from __future__ import annotations

import os
import shlex
import shutil

from agents.tools.checkpoints import list_checkpoints


class RunStatus:
    """A Trainer's progress told as plain text, so that any thread can describe it.

    `describe` is what the command line prints when a run stops early, and what `RunGuard`
    prints when it ends the process.

    Args:
        trainer: The run's `agents.training.Trainer` (its `started`, `env_steps` and `saved`).
        config: `--config` as given (for the resume command).
        logdir: `--logdir` as given.
    """

    def __init__(self, trainer, config: str, logdir: str) -> None:
        self._trainer, self._config, self._logdir = trainer, config, logdir

    def describe(self, reason: str) -> str:
        """`reason` with where the run stands: its step, what is on disk, how to resume.

        During start-up, and in a new run's first training call, the run's directory is removed
        (it holds no training yet).
        """
        trainer, run_dir = self._trainer, self._trainer.run_dir
        kept = list_checkpoints(os.path.join(run_dir, "checkpoints"))
        untrained = not trainer.resumed and not trainer.env_steps and not kept
        if not trainer.started or untrained:
            if trainer.resumed:
                return f"{reason} during start-up; run {run_dir} is unchanged."
            if trainer.world.is_root:
                shutil.rmtree(run_dir, ignore_errors=True)
            when = " during start-up" if not trainer.started else ""
            return f"{reason}{when}; removed the new run directory {run_dir} (nothing trained)."
        where = f"at env step {trainer.env_steps}"
        if trainer.saved:
            return f"{reason} {where}; checkpoint saved. Resume with: {self.resume_command()}"
        if not kept:
            return f"{reason} {where}; no checkpoint was written."
        return (
            f"{reason} {where}; the latest checkpoint is {kept[-1]}. Resume with: "
            f"{self.resume_command()}"
        )

    def resume_command(self) -> str:
        """The shell command (quoted) that resumes this run."""
        # The directory's whole name: unambiguous where runs started in the same second.
        timestamp = os.path.basename(os.path.normpath(self._trainer.run_dir))
        command = ["python", "-m", "agents.scripts.train", f"--config={self._config}"]
        command += [f"--logdir={self._logdir}", f"--timestamp={timestamp}"]
        size = self._trainer.world.size
        if size > 1:
            command = ["mpirun", "-n", str(size), *command]
        return shlex.join(command)
