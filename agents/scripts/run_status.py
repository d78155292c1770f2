"""What a training run has kept, told in the line that ends it, and the command that resumes it."""

from __future__ import annotations

import os
import shlex
import shutil

from agents.tools.checkpoints import list_checkpoints


def describe(trainer, reason: str, config: str, logdir: str) -> str:
    """`reason` with where the run stands: its step, what is on disk, how to resume; what the
    command line prints when a run stops early, and what `RunGuard` prints when it ends the
    process (plain text from the Trainer's `started`, `env_steps` and `saved`: any thread may
    call it).

    During start-up, and in a new run's first training call, the run's directory is removed (it
    holds no training yet).

    Args:
        trainer: The run's `agents.training.Trainer`.
        reason: What stopped it, e.g. "Interrupted".
        config: `--config` as given (for the resume command).
        logdir: `--logdir` as given.
    """
    run_dir = trainer.run_dir
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
    resume = resume_command(trainer, config, logdir)
    if trainer.saved:
        return f"{reason} {where}; checkpoint saved. Resume with: {resume}"
    if not kept:
        return f"{reason} {where}; no checkpoint was written."
    return f"{reason} {where}; the latest checkpoint is {kept[-1]}. Resume with: {resume}"


def resume_command(trainer, config: str, logdir: str) -> str:
    """The shell command (quoted) that resumes the Trainer's run, started with `--config`
    `config` and `--logdir` `logdir`."""
    # The directory's whole name: unambiguous where runs started in the same second.
    timestamp = os.path.basename(os.path.normpath(trainer.run_dir))
    command = ["python", "-m", "agents.scripts.train", f"--config={config}"]
    command += [f"--logdir={logdir}", f"--timestamp={timestamp}"]
    size = trainer.world.size
    if size > 1:
        command = ["mpirun", "-n", str(size), *command]
    return shlex.join(command)
