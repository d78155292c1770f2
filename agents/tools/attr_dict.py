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

    def __delattr__(self, name: str) -> None:
        # Attributes are keys; without this, `del obj._locked` would remove the lock itself.
        del self[name]

    def __setitem__(self, key: str, value: Any) -> None:
        self._check_unlocked(f"set key {key!r}")
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._check_unlocked(f"delete key {key!r}")
        super().__delitem__(key)

    # Every other mutating method of dict writes without calling __setitem__ or __delitem__, so
    # each checks the lock itself (even when it would change nothing, to be predictable).

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update like a dict; raises RuntimeError while locked."""
        self._check_unlocked("update")
        super().update(*args, **kwargs)

    def __ior__(self, other: Any) -> AttrDict:
        self._check_unlocked("update")
        return super().__ior__(other)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """Like dict.setdefault; raises RuntimeError while locked."""
        self._check_unlocked(f"set key {key!r}")
        return super().setdefault(key, default)

    def pop(self, key: str, *default: Any) -> Any:
        """Like dict.pop; raises RuntimeError while locked."""
        self._check_unlocked(f"delete key {key!r}")
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, Any]:
        """Like dict.popitem; raises RuntimeError while locked."""
        self._check_unlocked("pop an item")
        return super().popitem()

    def clear(self) -> None:
        """Like dict.clear; raises RuntimeError while locked."""
        self._check_unlocked("clear")
        super().clear()

    @property
    @contextlib.contextmanager
    def unlocked(self) -> Iterator[None]:
        """Context manager that allows writes inside its block."""
        super().__setattr__("_locked", False)
        try:
            yield
        finally:
            super().__setattr__("_locked", True)

    def __reduce__(self) -> tuple:
        # Rebuilt through __init__ (locked), as `copy.copy` and `copy.deepcopy` otherwise restore
        # the lock before the items and then fail to write them.
        return type(self), (dict(self),)

    def copy(self) -> AttrDict:
        """Shallow copy that keeps the type (and is locked)."""
        return type(self)(self)

    def to_dict(self) -> dict:
        """Plain nested dicts, for YAML serialization."""
        return {k: v.to_dict() if isinstance(v, AttrDict) else v for k, v in self.items()}

    def _check_unlocked(self, action: str) -> None:
        if self._locked:
            raise RuntimeError(
                f"Cannot {action}: the AttrDict is locked. Use `with obj.unlocked:` to modify it."
            )
