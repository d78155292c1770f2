"""Config values: overrides given as values (the Python API) or as `key=value` text (`--set`),
checked against the schema once, where they enter."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.config import schema, validate
from agents.config.errors import UsageError


def plain_value(value: Any) -> Any:
    """`value` as plain Python: numpy scalars and arrays become floats, ints, bools and lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


class CheckedValues(dict):
    """Config values each checked by the schema where they entered (`--set`, `agents.train`'s
    keywords): `Config.build` sets them without checking them again."""


def checked(values: Mapping[str, Any]) -> CheckedValues:
    """`values` as `CheckedValues`: as they are if they are, else each checked now.

    Raises:
        UsageError: As `apply_values`.
    """
    if isinstance(values, CheckedValues):
        return values
    return CheckedValues(apply_values({}, values))


def apply_values(config: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with `values` set, each checked by the schema (numpy scalars accepted).

    Raises:
        UsageError: A key the schema lacks (naming the closest one), or a value it refuses
            (naming the key, the value and what is accepted).
    """
    config = dict(config)
    for key, value in values.items():
        if key not in schema.KEYS:
            raise UsageError(f"Unknown config key {key!r}{_hint(key)}.")
        value = plain_value(value)
        try:
            config[key] = validate.check_value(key, value)
        except ValueError as error:
            raise UsageError(f"{key}={value!r}: {error}") from None
    return config


def parse_overrides(overrides: list[str] | None) -> CheckedValues:
    """`--set`'s `key=value` texts as a dict of checked values (a later key wins).

    Values are Python literals; a bare word (an env id, a network name) is a string.

    Raises:
        UsageError: For an override that is no `key=value`, names an unknown key, or has a
            value of the wrong type or out of range; the message says what is accepted.
    """
    values = CheckedValues()
    for override in overrides or []:
        key, sep, text = override.partition("=")
        key = key.strip()
        if not sep or key not in schema.KEYS:
            hint = _hint(key) if sep else ""
            raise UsageError(
                f"Bad override {override!r}: expected key=value with a config key{hint}, one "
                f"of: {', '.join(schema.KEYS)}."
            )
        try:
            values[key] = validate.check_value(key, _literal(text.strip()))
        except ValueError as error:
            raise UsageError(f"Bad value in --set {override}: {error}") from None
    return values


def apply_overrides(config: Mapping[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    """`config` with `--set`'s `key=value` overrides applied (see `parse_overrides`)."""
    return {**config, **parse_overrides(overrides)}


def _hint(key: str) -> str:
    if key in schema.RETIRED:
        return f" (retired: {schema.RETIRED[key]})"
    close = difflib.get_close_matches(key, schema.KEYS, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # A bare word such as an env id or a network name.
