"""The command line of training: flags with their defaults, and help generated from the schema.

`--help` lists every flag with its default, every named config with its first doc line, and every
config key by group with its default, what it accepts and what it does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from agents.config import schema, validate
from agents.config.errors import UsageError
from agents.scripts import configs
from agents.scripts.arg_types import MAX_SEED, positive_int, seed


def training_parser(description: str) -> argparse.ArgumentParser:
    """The parser of `python -m agents.scripts.train`."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.scripts.train",
        description=description,
        epilog=configs_help() + "\n\n" + keys_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        required=True,
        help="A config named below, or the path of a config.yaml (e.g. of an earlier run).",
    )
    parser.add_argument(
        "--logdir",
        default="logdir",
        help="Parent directory of run directories (default: %(default)s).",
    )
    parser.add_argument(
        "--timestamp",
        help="Resume the run of --config in --logdir with this timestamp (or directory name) "
        "from its checkpoint.",
    )
    parser.add_argument(
        "--name",
        help="A label in the new run's directory name, <timestamp>-<config>[-<env>]-<name>-"
        "s<seed> (letters, digits and ._=+-).",
    )
    parser.add_argument(
        "--env_processes", action="store_true", help="Step each environment in its own process."
    )
    parser.add_argument(
        "--seed",
        type=seed,
        default=None,
        help=f"Seed of networks, sampling and envs, in [0, {MAX_SEED}] (default: the one a "
        "resumed run or a config.yaml records, else 0).",
    )
    parser.add_argument(
        "--set",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=VALUE",
        help="Override config keys (listed below), e.g. --set learning_rate=1e-3 num_agents=8.",
    )
    parser.add_argument("--verbose", action="store_true", help="Show TensorFlow's own log lines.")
    parser.add_argument(
        "--seeds",
        type=seed,
        nargs="+",
        help="Train one run per seed, each in its own process, and print a table of their final "
        "eval scores (mean and IQM with 95%% bootstrap CIs).",
    )
    parser.add_argument(
        "--parallel",
        type=positive_int,
        default=None,
        help="With --seeds: runs at once (default: the machine's cores).",
    )
    parser.add_argument(
        "--track",
        action="store_true",
        help="Log the run to Weights & Biases (pip install -e '.[track]'; WANDB_MODE=offline "
        "keeps it on disk).",
    )
    parser.add_argument("--wandb_project", default="agents", help="W&B project (with --track).")
    parser.add_argument("--wandb_entity", help="W&B entity, a team or user (with --track).")
    parser.add_argument(
        "--wandb_group", help="W&B group (with --track; default with --seeds: the config)."
    )
    parser.add_argument(
        "--dry-run",
        "--dry_run",
        dest="dry_run",
        action="store_true",
        help="Print the run that would start (its name, budget and effective config, checked) "
        "and exit without writing anything.",
    )
    return parser


def configs_help() -> str:
    """One line per named config: its name and the first line of its docstring."""
    lines = ["configs:"]
    for name in sorted(configs.CONFIGS):
        doc = (configs.CONFIGS[name].__doc__ or "").strip().splitlines()
        lines.append(f"  {name:<14} {doc[0] if doc else ''}")
    return "\n".join(lines)


def keys_help() -> str:
    """Every config key by group: `name = default  (accepted)  doc`."""
    lines = ["config keys (--set KEY=VALUE; defaults of the `default` config):"]
    for group, keys in schema.GROUPS.items():
        lines.append(f"  {group}:")
        for key in keys:
            lines.append(f"    {key.name} = {key.default!r}  ({validate.accepted(key)})")
            lines.append(f"        {key.doc}")
    return "\n".join(lines)


# The generated table sits between these lines of docs/training.md.
TABLE_BEGIN = "<!-- config table: python -m agents.scripts.cli -->"
TABLE_END = "<!-- end of config table -->"


def markdown_table() -> str:
    """The docs' config table: one row per key, grouped, generated from the schema."""
    rows = ["| group | key | default | accepted | meaning |", "| --- | --- | --- | --- | --- |"]
    for group, keys in schema.GROUPS.items():
        for key in keys:
            default = f"`{key.default!r}`"
            rows.append(
                f"| {group} | `{key.name}` | {default} | {validate.accepted(key)} | {key.doc} |"
            )
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())  # docs/training.md's table, between TABLE_BEGIN and TABLE_END.


def exit_status(body: Callable[[], None]) -> int:
    """A command's exit status: `body()` and 0, or its `UsageError` as one line on stderr and 2."""
    try:
        body()
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
