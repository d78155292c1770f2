"""Train a PPO agent: `python -m agents.scripts.train --config=pendulum [--set key=value ...]`.

`mpirun -n K python -m agents.scripts.train ...` trains data-parallel on K ranks (see README).

TensorFlow is imported inside `train()`, not at module level: environment processes are
spawned, and a spawned child re-imports the main module.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import sys
from collections.abc import Callable

from agents.scripts import cli, console, utility
from agents.scripts.metrics_log import MetricsLog
from agents.scripts.progress import TrainingProgress, write
from agents.scripts.utility import UsageError
from agents.tools import mpi

POLICY_DIR = "policy"  # The exported SavedModel, in the run directory.


class TrainingError(Exception):
    """An environment failed or training met a non-finite value; the message says which, where.

    Printed without a Python traceback (the message holds the environment's), exit status 1.
    """


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return cli.training_parser(__doc__.splitlines()[0]).parse_args(argv)


def setup_config(args: argparse.Namespace, world_size: int = 1):
    """Returns (config, run_dir, resumed) after validating the arguments and the whole config.

    Plain Python: a bad value is reported before TensorFlow is imported. A new run's directory is
    created here (empty); `train` writes the config once the session is built, so that a failed
    start never overwrites a resumed run's config. `world_size` is the number of MPI ranks; a run
    resumes only with the number it was trained with.
    """
    base = utility.load_named_config(args.config)
    overrides = list(args.set) + (["env_processes=True"] if args.env_processes else [])
    config = utility.apply_overrides(base, overrides)
    name = utility.config_name(args.config)
    if not args.timestamp:  # A resumed run's config is the saved one, checked below.
        utility.check_config(config)
    run_dir, resumed = utility.run_directory(args.logdir, name, args.timestamp)
    if resumed:
        saved = utility.load_config(run_dir, name)
        trained = utility.trained_world_size(run_dir)
        if trained != world_size:  # Env steps and the learning-rate schedule count per rank.
            raise UsageError(
                f"Run {run_dir!r} was trained with {trained} MPI ranks; resume it with as many "
                f"(mpirun -n {trained}), not {world_size}."
            )
        config = utility.apply_overrides(dict(saved), overrides)
        utility.check_config(config)
    return config, run_dir, resumed


def train(args: argparse.Namespace, world: mpi.World | None = None) -> int:
    """Build everything, run the train/eval loop, and return the exit status.

    Under MPI every rank calls this: rank 0 chooses the run directory and shares the config, writes
    the files and prints; all ranks train in lockstep and stop together.

    Raises:
        TrainingError: An environment failed, or training met a non-finite value.
    """
    world = world or mpi.World()
    config, run_dir, resumed = _shared_setup(args, world)
    console.import_tensorflow(getattr(args, "verbose", False))
    from agents.scripts import session, summaries
    from agents.tools.batch_env import BatchEnvError

    mpi.share_cores(world)
    try:
        run = session.Session(config, run_dir, args.seed, world)
    except BaseException as error:
        if world.is_root and not resumed:  # Leave no empty run directory that looks like a run.
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(error, BatchEnvError):  # E.g. the first reset.
            raise TrainingError(str(error)) from error
        raise
    try:
        if world.is_root:
            utility.save_config(config, run_dir, utility.config_name(args.config), world.size)
            summaries.write_hparams(run_dir, config)
            action = "Resuming" if resumed else "Starting"
            print(f"{action} run {run_dir} at env step {run.env_steps}.", flush=True)
        signum = _run_loop(run, world)
        run.save()
        if world.is_root:
            _write_results(run)
    finally:
        run.close()
    return _finish(args, world, run, _agreed_signal(world, signum))


def _run_loop(run, world: mpi.World) -> int | None:
    """Train until the end or a stop signal, printing reports; returns the signal, if any.

    A failing environment or a non-finite value ends training before the loop saves another
    checkpoint, so the latest checkpoint on disk is the last good one.
    """
    from agents.tools.batch_env import BatchEnvError

    progress = TrainingProgress(run.config.train_steps, run.env_steps, enabled=world.is_root)
    metrics = MetricsLog(run.run_dir if world.is_root else None)
    with _StopSignals(announce=world.is_root) as stop, progress, metrics:
        try:
            for report in run.loop(should_stop=lambda: stop.signum is not None):
                if world.is_root:
                    write(_format(report))
                    progress.update(report)
                    metrics.append(report)
        except KeyboardInterrupt:  # A second signal, while a step ran.
            stop.signum = stop.signum or signal.SIGINT
            if world.size > 1:  # The other ranks may wait in a collective: end the job.
                run.save()
                raise
        except (BatchEnvError, FloatingPointError) as error:
            raise TrainingError(f"Stopped at env step {run.env_steps}: {error}") from error
    return stop.signum


def _write_results(run) -> None:
    """Draw the learning curve and export the policy into the run directory; print where.

    The checkpoint is saved before: a failure here costs only that file, with a one-line warning.
    """
    from agents.ppo.export import export_policy
    from agents.scripts import plot

    if any(plot.has_events(run.run_dir, phase) for phase in ("train", "eval")):
        _write_result("Learning curve", lambda: plot.plot_run(run.run_dir))
    policy_dir = os.path.join(run.run_dir, POLICY_DIR)
    _write_result("Policy (SavedModel)", lambda: export_policy(run.agent, policy_dir))


def _write_result(what: str, write_file: Callable[[], str]) -> None:
    try:
        path = write_file()
    except Exception as error:
        reason = (str(error).strip().splitlines() or [""])[0]
        if not isinstance(error, UsageError):  # A usage error's message says all.
            reason = f"{type(error).__name__}: {reason}"
        print(f"warning: {what} not written: {reason}", file=sys.stderr, flush=True)
    else:
        print(f"{what}: {path}", flush=True)


def _shared_setup(args: argparse.Namespace, world: mpi.World):
    """`setup_config` on rank 0 only (one run directory), its result or usage error on all ranks."""
    result, error = None, None
    if world.is_root:
        try:
            result = setup_config(args, world.size)
        except UsageError as exc:
            error = exc
    world.agree(error)
    return world.bcast(result)


def _agreed_signal(world: mpi.World, signum: int | None) -> int | None:
    """The signal that stopped any rank (ranks stop together, but not all of them got it)."""
    signums = [s for s in world.allgather(signum) if s is not None]
    return signums[0] if signums else None


def _finish(args: argparse.Namespace, world: mpi.World, run, signum: int | None) -> int:
    """Print how the run ended (rank 0) and return the exit status."""
    if signum is not None:
        if world.is_root:
            print(
                f"Interrupted at env step {run.env_steps}; checkpoint saved. Resume with: "
                f"{'mpirun -n ' + str(world.size) + ' ' if world.size > 1 else ''}"
                f"python -m agents.scripts.train --config={args.config} --logdir={args.logdir} "
                f"--timestamp={os.path.basename(run.run_dir).split('-')[0]}",
                file=sys.stderr,
                flush=True,
            )
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


class _StopSignals:
    """Within the block, SIGINT (Ctrl-C) and SIGTERM ask the loop to stop before its next step.

    Stopping between steps keeps the counters and the checkpoint consistent (a KeyboardInterrupt
    could land in the middle of a rollout or of a checkpoint write). A second signal raises
    KeyboardInterrupt at once, for a step that hangs. The previous handlers return on exit.
    """

    def __init__(self, announce: bool = True) -> None:
        self.signum: int | None = None
        self._announce = announce  # Under MPI every rank gets the signal; rank 0 says so.
        self._previous: dict = {}

    def __enter__(self) -> _StopSignals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)

    def _handle(self, signum, frame) -> None:
        del frame
        if self.signum is not None:
            raise KeyboardInterrupt(f"signal {signum}")
        self.signum = signum
        if self._announce:
            # os.write, not print: a print in a signal handler can re-enter a print in progress.
            name = signal.Signals(signum).name
            os.write(2, f"{name}: stopping after this step (again to stop at once).\n".encode())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    world = mpi.init_world()  # A world of one without an MPI launcher; MPI is then not imported.
    try:
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
    sys.exit(main())
