"""Named configs (`agents/scripts/configs.py`) and config.yaml paths, as `--config` takes them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from agents.config.errors import UsageError
from agents.config.files import read_saved
from agents.scripts import configs


@dataclasses.dataclass(frozen=True)
class ConfigSource:
    """A config as `--config` or the API names it, read once where it enters (`resolve`).

    Attributes:
        name: The config's name (a config.yaml's saved name).
        values: Its keys: the named config's, or the file's over its defaults.
        seed: The seed a config.yaml records (None for a named config).
    """

    name: str
    values: Mapping[str, Any]
    seed: int | None = None


def resolve(config: str | ConfigSource) -> ConfigSource:
    """The named config or config.yaml `config` as a `ConfigSource`, read once (a source is
    returned as it is, so every floor can take either).

    Raises:
        UsageError: An unknown name, or a config.yaml that is missing or damaged.
    """
    if isinstance(config, ConfigSource):
        return config
    if is_config_file(config):
        saved = read_saved(config)
        return ConfigSource(saved.name, dict(saved.config), saved.seed)
    return ConfigSource(config, _named_config(config))


def is_config_file(name: str) -> bool:
    """Whether `name` is the path of a config.yaml rather than a config's name."""
    return name.endswith((".yaml", ".yml"))


def _named_config(name: str) -> dict[str, Any]:
    """The config called `name` in `configs.py`.

    Raises:
        UsageError: If no config has that name (and it is no YAML file).
    """
    if name not in configs.CONFIGS:
        raise UsageError(
            f"Unknown config {name!r}; available: {', '.join(sorted(configs.CONFIGS))}, "
            "or a path to a config.yaml."
        )
    return configs.CONFIGS[name]()


def defaults_of(name: str) -> dict[str, Any]:
    """The values a run of config `name` takes for keys its config.yaml lacks.

    A named config's own values, or the schema's defaults for a config that has no name here
    (a dict given to the Python API, or a config since renamed).
    """
    if name in configs.CONFIGS:
        return configs.CONFIGS[name]()
    return configs.default()


def changes(config: Any, name: str) -> str:
    """The values of `config` that differ from the named config `name`'s, as `key=value (was v)`
    phrases; empty when it is the named config as it is."""
    base = defaults_of(name)
    return ", ".join(
        f"{key}={value!r} (was {base[key]!r})"
        for key, value in config.items()
        if key in base and base[key] != value
    )
