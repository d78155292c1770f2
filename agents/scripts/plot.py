"""Plot learning curves: one run's, or several runs' aggregated over seeds.

`python -m agents.scripts.plot --run_dir <run dir> [--out path]` draws a run's train and eval
`mean_score` from its TensorBoard summaries (see `agents.training.curves`).

`python -m agents.scripts.plot --runs 'logdir/*pendulum*' 'logdir/*cartpole*' [--group KEY]
[--x env_steps|wall_time] [--out curves.svg]` groups the runs by config (or by the value of a
config key), draws each group's mean eval score with a 95% bootstrap band over its runs, and
prints a table of the final eval scores: mean and IQM, each with its 95% bootstrap CI (see
`agents.multirun.aggregates`).
"""

from __future__ import annotations

import argparse
import sys

from agents.multirun import comparison
from agents.scripts import cli
from agents.training.curves import plot_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--run_dir", help="Run directory of a training run.")
    what.add_argument("--runs", nargs="+", help="Run directories or globs to aggregate.")
    parser.add_argument(
        "--group", default="config", help="Group runs by config name (default) or a config key."
    )
    parser.add_argument("--x", default="env_steps", choices=comparison.X_AXES, help="The x axis.")
    parser.add_argument(
        "--out",
        help="Output PNG or SVG (default: <run_dir>/learning_curve.png, or comparison.png).",
    )
    args = parser.parse_args(argv)
    return cli.exit_status(lambda: _plot(args))


def _plot(args: argparse.Namespace) -> None:
    if args.run_dir:
        print(plot_run(args.run_dir, args.out))
        return
    runs = [comparison.read_run(run, args.group) for run in comparison.find_runs(args.runs)]
    groups = comparison.group_runs(runs)
    print(comparison.format_table(comparison.table(groups)))
    print(comparison.plot(groups, args.out or "comparison.png", args.x))


if __name__ == "__main__":
    sys.exit(main())
