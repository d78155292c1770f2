"""Train a PPO agent: `python -m agents.scripts.train --config=pendulum [--set key=value ...]`.

`mpirun -n K python -m agents.scripts.train ...` trains data-parallel on K ranks (see docs/mpi.md).

TensorFlow is imported inside `train()`, not at module level: environment processes are
spawned, and a spawned child re-imports the main module.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import shutil
import sys

from agents.scripts import cli, console, results, resume, shutdown, utility
from agents.scripts.metrics_log import MetricsLog
from agents.scripts.progress import TrainingProgress, write
from agents.scripts.run_guard import RunGuard
from agents.scripts.run_lock import RunLock
from agents.scripts.run_status import RunStatus
from agents.scripts.utility import UsageError
from agents.tools import mpi


class TrainingError(Exception):
    """An environment failed or training met a non-finite value; the message says which, where.

    Printed without a Python traceback (the message holds the environment's), exit status 1.
    """


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return cli.training_parser(__doc__.splitlines()[0]).parse_args(argv)


def setup_config(args: argparse.Namespace, world_size: int = 1):
    """Returns (config, run_dir, resumed, seed) after validating the arguments and the config.

    Plain Python: a bad value is reported before TensorFlow is imported. A new run's directory is
    created here (empty); `train` writes the config once the session is built, so that a failed
    start never overwrites a resumed run's config. `world_size` is the number of MPI ranks; a run
    resumes only with the number it was trained with. The seed is `--seed`, else the one that a
    resumed run's or the `--config` file's config.yaml records, else 0.
    """
    base = utility.load_named_config(args.config)
    overrides = list(args.set) + (["env_processes=True"] if args.env_processes else [])
    config = utility.apply_overrides(base, overrides)
    name = utility.config_name(args.config)
    if not args.timestamp:  # A resumed run's config is the saved one, checked below.
        utility.check_config(config)
    run_dir, resumed = utility.run_directory(args.logdir, name, args.timestamp)
    if resumed:
        # Keys the run's version did not have take today's defaults of its config.
        saved = utility.load_config(run_dir, name, defaults=base)
        trained = utility.trained_world_size(run_dir)
        if trained != world_size:  # Env steps and the learning-rate schedule count per rank.
            raise UsageError(
                f"Run {run_dir!r} was trained with {trained} MPI ranks; resume it with as many "
                f"(mpirun -n {trained}), not {world_size}."
            )
        config = utility.apply_overrides(dict(saved), overrides)
        utility.check_config(config)
        resume.check_resumable(run_dir, saved, config)
    return config, run_dir, resumed, resume.seed_of(args, run_dir if resumed else None)


@dataclasses.dataclass
class Outcome:
    """Where a run went, filled in by `train` as it goes (for the Python API).

    Attributes:
        run_dir: The run directory (None before it is chosen, or once a start-up interrupted
            before any training removed it).
        env_steps: The training env steps at the end (None if training never started).
    """

    run_dir: str | None = None
    env_steps: int | None = None


def train(
    args: argparse.Namespace,
    world: mpi.World | None = None,
    outcome: Outcome | None = None,
    host: bool = False,
) -> int:
    """Build everything, run the train/eval loop, and return the exit status.

    Under MPI every rank calls this: rank 0 chooses the run directory (and locks it) and shares
    the config, writes the files and prints; all ranks train in lockstep and stop together.

    Args:
        args: The parsed command line.
        world: The MPI ranks (default: one process).
        outcome: Filled in with the run directory and the env steps at the end.
        host: The process is the caller's (e.g. a notebook): a second Ctrl-C never ends it.

    Raises:
        TrainingError: An environment failed, training met a non-finite value, or no checkpoint
            could be read or written.
    """
    world = world or mpi.World()
    outcome = outcome or Outcome()
    config, run_dir, resumed, seed, lock = _shared_setup(args, world)
    outcome.run_dir = run_dir
    status = RunStatus(args, world, run_dir, resumed)
    progress = TrainingProgress(config["train_steps"], enabled=world.is_root)
    guarded = RunGuard(world.is_root, status.describe, host=host)
    with lock or contextlib.nullcontext(), guarded as guard, progress:
        try:
            run = _start(config, run_dir, resumed, args, world, seed)
        except Exception:
            if guard.signum is None or world.size > 1:
                raise
            # A signal to the whole process group killed the env processes being started.
            print(status.describe("Interrupted"), file=sys.stderr, flush=True)
            outcome.run_dir = run_dir if resumed else None
            return 128 + guard.signum
        progress.restart_at(run.env_steps)
        progress.stage("compiling")
        signum = _agreed_signal(world, guard.signum)
        if signum is not None:  # Ctrl-C during start-up: nothing to save.
            run.close()
            if world.is_root:
                print(status.describe("Interrupted"), file=sys.stderr, flush=True)
            outcome.run_dir = run_dir if resumed else None
            return 128 + signum

        if resumed and run.env_steps >= config["train_steps"]:
            if world.is_root and not results.has_policy(run_dir):
                return _write_missing_results(run, status)  # Its export had failed.
            run.close()
            raise UsageError(
                f"Run {run_dir!r} is finished: it trained {run.env_steps} env steps of "
                f"train_steps={config['train_steps']}. Continue it with --set train_steps=N "
                f"(N > {run.env_steps})."
            )
        status.run = run
        run.guard_saves(guard.saving)
        guard.watch(run.batch_envs, run.config.env_timeout)
        try:
            if world.is_root:
                _record_config(args, config, run_dir, resumed, world, seed)
                action = "Resuming" if resumed else "Starting"
                print(f"{action} run {run_dir} at env step {run.env_steps}.", flush=True)
            signum, write_error = _run_loop(run, world, guard, status, progress)
            _save(run)
            status.saved = True
            if write_error is not None:  # The state is sound: saved, then stopped.
                raise TrainingError(status.describe(write_error))
            if world.is_root:
                failure = results.write_results(run)
                if failure is not None:  # Training and its checkpoint are kept.
                    raise TrainingError(
                        f"{failure}; the checkpoint is saved. Write the results again with: "
                        f"{status.resume_command()}"
                    )
        finally:
            outcome.env_steps = run.env_steps
            run.close()
        return _finish(world, run, status, _agreed_signal(world, signum))


def _record_config(args, config, run_dir: str, resumed: bool, world: mpi.World, seed: int):
    """Write config.yaml and the hparams; a new run that cannot is removed again (full disk)."""
    from agents.scripts import summaries  # TensorFlow is imported by now.

    try:
        utility.save_config(config, run_dir, utility.config_name(args.config), world.size, seed)
        summaries.write_hparams(run_dir, dict(config, seed=seed))
    except OSError as error:
        where = error.filename or run_dir
        kept = "the run is unchanged" if resumed else "removed the new run directory"
        if not resumed:
            shutil.rmtree(run_dir, ignore_errors=True)
        raise TrainingError(f"Cannot write {where!r} ({error.strerror}); {kept}.") from None


def _write_missing_results(run, status: RunStatus) -> int:
    """A finished run whose policy was never written: write its results, then exit."""
    try:
        failure = results.write_results(run)
    finally:
        run.close()
    if failure is not None:
        raise TrainingError(f"{failure}; the checkpoint is saved.")
    print(f"Run {run.run_dir} was finished at env step {run.env_steps}; wrote its results.")
    return 0


def _start(
    config, run_dir: str, resumed: bool, args: argparse.Namespace, world: mpi.World, seed: int
):
    """The Session; a new run's directory is removed again when building it fails."""
    console.import_tensorflow(getattr(args, "verbose", False), config["agent"])
    from agents.scripts import session
    from agents.tools.batch_env import BatchEnvError
    from agents.tools.checkpoints import CheckpointError

    mpi.share_cores(world)
    try:
        return session.Session(config, run_dir, seed, world)
    except BaseException as error:
        if world.is_root and not resumed:  # Leave no empty run directory that looks like a run.
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(error, (BatchEnvError, CheckpointError)):  # E.g. the first reset.
            raise TrainingError(str(error)) from error
        raise


def _run_loop(
    run, world: mpi.World, guard: RunGuard, status: RunStatus, progress: TrainingProgress
) -> tuple[int | None, str | None]:
    """Train until the end, a stop signal or a failed write of the metrics file, printing
    reports; returns the signal and the write failure (a line naming the file), if any.

    A failing environment or a non-finite value ends training before the loop saves another
    checkpoint, so the latest checkpoint on disk is the last good one.
    """
    from agents.tools.batch_env import BatchEnvError
    from agents.tools.checkpoints import CheckpointError

    def should_stop() -> bool:  # Called between the loop's calls.
        status.env_steps = run.env_steps  # What a watchdog tells if the next step hangs.
        progress.advance(status.env_steps)
        return guard.signum is not None

    try:
        metrics = MetricsLog(run.run_dir if world.is_root else None)
    except OSError as error:
        raise TrainingError(f"Cannot open {error.filename!r}: {error.strerror}.") from None
    if metrics.repaired:
        print(
            f"warning: removed a partial last line ({metrics.repaired} bytes) of {metrics.path}",
            file=sys.stderr,
            flush=True,
        )
    with metrics:
        try:
            for report in run.loop(should_stop=should_stop):
                if world.is_root:
                    write(_format(report))
                    progress.update(report)
                    try:
                        metrics.append(report)
                    except OSError as error:
                        failure = f"Cannot write {metrics.path!r} ({error.strerror}); stopped"
                        if world.size > 1:  # The other ranks would wait for this one.
                            message = f"{failure} at env step {run.env_steps}."
                            raise TrainingError(message) from None
                        return guard.signum, failure
        except (BatchEnvError, FloatingPointError, CheckpointError) as error:
            raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error
    return guard.signum, None


def _save(run) -> None:
    from agents.tools.checkpoints import CheckpointError

    try:
        run.save()
    except CheckpointError as error:
        raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error


def _shared_setup(args: argparse.Namespace, world: mpi.World):
    """`setup_config` on rank 0 only (one run directory), its result or usage error on all ranks.

    Returns (config, run_dir, resumed, seed, lock): rank 0 holds the run's lock, other ranks None.
    """
    result, error, lock = None, None, None
    if world.is_root:
        try:
            result = setup_config(args, world.size)
            lock = RunLock(result[1])
        except UsageError as exc:
            error = exc
    world.agree(error)
    return (*world.bcast(result), lock)


def _agreed_signal(world: mpi.World, signum: int | None) -> int | None:
    """The signal that stopped any rank (ranks stop together, but not all of them got it)."""
    signums = [s for s in world.allgather(signum) if s is not None]
    return signums[0] if signums else None


def _finish(world: mpi.World, run, status: RunStatus, signum: int | None) -> int:
    """Print how the run ended (rank 0) and return the exit status."""
    status.env_steps = run.env_steps
    if signum is not None:
        if world.is_root:
            print(status.describe("Interrupted"), file=sys.stderr, flush=True)
        return 128 + signum
    if world.is_root:
        print(f"Done: {run.env_steps} env steps in {run.run_dir}.", flush=True)
    return 0


def _format(report) -> str:
    score = "n/a" if math.isnan(report.score) else f"{report.score:9.2f}"
    line = f"{report.phase:>5}  env step {report.metrics.get('env_steps', 0):>9.0f}  "
    line += f"score {score} ({report.episodes:3d} episodes)"
    if "env_steps_per_second" in report.metrics:
        line += f"  {report.metrics['env_steps_per_second']:7.0f} steps/s"
    return line


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
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


if __name__ == "__main__":
    shutdown.exit_quickly(main())
