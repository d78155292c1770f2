"""Helpers of the scripts: run directories, config files and command-line overrides."""

from __future__ import annotations

import ast
import datetime
import os
from typing import Any

import yaml

from agents.scripts import configs
from agents.tools.attr_dict import AttrDict

CONFIG_FILE = "config.yaml"


class UsageError(Exception):
    """Bad input from the user: printed as one line, without a traceback."""


def load_named_config(name: str) -> dict[str, Any]:
    """The config called `name` from `configs.py`."""
    if name not in configs.CONFIGS:
        raise UsageError(
            f"Unknown config {name!r}; available: {', '.join(sorted(configs.CONFIGS))}."
        )
    return configs.CONFIGS[name]()


def apply_overrides(config: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `key=value` overrides, parsing values as Python literals of the key's type."""
    config = dict(config)
    for override in overrides or []:
        key, sep, text = override.partition("=")
        key = key.strip()
        if not sep or key not in config:
            raise UsageError(
                f"Bad override {override!r}: expected key=value with a key among: "
                f"{', '.join(sorted(config))}."
            )
        config[key] = _parse_value(key, text.strip(), config[key])
    return config


# Keys that may be None, with the type of their other values (a None default has no type).
OPTIONAL_TYPES: dict[str, type] = {
    "target_kl": float,
    "value_clip": float,
    "kl_cutoff_factor": float,
    "max_grad_norm": float,
    "max_episode_steps": int,
    "env_wrapper": str,
    "env_timeout": float,
}


def _parse_value(key: str, text: str, current: Any) -> Any:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text  # A bare word such as an env id or a network name.
    optional = key in OPTIONAL_TYPES
    expected = OPTIONAL_TYPES[key] if optional else type(current)
    if value is None:
        if optional or current is None:
            return None
        raise UsageError(f"Bad value for {key}: None is not accepted, expected {_a(expected)}.")
    if current is None and not optional:
        return value  # A key with no declared type: nothing to check it against.
    if expected is float and type(value) is int:
        value = float(value)
    if expected is list and isinstance(value, tuple):
        value = list(value)
    if type(value) is not expected:
        accepted = f"{_a(expected)} or None" if optional else _a(expected)
        example = "" if current is None else f" such as {current!r}"
        raise UsageError(
            f"Bad value for {key}: {text!r} is a {type(value).__name__}, expected "
            f"{accepted}{example}."
        )
    return value


def _a(kind: type) -> str:
    """'a float', 'an int'."""
    return f"{'an' if kind.__name__[0] in 'aeiou' else 'a'} {kind.__name__}"


def run_directory(logdir: str, config_name: str, timestamp: str | None) -> tuple[str, bool]:
    """The run directory `<logdir>/<timestamp>-<config>`, and whether it is resumed.

    Raises:
        UsageError: If `timestamp` names no existing run, the new run's directory exists
            already, or the logdir is not writable.
    """
    if timestamp:
        path = os.path.join(logdir, f"{timestamp}-{config_name}")
        if not os.path.isdir(path):
            runs = sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []
            raise UsageError(
                f"No run {path!r} to resume for --timestamp {timestamp}; runs in {logdir!r}: "
                f"{', '.join(runs) or 'none'}."
            )
        return path, True
    stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
    path = os.path.join(logdir, f"{stamp}-{config_name}")
    if os.path.exists(path):
        raise UsageError(f"Run {path!r} exists already: another run started this second?")
    try:
        os.makedirs(path, exist_ok=False)
        probe = os.path.join(path, ".write-test")
        with open(probe, "w") as handle:
            handle.write("ok")
        os.remove(probe)
    except OSError as error:
        raise UsageError(f"Cannot write to logdir {logdir!r}: {error.strerror}.") from None
    return path, False


def save_config(config: dict[str, Any], run_dir: str, name: str) -> None:
    """Write `config.yaml` (plain YAML) with the config's name."""
    with open(os.path.join(run_dir, CONFIG_FILE), "w") as handle:
        yaml.safe_dump({"name": name, "config": dict(config)}, handle, sort_keys=True)


def load_config(run_dir: str, name: str | None = None) -> AttrDict:
    """Read a run's `config.yaml` with the safe loader.

    Raises:
        UsageError: If the file is missing, not YAML, incomplete (a truncated file lacks `name`,
            written last), or belongs to another config than `name`.
    """
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        raise UsageError(f"No {CONFIG_FILE} in {run_dir!r}: is it a run directory?")
    try:
        with open(path) as handle:
            data = yaml.safe_load(handle)
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise UsageError(f"{path!r} is not valid YAML{line}: restore it from a backup.") from None
    missing = [key for key in ("config", "name") if not isinstance(data, dict) or key not in data]
    if missing or not isinstance(data["config"], dict):
        what = "empty" if data is None else f"incomplete (no {', '.join(missing) or 'config'})"
        raise UsageError(f"{path!r} is {what}: restore it from a backup.")
    if name is not None and data["name"] != name:
        raise UsageError(
            f"Run {run_dir!r} was trained with --config={data['name']}, not --config={name}."
        )
    return AttrDict(data["config"])
