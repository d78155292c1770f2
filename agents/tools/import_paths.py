"""`module:name` paths, as a user writes them in an env id (`my_envs:Maze-v0`) or a config value
(`my_nets:build`): the module is imported, the name is looked up by the caller."""

from __future__ import annotations

import importlib
from types import ModuleType


def import_path(path: str) -> tuple[ModuleType | None, str]:
    """The module a `module:name` path names, imported, and the name; (None, path) for a path
    without a module.

    Raises:
        ImportError: The module cannot be imported.
    """
    module, _, name = path.rpartition(":")
    if not module:
        return None, path
    return importlib.import_module(module), name  # A user's module, named only in the path.
