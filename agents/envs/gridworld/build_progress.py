"""How long a layout bank takes to build: its progress lines, and its cost measured beforehand."""

from __future__ import annotations

import os
import sys
import time
from typing import NamedTuple, TextIO

EVERY_SECONDS = 10.0  # Between two progress lines of a build.


class BuildProgress:
    """The lines a bank's build prints on `out`: one when it starts, then one every
    `every` seconds with the layouts done, the time taken and the time left, and one at its end.

    Args:
        env_id: The bank's env id.
        size: Layouts in the bank.
        out: Where the lines go (the console's stdout, which training's lines share).
        every: Seconds between two lines.
    """

    def __init__(
        self, env_id: str, size: int, out: TextIO | None = None, every: float = EVERY_SECONDS
    ) -> None:
        self.env_id, self.size, self.every = env_id, size, every
        self._out = out
        self._started = time.monotonic()
        self._shown = self._started
        self._first = 0

    def start(self, processes: int, first: int = 0) -> None:
        """The first line: what is built, by how many processes, and where it will be kept;
        with `first`, that many layouts are built (or read) already and training starts while
        the rest are built."""
        self._started = self._shown = time.monotonic()
        self._first = first
        many = f"{processes} process{'es' if processes > 1 else ''}"
        if first:
            self._say(
                f"Building the layout bank of {self.env_id} while training starts: its first "
                f"{first:,} layouts are ready, the other {self.size - first:,} of {self.size:,} "
                f"come from minigrid's generator in {many} (cached for later runs)."
            )
            return
        self._say(
            f"Building the layout bank of {self.env_id}: {self.size:,} layouts from minigrid's "
            f"generator in {many} (cached for later runs)."
        )

    def update(self, done: int) -> None:
        """A line if `every` seconds passed since the last one."""
        now = time.monotonic()
        if now - self._shown >= self.every and done < self.size:
            self._shown = now
            self._say(self._line(done, now))

    def finish(self) -> None:
        self._say(self._line(self.size, time.monotonic()))

    def _line(self, done: int, now: float) -> str:
        elapsed = now - self._started
        line = (
            f"Layout bank of {self.env_id}: {done:,} of {self.size:,} layouts "
            f"({done / self.size:.0%}) in {duration(elapsed)}"
        )
        made = done - self._first  # Layouts this build made, at its rate.
        if made > 0 and done < self.size:
            line += f", about {duration(elapsed * (self.size - done) / made)} left"
        return line + "."

    def _say(self, line: str) -> None:
        out = self._out or sys.stdout
        print(line, file=out, flush=True)


class Cost(NamedTuple):
    """A bank's expected build time, from the generator's rate measured in this process."""

    seconds: float
    rate: float  # Layouts per second of one process.
    processes: int


def processes(size: int, parallel_from: int, chunk: int) -> int:
    """How many processes build a bank of `size` layouts (`compact`'s rule)."""
    if size < parallel_from:
        return 1
    return min(-(-size // chunk), os.cpu_count() or 1)


def cost(rate: float, size: int, base_sample: int, parallel_from: int, chunk: int) -> Cost:
    """The expected time to build a bank at `rate` layouts per second of one process (as
    `building.measure_rate` finds it here): its base sample in this process, then its layouts
    shared by its processes."""
    count = processes(size, parallel_from, chunk)
    return Cost(min(size, base_sample) / rate + size / (rate * count), rate, count)


def duration(seconds: float) -> str:
    """`seconds` as "42 s", "3 min 5 s" or "1 h 12 min"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
