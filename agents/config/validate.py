"""Checks of config values against `agents.config.schema`, so bad values fail early, named.

Plain Python: the scripts check a config before TensorFlow is imported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from agents.config import catalogue, schema
from agents.config.schema import Key
from agents.envs import registry

POLICY_LOSSES = schema.KEYS["policy_loss"].choices
SCHEDULES = schema.KEYS["learning_rate_schedule"].choices


def accepted(key: Key) -> str:
    """What `key` accepts, in words: 'a float > 0 or None', 'one of clip, dual_clip'."""
    if key.choices:
        text = f"one of {', '.join(key.choices)}"
        text += " or a 'module:attribute' path" if key.imports else ""
    else:
        kind = schema.type_of(key)
        text = f"a list of {key.item.__name__}s" if key.item else _a(kind)
        text += _range(key, "each " if key.item else "")
    return text + (" or None" if key.optional else "")


def check_value(name: str, value: Any) -> Any:
    """`value` as config key `name` holds it (an int widened to float, a tuple made a list).

    Raises:
        ValueError: The key is unknown, or the value has the wrong type or is out of range; the
            message names the key, the value and what is accepted.
    """
    key = schema.KEYS.get(name)
    if key is None:
        raise ValueError(f"Unknown config key {name!r}.")
    if value is None and key.optional:
        return None
    kind = schema.type_of(key)
    if kind is float and type(value) is int:
        value = float(value)
    if kind is list and isinstance(value, tuple):
        value = list(value)
    good = type(value) is kind
    if good and key.item:
        good = all(type(item) is key.item and _in_range(key, item) for item in value)
    elif good and kind in (int, float):
        good = _in_range(key, value)
    if good and key.choices:
        good = value in key.choices or (key.imports and catalogue.is_import_path(value))
    if not good:
        raise ValueError(f"{name} must be {accepted(key)}, got {value!r}.")
    return value


def validate_config(config: Mapping[str, Any]) -> None:
    """Check every schema key of `config`, then the rules that tie keys together.

    Keys outside the schema are left alone.

    Raises:
        ValueError: For the first invalid setting, naming it.
    """
    for name in schema.KEYS:
        if name in config:
            check_value(name, config[name])
    check_rules(config)


def check_rules(config: Mapping[str, Any]) -> None:
    """The rules that tie keys together, on values each checked already (see `check_value`).

    Raises:
        ValueError: For the first broken rule, naming the keys.
    """
    if config["rollout_length"] % config["chunk_length"]:
        raise ValueError(
            f"rollout_length {config['rollout_length']} must be a multiple of chunk_length "
            f"{config['chunk_length']}."
        )
    if config.get("native_env"):
        _check_native(config)
    _check_visit_key(config)
    _check_backend(config)
    sequences = config["rollout_length"] // config["chunk_length"] * config["num_agents"]
    if config["num_minibatches"] > sequences:
        raise ValueError(
            f"num_minibatches {config['num_minibatches']} exceeds the {sequences} sequences of a "
            "rollout (rollout_length / chunk_length x num_agents)."
        )


def _check_native(config: Mapping[str, Any]) -> None:
    """A native env runs in the graph: it needs an id with a native implementation, and no
    Python-side setting (env processes, pixel wrappers)."""
    registry.check_native(config["env"])
    agent = config.get("agent", "ppo")
    if not catalogue.AGENTS[agent].native_envs:
        native = ", ".join(name for name, entry in catalogue.AGENTS.items() if entry.native_envs)
        raise ValueError(
            f"agent={agent!r} learns from Python envs only; native envs "
            f"(native_env=True) train {native}."
        )
    wrapper = config.get("env_wrapper")
    if wrapper and wrapper not in registry.native_wrappers(config["env"]):
        rendered = registry.native_wrappers(config["env"])
        raise ValueError(
            f"env_wrapper={wrapper!r} applies to Python environments; native {config['env']} "
            + (
                f"renders {' or '.join(rendered)} itself."
                if rendered
                else "takes none: leave it unset."
            )
        )
    for key in ("env_processes", "env_backend"):
        if config.get(key) not in (None, False, "python"):
            raise ValueError(
                f"{key}={config[key]!r} applies to Python environments; a native env "
                "(native_env=True) runs inside the compiled call: leave it unset."
            )


def _check_visit_key(config: Mapping[str, Any]) -> None:
    """visit_key=agent counts visits of a native env's agent: for the bonuses that count."""
    if config.get("visit_key") != "agent":
        return
    if config.get("bonus") not in ("noveld", "count"):
        raise ValueError(
            f"visit_key='agent' applies to bonus noveld or count, which count visits; "
            f"bonus={config.get('bonus')!r} counts none: leave visit_key unset."
        )
    if not config.get("native_env"):
        raise ValueError(
            "visit_key='agent' counts the agent of a native env (a native MiniGrid id's cell, "
            "direction and carried object): set native_env=True, or visit_key='observation'."
        )


def _check_backend(config: Mapping[str, Any]) -> None:
    """env_processes puts the python backend's envs in processes; other backends step their own
    way (gymnasium-async has a process per env already)."""
    backend = config.get("env_backend", "python")
    if config.get("env_processes") and backend != "python":
        raise ValueError(
            f"env_processes=True applies to env_backend='python'; env_backend={backend!r} steps "
            "its envs itself (gymnasium-async: one process each): leave env_processes unset."
        )


def _in_range(key: Key, value: float) -> bool:
    if not math.isfinite(value):  # inf and nan pass no comparison as they should.
        return False
    if key.low is not None and (value <= key.low if key.open_low else value < key.low):
        return False
    return key.high is None or value <= key.high


def _range(key: Key, prefix: str = "") -> str:
    if key.low is not None and key.high is not None:
        return f" {prefix}in {'(' if key.open_low else '['}{key.low}, {key.high}]"
    if key.low is not None:
        return f" {prefix}{'>' if key.open_low else '>='} {key.low}"
    return ""


def _a(kind: type) -> str:
    """'a float', 'an int'."""
    return f"{'an' if kind.__name__[0] in 'aeiou' else 'a'} {kind.__name__}"
