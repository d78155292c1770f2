"""The results pages' plots: drawn from records, each PNG stamped with a digest of what it shows.

A plot is stale when its file's stamp differs from the digest of the records it is drawn from and
of the source of the functions that draw it (records changed, or the drawing code, and the plot
was not redrawn, or it was drawn from others); `python -m benchmarks.pages` redraws only those, so
a PNG changes in git when what it shows does, and tests/test_pages.py fails on a stale one as it
does on a stale page.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from typing import Any, NamedTuple

KEY = "Records"  # The PNG text chunk that holds the stamp.


class Plot(NamedTuple):
    """One PNG of a results page and how to draw it."""

    path: str  # Where it is written.
    data: Any  # What it shows (JSON-serializable): the records it is drawn from.
    render: Callable[[], str]  # Writes `path` from `data` (through `save`); returns `path`.
    code: tuple[Callable, ...] = ()  # The functions that draw it (`render` calls them).

    def draw(self) -> str:
        """Writes the PNG and stamps it with its digest; returns its path."""
        path = self.render()
        _write_stamp(path, digest(self.data, self.code))
        return path


def digest(data: Any, code: tuple[Callable, ...] = ()) -> str:
    """A short digest of `data` and of the source of the functions `code`, equal on every
    machine for equal records drawn by equal code."""
    text = json.dumps(data, sort_keys=True, default=str)
    text += "".join(inspect.getsource(function) for function in code)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def save(figure: Any, path: str) -> str:
    """Writes a matplotlib `figure` to `path` as a PNG; returns `path`."""
    figure.savefig(path, dpi=100)
    return path


def _write_stamp(path: str, value: str) -> None:
    from PIL import Image, PngImagePlugin

    with Image.open(path) as image:
        pixels = image.copy()
    info = PngImagePlugin.PngInfo()
    info.add_text(KEY, value)
    pixels.save(path, pnginfo=info)


def stamp(path: str) -> str | None:
    """The digest a PNG was stamped with; None for a missing or unstamped file."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return getattr(image, "text", {}).get(KEY)
    except FileNotFoundError:
        return None


def stale(plots: list[Plot]) -> list[Plot]:
    """The plots whose file is not stamped with their records' and drawing code's digest."""
    return [plot for plot in plots if stamp(plot.path) != digest(plot.data, plot.code)]
