"""The results pages' plots: drawn from records, each PNG stamped with a digest of what it shows.

A plot is stale when its file's stamp differs from the digest of the records it is drawn from
(records changed and the plot was not redrawn, or it was drawn from others); `python -m
benchmarks.pages` redraws only those, so a PNG changes in git when what it shows does, and
tests/test_pages.py fails on a stale one as it does on a stale page.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, NamedTuple

KEY = "Records"  # The PNG text chunk that holds the stamp.


class Plot(NamedTuple):
    """One PNG of a results page and how to draw it."""

    path: str  # Where it is written.
    data: Any  # What it shows (JSON-serializable): the records it is drawn from.
    draw: Callable[[], str]  # Draws `path` from `data` (through `save`); returns `path`.


def digest(data: Any) -> str:
    """A short digest of `data` that equals on every machine for equal records."""
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def stamped(data: Any) -> dict[str, str]:
    """The PNG metadata that stamps a plot drawn from `data`."""
    return {KEY: digest(data)}


def save(figure: Any, path: str, data: Any) -> str:
    """Writes a matplotlib `figure` to `path` (PNG) stamped with the digest of `data`."""
    figure.savefig(path, dpi=100, metadata=stamped(data))
    return path


def stamp(path: str) -> str | None:
    """The digest a PNG was stamped with; None for a missing or unstamped file."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return getattr(image, "text", {}).get(KEY)
    except FileNotFoundError:
        return None


def stale(plots: list[Plot]) -> list[Plot]:
    """The plots whose file does not show their records."""
    return [plot for plot in plots if stamp(plot.path) != digest(plot.data)]
