"""A tuning study's search space: read from YAML, checked against the config schema, sampled.

A space maps config keys to `{type: float|int, low, high[, log: true]}` or
`{type: categorical, choices: [...]}`. Every end of a range and every choice is checked against
what its key accepts before any trial trains, so a study never stops at the trial that draws a
value the config refuses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import yaml

from agents.config import files, schema, validate
from agents.config.errors import UsageError

# Without a space of the user's: RL-Zoo's PPO sampler's ranges (rl_zoo3/hyperparams_opt.py).
DEFAULT_SPACE: dict[str, dict[str, Any]] = {
    "learning_rate": {"type": "float", "low": 1e-5, "high": 1e-2, "log": True},
    "entropy_coef": {"type": "float", "low": 1e-8, "high": 0.1, "log": True},
    "clip_ratio": {"type": "categorical", "choices": [0.1, 0.2, 0.3, 0.4]},
    "gae_lambda": {"type": "categorical", "choices": [0.8, 0.9, 0.92, 0.95, 0.98, 0.99, 1.0]},
    "discount": {"type": "categorical", "choices": [0.9, 0.95, 0.98, 0.99, 0.995, 0.999]},
    "update_epochs": {"type": "categorical", "choices": [1, 5, 10, 20]},
}
_TYPES = {"float": ("low", "high"), "int": ("low", "high"), "categorical": ("choices",)}
_SHAPES = (
    "{type: float|int, low, high} (log: true for a log scale) or "
    "{type: categorical, choices: [...]}"
)


def load_space(path: str | None) -> dict[str, dict[str, Any]]:
    """The search space of a YAML file, or `DEFAULT_SPACE` for None.

    Raises:
        UsageError: A file that cannot be read, an unknown config key, or a bad entry (a range
            whose ends are no numbers, low above high, a log range from 0 or below, no choices,
            or a value the key does not accept), named in one line.
    """
    if path is None:
        return dict(DEFAULT_SPACE)
    try:
        with open(path) as handle:
            space = files.load_yaml(handle)
    except (OSError, yaml.YAMLError) as error:
        raise UsageError(f"Search space {path!r} cannot be read: {error}") from None
    if not isinstance(space, dict) or not space:
        raise UsageError(f"Search space {path!r} is empty: give key: {{type, low, high}} entries.")
    for key, entry in space.items():
        problem = entry_problem(key, entry)
        if problem:
            raise UsageError(f"Search space {path!r}: {key}: {entry!r}: {problem}.")
    return space


def entry_problem(key: Any, entry: Any) -> str | None:
    """What is wrong with one entry of a space, in words, or None."""
    if key not in schema.KEYS:
        return f"{key!r} is no config key"
    kind = entry.get("type") if isinstance(entry, dict) else None
    if kind not in _TYPES or any(field not in entry for field in _TYPES[kind]):
        return f"give {_SHAPES}"
    if kind == "categorical":
        values = entry["choices"]
        if not isinstance(values, list) or not values:
            return "choices must be a non-empty list"
    else:
        problem = _range_problem(kind, entry["low"], entry["high"], entry.get("log", False))
        if problem:
            return problem
        values = [entry["low"], entry["high"]]
    for value in values:
        try:
            validate.check_value(key, value)
        except ValueError as error:
            return f"{value!r} is outside what the key accepts ({error})"
    return None


def _range_problem(kind: str, low: Any, high: Any, log: Any) -> str | None:
    number = int if kind == "int" else (int, float)
    if not all(isinstance(end, number) and not isinstance(end, bool) for end in (low, high)):
        return f"low and high must be {'integers' if kind == 'int' else 'numbers'}"
    if not (math.isfinite(low) and math.isfinite(high)):
        return "low and high must be finite"
    if low > high:
        return f"low {low} is above high {high}"
    if not isinstance(log, bool):
        return "log must be true or false"
    if log and low <= 0:
        return f"a log range needs low > 0, got {low}"
    return None


def suggest(trial: Any, space: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The trial's values of every key of `space` (Optuna's suggest API)."""
    values = {}
    for key, entry in space.items():
        if entry["type"] == "categorical":
            values[key] = trial.suggest_categorical(key, list(entry["choices"]))
        elif entry["type"] == "int":
            values[key] = trial.suggest_int(
                key, entry["low"], entry["high"], log=entry.get("log", False)
            )
        else:
            values[key] = trial.suggest_float(
                key, float(entry["low"]), float(entry["high"]), log=entry.get("log", False)
            )
    return values
