"""Train a PPO agent: `python -m agents.scripts.train --config=pendulum [--set key=value ...]`.

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

from agents.scripts import utility
from agents.scripts.utility import UsageError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="Name of a function in configs.py.")
    parser.add_argument("--logdir", default="logdir", help="Parent directory of run directories.")
    parser.add_argument("--timestamp", help="Resume the run <logdir>/<timestamp>-<config>.")
    parser.add_argument("--env_processes", action="store_true", help="One process per env.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="Override a config value."
    )
    return parser.parse_args(argv)


def setup_config(args: argparse.Namespace):
    """Returns (config, run_dir, resumed) after validating the arguments.

    A new run's directory is created here (empty); `train` writes the config once the session is
    built, so that a failed start never overwrites a resumed run's config.
    """
    base = utility.load_named_config(args.config)
    overrides = list(args.set) + (["env_processes=True"] if args.env_processes else [])
    config = utility.apply_overrides(base, overrides)
    run_dir, resumed = utility.run_directory(args.logdir, args.config, args.timestamp)
    if resumed:
        saved = utility.load_config(run_dir, args.config)
        config = utility.apply_overrides(dict(saved), overrides)
    return config, run_dir, resumed


def train(args: argparse.Namespace) -> int:
    """Build everything, run the train/eval loop, and return the exit status."""
    config, run_dir, resumed = setup_config(args)
    from agents.scripts import session  # Imports TensorFlow.

    try:
        run = session.Session(config, run_dir, args.seed)
    except BaseException:
        if not resumed:  # Leave no empty run directory that looks like a run.
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    try:
        utility.save_config(config, run_dir, args.config)
        print(f"{'Resuming' if resumed else 'Starting'} run {run_dir} at env step {run.env_steps}.")
        with _StopSignals() as stop:
            try:
                for report in run.loop(should_stop=lambda: stop.signum is not None):
                    print(_format(report), flush=True)
            except KeyboardInterrupt:  # A second signal, while a step ran.
                stop.signum = stop.signum or signal.SIGINT
        run.save()
    finally:
        run.close()
    if stop.signum is not None:
        print(
            f"Interrupted at env step {run.env_steps}; checkpoint saved. Resume with: "
            f"python -m agents.scripts.train --config={args.config} --logdir={args.logdir} "
            f"--timestamp={os.path.basename(run_dir).split('-')[0]}",
            file=sys.stderr,
        )
        return 128 + stop.signum
    print(f"Done: {run.env_steps} env steps in {run_dir}.")
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

    def __init__(self) -> None:
        self.signum: int | None = None
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
        # os.write, not print: a print in a signal handler can re-enter a print in progress.
        name = signal.Signals(signum).name
        os.write(2, f"{name}: stopping after this step (again to stop at once).\n".encode())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return train(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
