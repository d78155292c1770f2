"""A layout bank built while a run draws from it: its first layouts before training starts, the
rest by worker processes in the background, handed over chunk by chunk in order."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

from agents.envs.gridworld import building, compact
from agents.envs.gridworld.build_progress import BuildProgress
from agents.runtime import exit_cleanup


class Growth(NamedTuple):
    """A bank of `size` layouts being opened: what is ready now and how the rest arrives.

    Attributes:
        base: [W, H, 4] the bank's base grid (`compact.base_of`).
        ready: Encoded chunks (`compact.encode_chunk`'s dicts) of the first layouts, in order.
        size: Layouts in the whole bank.
        rest: None when `ready` holds the whole bank; else a function whose iterator yields the
            remaining chunks in order as worker processes make them (and caches the whole bank
            once all are in).
    """

    base: np.ndarray
    ready: list[dict[str, np.ndarray]]
    size: int
    rest: Callable[[], Iterator[dict[str, np.ndarray]]] | None


def chunk_of(bank: dict[str, np.ndarray], stop: int) -> dict[str, np.ndarray]:
    """The first `stop` layouts of an assembled bank as one encoded chunk (points -1 for none,
    cells packed as `compact.encode_chunk` gives them)."""
    width, height = bank["base"].shape[:2]
    points = bank["points"][:stop].astype(np.int64)
    cells = compact.pack(bank["palette"][bank["values"][:stop].astype(np.int64)])
    none = points >= width * height
    return {
        "rects": bank["rects"][:stop].astype(np.int64),
        "points": np.where(none, -1, points),
        "cells": np.where(none, 0, cells),
        **{key: bank[key][:stop].astype(np.int32) for key in ("pos", "direction", "target")},
    }


def build_rest(
    env_id: str,
    seed: int,
    growth: Growth,
    start: int,
    cache: Callable[[dict[str, np.ndarray]], None],
) -> Iterator[dict[str, np.ndarray]]:
    """The chunks of layouts `start` to `growth.size` in order, made by one worker process per
    core, with progress lines on stdout; `cache` gets the whole bank once all are in, or the
    layouts built so far should the process exit first (a later run goes on from them).

    Workers and their folder go when the iterator ends, is closed, or the process exits (an
    exit handler; a worker whose builder is killed exits by itself, `building._work`).
    """
    tasks = [
        range(seed + a, seed + min(a + compact.CHUNK, growth.size))
        for a in range(start, growth.size, compact.CHUNK)
    ]
    folder = tempfile.mkdtemp(prefix="agents-layouts-")
    processes, chunks, lock = [], list(growth.ready), threading.Lock()

    def end(at_exit: bool = False) -> None:
        with lock:
            building.end_workers(processes)
            shutil.rmtree(folder, ignore_errors=True)
            if at_exit and len(chunks) > len(growth.ready):
                cache(compact.assemble(growth.base, chunks))
            chunks.clear()  # Once: the exit handler and the iterator's end may both come.

    at_exit = functools.partial(end, True)  # One object: `unregister` compares by identity.
    exit_cleanup.register(at_exit)
    try:
        np.save(os.path.join(folder, "base.npy"), growth.base)
        processes += building.start_workers(env_id, folder, tasks)
        progress = BuildProgress(env_id, growth.size)
        progress.start(len(processes), first=start)
        for seeds in tasks:
            path = os.path.join(folder, f"{seeds.start}.npz")
            while not os.path.exists(path):
                if all(process.poll() is not None for process in processes):
                    building.check_workers(env_id, processes)
                    raise ValueError(f"The layout bank of {env_id} lost chunk {seeds.start}.")
                progress.update(seeds.start - seed)
                time.sleep(0.5)
            with np.load(path) as stored, lock:
                chunks.append(dict(stored))
            os.remove(path)
            yield chunks[-1]
        progress.finish()
        with lock:
            cache(compact.assemble(growth.base, chunks))
    finally:
        exit_cleanup.unregister(at_exit)
        end()
