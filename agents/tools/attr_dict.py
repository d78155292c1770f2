"""AttrDict: a dictionary with attribute access that is locked against accidental writes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class AttrDict(dict):
    """Dictionary with attribute access, locked on creation.

    A missing key reads as None, so optional configuration can be tested with `if config.key:`.
    Names of the form `__x__` are never treated as keys, so copy, pickle and introspection keep
    working. Writes raise until they happen inside `with obj.unlocked:`.

    Example:
        config = AttrDict(learning_rate=3e-4)
        with config.unlocked:
            config.num_agents = 16
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        super().__setattr__("_locked", True)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __setitem__(self, key: str, value: Any) -> None:
        self._check_unlocked(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._check_unlocked(key)
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update like a dict; raises RuntimeError while locked."""
        self._check_unlocked(next(iter(dict(*args, **kwargs)), "<update>"))
        super().update(*args, **kwargs)

    @property
    @contextlib.contextmanager
    def unlocked(self) -> Iterator[None]:
        """Context manager that allows writes inside its block."""
        super().__setattr__("_locked", False)
        try:
            yield
        finally:
            super().__setattr__("_locked", True)

    def copy(self) -> AttrDict:
        """Shallow copy that keeps the type (and is locked)."""
        return type(self)(self)

    def to_dict(self) -> dict:
        """Plain nested dicts, for YAML serialization."""
        return {k: v.to_dict() if isinstance(v, AttrDict) else v for k, v in self.items()}

    def _check_unlocked(self, key: str) -> None:
        if self._locked:
            raise RuntimeError(
                f"Cannot set key {key!r}: the AttrDict is locked. "
                "Use `with obj.unlocked:` to modify it."
            )
