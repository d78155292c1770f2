"""XLA's persistent compilation cache: a run compiles the update once per machine, not per start.

Compiling the XLA update costs about 2 s of each start on a 2-core CPU. TensorFlow keeps compiled
clusters in the directory named by `--tf_xla_persistent_cache_directory` in `TF_XLA_FLAGS`,
which it reads when it loads, so this is set before TensorFlow is imported.
"""

from __future__ import annotations

import importlib.metadata
import os

FLAGS = "TF_XLA_FLAGS"
CACHE_FLAG = "--tf_xla_persistent_cache_directory"


def cache_directory() -> str:
    """`$XDG_CACHE_HOME/agents/xla-<TensorFlow version>` (default `~/.cache/...`).

    Per TensorFlow version: compiled code of one version is never offered to another.
    """
    try:
        version = importlib.metadata.version("tensorflow")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "agents", f"xla-{version}")


def enable(environ=os.environ) -> str | None:
    """Add the cache flag to `TF_XLA_FLAGS` unless the user set one; returns the directory.

    `AGENTS_XLA_CACHE=0` turns the cache off. Does nothing once TensorFlow is loaded.
    """
    if environ.get("AGENTS_XLA_CACHE") == "0" or CACHE_FLAG in environ.get(FLAGS, ""):
        return None
    directory = cache_directory()
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None  # E.g. a read-only home: compile every time, as without the cache.
    environ[FLAGS] = f"{environ.get(FLAGS, '')} {CACHE_FLAG}={directory}".strip()
    return directory
