"""What a run is before anything is built: its config, directory and seed (plain Python).

A bad config name, key, value, path or run is one `UsageError` here, before TensorFlow loads.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from agents.config import files, memory_estimate, named, schema, values
from agents.config.config import Config
from agents.config.errors import UsageError
from agents.config.files import CONFIG_FILE
from agents.tools.checkpoints import list_checkpoints
from agents.training import run_dirs
from agents.training.metrics_log import METRICS_FILE, read_metrics

CUSTOM_NAME = "custom"  # The run name of a config given as a dict.


@dataclasses.dataclass(frozen=True)
class RunSetup:
    """A run's checked config, its directory (created for a new run), name and seed.

    Attributes:
        config: Every config key with its checked value.
        run_dir: The run directory.
        name: The config's name (the run directory's label begins with it).
        resumed: Whether the run existed before (it is resumed from its latest checkpoint).
        seed: Seed of networks, action sampling and environments.
    """

    config: Config
    run_dir: str
    name: str
    resumed: bool
    seed: int


def new_run(
    config: str | named.ConfigSource | Mapping[str, Any],
    logdir: str,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    run_name: str | None = None,
) -> RunSetup:
    """A new run of `config` in `logdir`, its directory created (see `planned_run`)."""
    full, name, seed, label = planned_run(config, seed, overrides, run_name)
    return RunSetup(full, run_dirs.new_run(logdir, label), name, False, seed)


def planned_run(
    config: str | named.ConfigSource | Mapping[str, Any],
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    run_name: str | None = None,
) -> tuple[Config, str, int, str]:
    """What a new run of `config` (a name, a config.yaml path, a `ConfigSource` resolved from
    either, or a dict of keys) would be: `(config, config name, seed, label)`, with nothing
    written.

    The seed is `seed`, else the one a config.yaml given as `config` records, else 0. The run
    directory is labelled `<config>[-<env>][-<run_name>]-s<seed>` (see `run_dirs.label`), the
    env where it differs from the named config's (always for a dict).

    Raises:
        UsageError: An unknown config, key, value or run name.
    """
    if isinstance(config, (str, named.ConfigSource)):
        source = named.resolve(config)
        base, name, recorded = dict(source.values), source.name, source.seed
    else:
        recorded = None
        unknown = sorted(set(config) - set(named.defaults_of(CUSTOM_NAME)))
        if unknown:
            raise UsageError(f"Unknown config keys: {', '.join(unknown)}.")
        base = named.defaults_of(CUSTOM_NAME)
        # The dict's own values are set as overrides (a key its agent does not read is
        # refused); values equal to the defaults, as in a whole defaults dict, change nothing.
        changed = {k: v for k, v in config.items() if base[k] != values.plain_value(v)}
        overrides = {**changed, **(overrides or {})}
        base = {**base, **config}
        name = CUSTOM_NAME
    full = Config.build(base, overrides)
    memory_estimate.check(full)  # Before anything is built: a lower bound.
    seed = _seed(seed, recorded)
    env = full.env if name == CUSTOM_NAME or full.env != base.get("env") else None
    return full, name, seed, run_dirs.label(name, seed, env, run_name)


def resumed_run(
    run: str,
    world_size: int = 1,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    expected_name: str | None = None,
    logdir: str = "logdir",
) -> RunSetup:
    """The run `run`, to be resumed with `overrides` (e.g. a larger `train_steps`).

    `run` is a run directory, or the timestamp or directory name of a run of
    `expected_name` in `logdir` (as `--timestamp` gives it). Keys the run's config.yaml lacks
    take today's values of its named config. The seed is `seed`, else the one the run records.

    Raises:
        UsageError: No run there, one of another config than `expected_name`, one trained
            with another number of MPI ranks, or overrides it cannot resume with.
    """
    if expected_name is not None and os.sep not in run and not os.path.isdir(run):
        run = run_dirs.timestamped_run(logdir, expected_name, run)
    run_dir = run_dirs.existing_run(run)
    name, _, trained = files.read_config_file(os.path.join(run_dir, files.CONFIG_FILE))
    if expected_name is not None and name != expected_name:
        raise UsageError(
            f"Run {run_dir!r} was trained with --config={name}, not --config={expected_name}."
        )
    if trained != world_size:  # Env steps and the learning-rate schedule count per rank.
        raise UsageError(
            f"Run {run_dir!r} was trained with {trained} MPI ranks; resume it with as many "
            f"(mpirun -n {trained}), not {world_size}."
        )
    saved = files.load_config(run_dir, name, defaults=named.defaults_of(name))
    config = Config.build(saved, overrides)
    check_resumable(run_dir, saved, config)
    recorded = files.saved_seed(os.path.join(run_dir, files.CONFIG_FILE))
    return RunSetup(config, run_dir, name, True, _seed(seed, recorded))


def _seed(seed: int | None, recorded: int | None) -> int:
    if seed is not None:
        return int(seed)
    return 0 if recorded is None else recorded


def check_resumable(run_dir: str, saved, config) -> None:
    """Refuse a resume that would misread or throw away what the run trained.

    Raises:
        UsageError: A key that shapes the trained variables changed (naming it, with both
            values), or the run recorded progress but holds no checkpoint to go on from.
    """
    for key in schema.FIXED_ON_RESUME:
        if key in saved and config[key] != saved[key]:
            raise UsageError(
                f"Run {run_dir!r} was trained with {key}={saved[key]!r}, not {config[key]!r}: "
                f"its weights hold no meaning for another {key}. Start a new run from its "
                f"config instead: --config={os.path.join(run_dir, CONFIG_FILE)} "
                f"--set {key}=..."
            )
    records = read_metrics(run_dir) if os.path.isfile(os.path.join(run_dir, METRICS_FILE)) else []
    if records and not list_checkpoints(os.path.join(run_dir, "checkpoints")):
        raise UsageError(
            f"Run {run_dir!r} trained to env step {records[-1]['env_steps']} but holds no "
            "checkpoint: resuming would start over inside it. Move the run directory aside, "
            f"or start a new run from its config: --config={run_dir}/{CONFIG_FILE}"
        )
