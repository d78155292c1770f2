"""`train --dry-run`: the run that would start, checked, with nothing written."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping
from typing import Any

from agents.config import budget, named
from agents.config.errors import UsageError
from agents.envs import registry
from agents.envs.gridworld import layouts
from agents.envs.python import environments
from agents.training import run_setup


def describe(args: argparse.Namespace, overrides: Mapping[str, Any], ranks: int) -> list[str]:
    """Lines saying which run `args` would start or resume, its budget and effective config.

    Raises:
        UsageError: As training would raise it (a bad config, key, value, seed or run), or
            an env id gymnasium does not know.
    """
    if args.timestamp is None:
        config, name, _, label = run_setup.planned_run(args.config, args.seed, overrides, args.name)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        first = f"Dry run: would start {os.path.join(args.logdir, f'{stamp}-{label}')}."
    else:
        expected = named.resolve(args.config).name
        setup = run_setup.resumed_run(
            args.timestamp, ranks, args.seed, overrides, expected, args.logdir
        )
        config, name = setup.config, setup.name
        first = f"Dry run: would resume {setup.run_dir} from its latest checkpoint."
    if not config["native_env"]:
        try:
            # The packages the run imports too: a missing extra fails here as in the run.
            packages = config["env_backend"] != "envpool"  # EnvPool steps its envs itself.
            environments.check_env(config["env"], config["env_wrapper"], packages)
        except ValueError as error:
            raise UsageError(str(error)) from None
    changed = named.changes(config, name)
    lines = [first, f"Config {name} with {changed}." if changed else f"Config {name} as named."]
    lines.append(budget.describe(config, ranks))
    lines += _layout_bank(config, ranks)
    lines.append("Effective config:")
    width = max(len(key) for key in config)
    lines += [f"  {key:<{width}}  {value!r}" for key, value in sorted(config.items())]
    return lines


def _layout_bank(config: Mapping[str, Any], ranks: int) -> list[str]:
    """The line naming the layout bank a native MiniGrid run reads: cached, or what building
    it costs (measured here: a first run spends minutes on it)."""
    if not config["native_env"] or config["env"] not in registry.MINIGRID_IDS:
        return []

    env_id, draws = config["env"], budget.layout_draws(config, ranks)
    return [layouts.describe(env_id, config["layout_bank"] or layouts.size_for(env_id, draws), 0)]
