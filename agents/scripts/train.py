"""Train a PPO agent: `python -m agents.scripts.train --config=pendulum [--set key=value ...]`.

`mpirun -n K python -m agents.scripts.train ...` trains data-parallel on K ranks (see docs/mpi.md).
A run that stops early says in its last line what it kept and the command that resumes it.

TensorFlow is imported inside `train()`, not at module level: environment processes are
spawned, and a spawned child re-imports the main module.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys

from agents.config import named
from agents.config.errors import UsageError
from agents.config.values import parse_overrides
from agents.multirun import seeds
from agents.scripts import cli, console, dry_run, shutdown
from agents.tools import mpi
from agents.tools.checkpoints import list_checkpoints
from agents.training import Trainer, TrainingError
from agents.training.callbacks import Callback
from agents.training.progress import write
from agents.training.run_guard import process_shell
from agents.training.tracking import WandbTracker


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return cli.training_parser(__doc__.splitlines()[0]).parse_args(argv)


def train(args: argparse.Namespace, world: mpi.World | None = None) -> int:
    """Train as the command line asks; returns the exit status (0, or 128 + a stop signal).

    What a process adds to the library's `Trainer`: the arguments, signal handling and the
    hung-environment watchdog (`RunGuard`), the progress bar, and the line that says how a run
    stopped and how to resume it. Under MPI every rank calls this.

    Raises:
        UsageError: A bad argument, config or run (one line naming it).
        TrainingError: An environment failed, training met a non-finite value, or no
            checkpoint could be read or written.
    """
    world = world or mpi.World()
    overrides = parse_overrides(args.set)
    if args.env_processes:
        overrides["env_processes"] = True
    if args.dry_run:
        if world.is_root:
            print("\n".join(dry_run.describe(args, overrides, world.size)))
        return 0
    if args.seeds:
        return _train_seeds(args, overrides, world)
    trainer = Trainer(
        args.config,
        args.logdir,
        seed=args.seed,
        resume=args.timestamp,
        overrides=overrides,
        world=world,
        name=args.name,
    )

    def describe(reason: str) -> str:
        return describe_stop(trainer, reason, args.config, args.logdir)

    resume = resume_command(trainer, args.config, args.logdir)
    try:
        shell = process_shell(trainer.budget, root=world.is_root, describe=describe)
        with shell as listeners:
            hint = [_ResumeHint(resume)] if world.size > 1 else []
            result = trainer.train(listeners + hint + _tracking(args), args.verbose)
    except TrainingError as error:
        raise TrainingError(error.with_next_step(resume), error.next_step) from error
    finally:
        trainer.close()
    if result.stopped:
        if world.is_root:
            print(describe("Interrupted"), file=sys.stderr, flush=True)
        return 128 + result.signum
    return 0


class _ResumeHint(Callback):
    """Under MPI, rank 0 says at the start how to resume: a rank killed (SIGKILL, the OOM
    killer) makes the launcher kill every rank at once, so no rank can say it at the end."""

    def __init__(self, resume: str) -> None:
        self._resume = resume

    def on_start(self, run) -> None:
        write(
            f"{run.ranks} ranks: should one die, the launcher ends them all; resume from the "
            f"latest checkpoint with: {self._resume}"
        )


def _tracking(args: argparse.Namespace) -> list:
    """The W&B callback `--track` asks for (on rank 0 only: the others call no callback)."""
    if not args.track:
        return []
    return [WandbTracker(**_wandb_options(args))]


def _wandb_options(args: argparse.Namespace) -> dict:
    return dict(project=args.wandb_project, entity=args.wandb_entity, group=args.wandb_group)


def _train_seeds(args: argparse.Namespace, overrides: dict, world: mpi.World) -> int:
    """`--seeds`: one run per seed, each in its own process; 1 if any seed failed, 128 + the
    signal if a signal stopped them."""
    clash = [
        flag for flag, value in (("--seed", args.seed), ("--timestamp", args.timestamp)) if value
    ]
    if clash or world.size > 1:
        what = " and ".join(clash) if clash else "mpirun"
        raise UsageError(f"--seeds starts new runs of its own: drop {what}.")
    tracking = None
    if args.track:
        tracking = _wandb_options(args)
        tracking["group"] = tracking["group"] or args.name or named.resolve(args.config).name
    outcomes = seeds.train_seeds(
        args.config, args.seeds, args.logdir, overrides, args.name, args.parallel, tracking=tracking
    )
    print("\n".join(seeds.summary_lines(outcomes)), flush=True)
    if any(outcome.error is not None and outcome.signum is None for outcome in outcomes):
        return 1
    stopped = [o.result.signum for o in outcomes if o.result is not None and o.result.stopped]
    stopped += [o.signum for o in outcomes if o.signum is not None]
    return 128 + stopped[0] if stopped else 0  # As a single run stopped by a signal.


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tasks = mpi.unconnected_tasks()
    if tasks:  # Each task would train a run of its own: refuse before anything is written.
        print(
            f"error: srun started {tasks} tasks ({mpi.STEP_TASKS_VARIABLE}={tasks}) that no MPI "
            f"launcher connects (none of {', '.join(mpi.LAUNCHER_VARIABLES)} is set), so each "
            f"would train a run of its own. Launch with srun --mpi=pmi2 (or pmix, as your "
            f"cluster's MPI offers) or mpirun -n {tasks}, or start one task.",
            file=sys.stderr,
        )
        return 2
    world = mpi.init_world()  # A world of one without an MPI launcher; MPI is then not imported.
    try:
        with console.surviving_console():  # A closed stdout pipe does not end training.
            return train(args, world)
    except UsageError as error:  # Under MPI, raised on every rank alike (see `World.agree`).
        if world.is_root:
            print(f"error: {error}", file=sys.stderr)
        return 2
    except TrainingError as error:
        if world.size > 1:  # Only this rank may know: end the job.
            world.abort(error)
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 1
    except BaseException as error:
        if world.size == 1:
            raise
        world.abort(error)  # Prints "rank R failed: ..." and ends every rank.


def describe_stop(trainer, reason: str, config: str, logdir: str) -> str:
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


if __name__ == "__main__":
    shutdown.exit_quickly(main())
