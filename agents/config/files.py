"""config.yaml: how a run records the config, seed and MPI ranks it trains with, and the YAML
reader of config files and search spaces (`load_yaml`: the safe loader, without aliases, with
floats in any of their usual spellings)."""

from __future__ import annotations

import contextlib
import os
import re
from typing import IO, Any, NamedTuple

import yaml

from agents.config import schema
from agents.config.config import Config
from agents.config.errors import UsageError
from agents.tools.attr_dict import AttrDict

CONFIG_FILE = "config.yaml"
_TOP_KEYS = {"config", "name", "seed", "world_size"}  # What `save_config` writes.


def save_config(
    config: dict[str, Any], run_dir: str, name: str, world_size: int = 1, seed: int = 0
) -> None:
    """Write `config.yaml` (plain YAML): the config's name, the keys its agent reads, the seed,
    and the number of MPI ranks the run trains with (a run resumes only with as many)."""
    agent_keys = schema.keys_of(config["agent"])
    data = {
        "name": name,
        "config": {key: config[key] for key in agent_keys},
        "seed": int(seed),
        "world_size": world_size,
    }
    path = os.path.join(run_dir, CONFIG_FILE)
    try:  # Written beside, then renamed: a failed write never truncates a run's config.
        with open(f"{path}.partial", "w") as handle:
            yaml.safe_dump(data, handle, sort_keys=True)
        os.replace(f"{path}.partial", path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.remove(f"{path}.partial")
        raise OSError(error.errno, error.strerror, path) from None


class SavedConfig(NamedTuple):
    """What a `config.yaml` holds: the config's name, its keys, the ranks and the seed."""

    name: str
    config: AttrDict
    world_size: int
    seed: int | None  # None in files written before the seed was recorded.


def read_config_file(
    path: str, defaults: dict[str, Any] | None = None
) -> tuple[str, AttrDict, int]:
    """`(name, config, world_size)` of a `config.yaml` (see `read_saved`)."""
    saved = read_saved(path, defaults)
    return saved.name, saved.config, saved.world_size


def read_saved(path: str, defaults: dict[str, Any] | None = None) -> SavedConfig:
    """What a `config.yaml` holds, read once with the safe loader.

    Keys the file lacks (those of another agent, or newer than the file) take their values in
    `defaults` (default: `schema.defaults()`); unknown keys are an error.

    Raises:
        UsageError: If the file is missing, not YAML, incomplete (a truncated file lacks `name`,
            written after `config`), holds an unknown key, or a key beside `config:` other than
            `name`, `seed` and `world_size`.
    """
    if not os.path.isfile(path):
        raise UsageError(f"No config file {path!r}.")
    try:
        with open(path) as handle:
            data = load_yaml(handle)
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise UsageError(f"{path!r} is not valid YAML{line}: restore it from a backup.") from None
    # `name` is written after `config` (sorted keys): a truncated file lacks it.
    missing = [key for key in ("config", "name") if not isinstance(data, dict) or key not in data]
    if missing or not isinstance(data["config"], dict):
        what = "empty" if data is None else f"incomplete (no {', '.join(missing) or 'config'})"
        raise UsageError(f"{path!r} is {what}: restore it from a backup.")
    beside = sorted(set(data) - _TOP_KEYS)
    if beside:  # E.g. a key meant for `config:` written at the top level: it would be lost.
        raise UsageError(
            f"{path!r} holds {', '.join(map(repr, beside))} beside `config:`; a config file holds "
            f"only {', '.join(sorted(_TOP_KEYS))}: move config keys under `config:`."
        )
    saved = {k: v for k, v in data["config"].items() if k not in schema.RETIRED}
    world_size = data.get("world_size", 1)
    unknown = sorted(set(saved) - set(schema.KEYS))
    if unknown:
        raise UsageError(f"Unknown config keys in {path!r}: {', '.join(unknown)}.")
    config = {**(schema.defaults() if defaults is None else defaults), **saved}
    return SavedConfig(str(data["name"]), AttrDict(config), int(world_size), _seed_of(data))


def load_config(
    run_dir: str, name: str | None = None, defaults: dict[str, Any] | None = None
) -> Config:
    """Read a run's `config.yaml` (see `read_config_file`), checked (a `Config`).

    Raises:
        UsageError: If the file is missing or damaged (see `read_config_file`), belongs to
            another config than `name`, or holds a value the schema refuses.
    """
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        raise UsageError(f"No {CONFIG_FILE} in {run_dir!r}: is it a run directory?")
    saved_name, config, _ = read_config_file(path, defaults)
    if name is not None and saved_name != name:
        raise UsageError(
            f"Run {run_dir!r} was trained with --config={saved_name}, not --config={name}."
        )
    try:
        return Config.build(config)
    except UsageError as error:
        raise UsageError(f"{path!r}: {error}") from None


def saved_seed(path: str) -> int | None:
    """The seed a `config.yaml` records, or None (files written before it was recorded)."""
    with open(path) as handle:
        data = load_yaml(handle)
    return _seed_of(data)


def _seed_of(data: Any) -> int | None:
    seed = data.get("seed") if isinstance(data, dict) else None
    return int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None


class PlainLoader(yaml.SafeLoader):
    """YAML's safe loader without anchors and aliases, which config files never hold: a few
    nested aliases (a "billion laughs" file of 1.5 KB) would expand without end.

    Numbers follow YAML 1.2 and Python: PyYAML's YAML 1.1 resolver reads `1e-3` (no dot) as the
    string "1e-3", so a learning rate written that way would be refused as a string.
    """

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None,
                None,
                "an alias (*), which config files do not use",
                self.peek_event().start_mark,
            )
        return super().compose_node(parent, index)


# Checked after YAML 1.1's own int and float resolvers: only spellings they leave as strings
# (an exponent without a dot, `1e-3`, `2E+5`) reach it.
PlainLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load_yaml(handle: IO[str]) -> Any:
    """The document in `handle`, read with `PlainLoader`.

    Raises:
        yaml.YAMLError: If it is not valid YAML or uses an alias.
    """
    return yaml.load(handle, PlainLoader)  # noqa: S506 (a SafeLoader, without aliases)
