"""Tune a config's hyperparameters: `python -m agents.scripts.tune --config=NAME --trials N`.

Optuna's TPE sampler proposes values for the keys of the search space (`--space space.yaml`, or
RL-Zoo's PPO ranges), each trial trains a normal run, and the median pruner stops trials whose
eval scores fall below the median of earlier trials'. The study is kept in
`<logdir>/tune-<study>.db`: run the same command again to add trials. At the end a table of the
trials is printed and the best trial's config written to `<logdir>/tune-<study>-best/config.yaml`
(`python -m agents.scripts.train --config=<that path>` trains it again). Needs
`pip install -e ".[tune]"`.
"""

from __future__ import annotations

import argparse
import os
import sys

from agents.config import named
from agents.config.errors import UsageError
from agents.config.values import parse_overrides
from agents.multirun import tuning, tuning_space
from agents.scripts import cli
from agents.scripts.arg_types import seed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.scripts.tune",
        description=__doc__.splitlines()[0],
        epilog="\n".join(__doc__.splitlines()[2:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", required=True, help="A named config or a config.yaml path.")
    parser.add_argument("--trials", type=int, required=True, help="Finished trials to reach.")
    parser.add_argument("--logdir", default="logdir", help="Where trials and the study go.")
    parser.add_argument("--space", help="YAML search space (default: RL-Zoo's PPO ranges).")
    parser.add_argument("--study", help="The study's name (default: the config's name).")
    parser.add_argument("--seed", type=seed, default=0, help="Seed of the sampler and the runs.")
    parser.add_argument(
        "--set", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
        help="Config values every trial shares, e.g. --set train_steps=50000.",
    )  # fmt: skip
    args = parser.parse_args(argv)
    stopped = []
    status = cli.exit_status(lambda: _tune(args, stopped))
    return 128 + stopped[0] if stopped else status


def _tune(args: argparse.Namespace, stopped: list[int]) -> None:
    if args.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {args.trials}.")
    space = tuning_space.load_space(args.space)
    overrides = parse_overrides(args.set)
    source = named.resolve(args.config)  # Read once: the study and every trial take it.
    try:
        study = tuning.tune(
            source, args.trials, args.logdir, space, args.study, args.seed, overrides
        )
    except tuning.TuningStoppedError as stop:
        stopped.append(stop.signum)
        print(
            f"Stopped by signal {stop.signum} in trial {stop.trial} (saved: {stop.run_dir}). "
            "Run the same command to go on; that trial's values are tried again.",
            file=sys.stderr,
        )
        return
    print("\n".join(tuning.results_table(study)))
    name = args.study or source.name
    best = tuning.write_best(study, os.path.join(args.logdir, f"tune-{name}-best"))
    print(f"Best trial {study.best_trial.number}: eval {study.best_value:.2f}; config {best}")


if __name__ == "__main__":
    sys.exit(main())
