"""Optional packages (setup.py's extras): imported by name where an env needs one, with one line
naming the install command where it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType


def install_hint(extra: str) -> str:
    """The command that installs the package's `extra` (of setup.py's extras_require)."""
    return f'pip install -e ".[{extra}]"'


def optional_package(module: str, extra: str, what: str) -> ModuleType:
    """The package `module` of setup.py's `extra`, imported on first use.

    Args:
        module: The package's import name, e.g. "minigrid".
        extra: The extra that installs it, e.g. "minigrid".
        what: What needs it, the start of the error message (e.g. an env id).

    Raises:
        ValueError: It is not installed: "<what> needs the <module> package: pip install ...".
    """
    try:
        return importlib.import_module(module)  # Optional: loaded only where something needs it.
    except ImportError:
        raise ValueError(f"{what} needs the {module} package: {install_hint(extra)}.") from None
