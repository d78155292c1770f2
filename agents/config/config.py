"""Config: a run's configuration, checked once where it enters and immutable after.

The command line (`--set`), `agents.train`, a `Trainer` and a resumed run's config.yaml each
build one; every layer below reads its attributes (`config.learning_rate`) or items and checks
nothing again. Plain Python, so a bad value is one `UsageError` before TensorFlow loads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agents.config import schema, validate, values
from agents.config.errors import UsageError


class Config(Mapping[str, Any]):
    """Every schema key with a checked value; read-only, by attribute or by item.

    Build one with `Config.build`; `replace` gives a changed copy, checked in the same way.
    Pickles (MPI ranks receive rank 0's) and compares equal to a dict of the same items.
    """

    __slots__ = ("_values",)

    def __init__(self, checked: Mapping[str, Any], _token: object = None) -> None:
        if _token is not _BUILT:
            raise TypeError("Build a Config with Config.build(values), which checks them.")
        object.__setattr__(self, "_values", dict(checked))

    @classmethod
    def build(cls, config: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> Config:
        """Check `config` with `overrides` set over it, each value once, then the rules.

        Args:
            config: Every schema key (extra keys are kept unchecked); values not yet checked.
            overrides: Values to set; a `values.CheckedValues` (checked where it entered, e.g.
                by `--set` parsing) is not checked again.

        Raises:
            UsageError: A key is missing or unknown, a value is refused (naming key, value and
                what is accepted), or keys break a rule that ties them together.
        """
        if isinstance(config, Config):
            return config.replace(overrides or {})
        overrides = values.checked(overrides or {})
        unchecked = {key: value for key, value in config.items() if key not in overrides}
        known = {key: value for key, value in unchecked.items() if key in schema.KEYS}
        merged = {**unchecked, **values.apply_values({}, known), **overrides}
        _check_read(merged.get("agent"), overrides)
        return cls._with_rules(merged)

    def replace(self, overrides: Mapping[str, Any]) -> Config:
        """A copy with `overrides` set (checked unless a `values.CheckedValues`), rules checked.

        Raises:
            UsageError: As `build`.
        """
        overrides = values.checked(overrides)
        merged = {**self._values, **overrides}
        _check_read(merged["agent"], overrides)
        return self._with_rules(merged)

    @classmethod
    def _with_rules(cls, merged: dict[str, Any]) -> Config:
        missing = [key for key in schema.KEYS if key not in merged]
        if missing:
            raise UsageError(f"The config lacks the keys {', '.join(missing)}.")
        try:
            validate.check_rules(merged)
        except ValueError as error:
            raise UsageError(str(error)) from None
        return cls(merged, _BUILT)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"The config has no key {name!r}.") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"A Config is read-only: use config.replace({{{name!r}: ...}}).")

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Config({self._values!r})"

    def __reduce__(self):
        return (_unpickle, (self._values,))


_BUILT = object()  # Only `build`, `replace` and unpickling make a Config.


def _check_read(agent: str | None, overrides: Mapping[str, Any]) -> None:
    """Refuse a value set for a key that `agent` never reads: the run would silently ignore it
    (e.g. `bonus=noveld` on a plain `ppo` run trains plain PPO).

    Raises:
        UsageError: Naming the key, the agent and the agents that do read it.
    """
    for key in overrides:
        readers = schema.KEYS[key].agents if key in schema.KEYS else None
        if agent is not None and readers is not None and agent not in readers:
            raise UsageError(
                f"{key}={overrides[key]!r}: the {agent} agent does not read {key}, so the run "
                f"would ignore it; {' and '.join(readers)} "
                f"{'reads' if len(readers) == 1 else 'read'} it (agent={readers[0]})."
            )


def _unpickle(checked: dict[str, Any]) -> Config:
    return Config(checked, _BUILT)
