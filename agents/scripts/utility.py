"""Helpers of the scripts: run directories, config files and command-line overrides."""

from __future__ import annotations

import ast
import contextlib
import datetime
import difflib
import os
from typing import Any

import yaml

from agents.ppo import schema, validate
from agents.scripts import configs
from agents.tools.attr_dict import AttrDict

CONFIG_FILE = "config.yaml"


class UsageError(Exception):
    """Bad input from the user: printed as one line, without a traceback."""


def load_named_config(name: str) -> dict[str, Any]:
    """The config called `name` in `configs.py`, or read from a `config.yaml` path.

    Raises:
        UsageError: If no config has that name and it is no YAML file.
    """
    if name.endswith((".yaml", ".yml")):
        return dict(read_config_file(name)[1])
    if name not in configs.CONFIGS:
        raise UsageError(
            f"Unknown config {name!r}; available: {', '.join(sorted(configs.CONFIGS))}, "
            "or a path to a config.yaml."
        )
    return configs.CONFIGS[name]()


def config_name(name: str) -> str:
    """The name a run directory takes from `--config`: a config.yaml's saved name, or `name`."""
    if name.endswith((".yaml", ".yml")):
        return read_config_file(name)[0]
    return name


def apply_overrides(config: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `key=value` overrides, parsing values as Python literals checked by the schema.

    Raises:
        UsageError: For an override that is no `key=value`, names an unknown key, or has a
            value of the wrong type or out of range; the message says what is accepted.
    """
    config = dict(config)
    for override in overrides or []:
        key, sep, text = override.partition("=")
        key = key.strip()
        if not sep or key not in schema.KEYS:
            close = difflib.get_close_matches(key, schema.KEYS, n=1)
            hint = f" (did you mean {close[0]}?)" if close and sep else ""
            raise UsageError(
                f"Bad override {override!r}: expected key=value with a config key{hint}, one "
                f"of: {', '.join(schema.KEYS)}."
            )
        try:
            config[key] = validate.check_value(key, _literal(text.strip()))
        except ValueError as error:
            raise UsageError(f"Bad value in --set {override}: {error}") from None
    return config


def check_config(config: dict[str, Any]) -> None:
    """Validate a whole config in plain Python (no TensorFlow import).

    Raises:
        UsageError: For the first invalid or missing setting, naming it.
    """
    missing = [key for key in schema.KEYS if key not in config]
    if missing:
        raise UsageError(f"The config lacks the keys {', '.join(missing)}.")
    try:
        validate.validate_config(config)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # A bare word such as an env id or a network name.


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
    try:
        os.makedirs(logdir, exist_ok=True)
        path = _new_directory(logdir, stamp, config_name)
        probe = os.path.join(path, ".write-test")
        with open(probe, "w") as handle:
            handle.write("ok")
        os.remove(probe)
    except OSError as error:
        raise UsageError(f"Cannot write to logdir {logdir!r}: {error.strerror}.") from None
    return path, False


def _new_directory(logdir: str, stamp: str, config_name: str) -> str:
    """Create `<stamp>-<config>`, or `<stamp>-2-<config>`, ... when runs started that second.

    `mkdir` either creates a directory or fails because it exists, so concurrent starts (several
    seeds launched at once, several ranks' logdirs on one disk) each get their own.
    """
    for number in range(1, 10_000):
        suffix = "" if number == 1 else f"-{number}"
        path = os.path.join(logdir, f"{stamp}{suffix}-{config_name}")
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path
    raise OSError(17, f"too many runs of {config_name!r} started at {stamp}")


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


def read_config_file(
    path: str, defaults: dict[str, Any] | None = None
) -> tuple[str, AttrDict, int]:
    """`(name, config, world_size)` of a `config.yaml`, read with the safe loader.

    Keys the file lacks (those of another agent, or newer than the file) take their values in
    `defaults` (default: `schema.defaults()`); unknown keys are an error.

    Raises:
        UsageError: If the file is missing, not YAML, incomplete (a truncated file lacks `name`,
            written after `config`), or holds an unknown key.
    """
    if not os.path.isfile(path):
        raise UsageError(f"No config file {path!r}.")
    try:
        with open(path) as handle:
            data = yaml.safe_load(handle)
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise UsageError(f"{path!r} is not valid YAML{line}: restore it from a backup.") from None
    # `name` is written after `config` (sorted keys): a truncated file lacks it.
    missing = [key for key in ("config", "name") if not isinstance(data, dict) or key not in data]
    if missing or not isinstance(data["config"], dict):
        what = "empty" if data is None else f"incomplete (no {', '.join(missing) or 'config'})"
        raise UsageError(f"{path!r} is {what}: restore it from a backup.")
    saved = dict(data["config"])
    world_size = data.get("world_size", 1)
    unknown = sorted(set(saved) - set(schema.KEYS))
    if unknown:
        raise UsageError(f"Unknown config keys in {path!r}: {', '.join(unknown)}.")
    config = {**(schema.defaults() if defaults is None else defaults), **saved}
    return str(data["name"]), AttrDict(config), int(world_size)


def load_config(
    run_dir: str, name: str | None = None, defaults: dict[str, Any] | None = None
) -> AttrDict:
    """Read a run's `config.yaml` (see `read_config_file`).

    Raises:
        UsageError: If the file is missing or damaged (see `read_config_file`), or belongs to
            another config than `name`.
    """
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        raise UsageError(f"No {CONFIG_FILE} in {run_dir!r}: is it a run directory?")
    saved_name, config, _ = read_config_file(path, defaults)
    if name is not None and saved_name != name:
        raise UsageError(
            f"Run {run_dir!r} was trained with --config={saved_name}, not --config={name}."
        )
    return config


def saved_seed(path: str) -> int | None:
    """The seed a `config.yaml` records, or None (files written before it was recorded)."""
    with open(path) as handle:
        data = yaml.safe_load(handle)
    seed = data.get("seed") if isinstance(data, dict) else None
    return int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None


def trained_world_size(run_dir: str) -> int:
    """The number of MPI ranks a run was trained with (1 for files that do not say)."""
    return read_config_file(os.path.join(run_dir, CONFIG_FILE))[2]
