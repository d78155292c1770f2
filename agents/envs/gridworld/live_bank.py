"""A layout bank in one variable of byte rows, filled chunk by chunk while a run draws from it.

One row holds a layout whole (its rooms' rects, its points and their cells, the agent's
position and direction, the object to fetch), so a compiled call's snapshot of the variable
holds each row as written or not at all; a row not yet written keeps `UNWRITTEN` as its
direction, and a draw that meets one takes a layout of the first chunk instead.
"""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np
import tensorflow as tf

from agents.envs.gridworld import compact, layouts
from agents.envs.gridworld.growing import Growth

UNWRITTEN = 255  # The direction byte of a row no chunk has filled yet.
POINT_SLACK = 0.5  # Points a row holds beyond the first chunk's most, as a share of them.
BLOCK = 4096  # Draws within each block of this many layouts follow a seeded permutation.

_OPEN: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # One per bank per process.


class RowShape:
    """Where each field lies in a row of a bank with room for `rects` rects and `points`
    points: rects (x, y, w, h bytes), points (uint16, little-endian), their cells (4 bytes),
    pos (2), direction (1), target (2)."""

    def __init__(self, rects: int, points: int) -> None:
        self.rects, self.points = rects, points
        self.width = rects * 4 + points * 6 + 5

    def pack(self, chunk: dict[str, np.ndarray], cells: int) -> np.ndarray:
        """[n, width] uint8 rows of an encoded chunk (`compact.encode_chunk`) of a grid of
        `cells` cells."""
        count, rects = len(chunk["pos"]), chunk["rects"]
        most = min(chunk["points"].shape[1], self.points)  # Points lie first, padding after.
        points, held = chunk["points"][:, :most], chunk["cells"][:, :most]
        padded_rects = np.zeros([count, self.rects, 4], np.uint8)
        padded_rects[:, : rects.shape[1]] = rects
        where = np.full([count, self.points], cells, np.uint16)
        where[:, :most] = np.where(points >= 0, points, cells)
        values = np.zeros([count, self.points, 4], np.uint8)
        values[:, :most] = compact.unpack(np.where(points >= 0, held, 0))
        return np.concatenate(
            [
                padded_rects.reshape(count, -1),
                where.astype("<u2").view(np.uint8).reshape(count, -1),
                values.reshape(count, -1),
                chunk["pos"].astype(np.uint8).reshape(count, 2),
                chunk["direction"].astype(np.uint8).reshape(count, 1),
                chunk["target"].astype(np.uint8).reshape(count, 2),
            ],
            axis=1,
        )

    def fits(self, chunk: dict[str, np.ndarray]) -> bool:
        """Whether every layout of `chunk` fits a row."""
        most = int((chunk["points"] >= 0).sum(axis=1).max(initial=0))
        return chunk["rects"].shape[1] <= self.rects and most <= self.points

    def fields(self, rows: tf.Tensor) -> dict[str, tf.Tensor]:
        """Rows [B, width] as int32 fields: rects [B, R, 4], points [B, P], cells [B, P, 4],
        pos [B, 2], direction [B], target [B, 2]."""
        rows = tf.cast(rows, tf.int32)
        count, a, b = tf.shape(rows)[0], self.rects * 4, self.rects * 4 + self.points * 2
        c = b + self.points * 4
        pairs = tf.reshape(rows[:, a:b], [count, self.points, 2])
        return {
            "rects": tf.reshape(rows[:, :a], [count, self.rects, 4]),
            "points": pairs[..., 0] + 256 * pairs[..., 1],
            "cells": tf.reshape(rows[:, b:c], [count, self.points, 4]),
            "pos": rows[:, c : c + 2],
            "direction": rows[:, c + 2],
            "target": rows[:, c + 3 : c + 5],
        }


class LiveBank:
    """The layouts of a bank opened by `layouts.open_bank`, as variables a compiled call reads:
    `rows` [size, width] and `ready`, the layouts written so far. Chunks still to come are
    written by a thread of this process as worker processes make them (`growing`); only then
    do draws check that a row is written.

    Args:
        growth: The opened bank.
    """

    def __init__(self, growth: Growth) -> None:
        self.size = growth.size
        self.base = tf.constant(growth.base.astype(np.uint8))
        self.cells = int(np.prod(growth.base.shape[:2]))
        most = max(int((c["points"] >= 0).sum(axis=1).max(initial=0)) for c in growth.ready)
        rects = max(c["rects"].shape[1] for c in growth.ready)
        slack = 0 if growth.rest is None else max(2, int(np.ceil(most * POINT_SLACK)))
        self.shape = RowShape(rects, most + slack)
        rows = np.zeros([self.size, self.shape.width], np.uint8)
        rows[:, self.shape.width - 3] = UNWRITTEN
        filled = 0
        for chunk in growth.ready:
            rows[filled : filled + len(chunk["pos"])] = self.shape.pack(chunk, self.cells)
            filled += len(chunk["pos"])
        self.first = filled  # Written before any draw: a fallback for an unwritten row.
        self.rows = tf.Variable(rows, trainable=False, name="layout_rows")
        self.ready = tf.Variable(filled, dtype=tf.int64, trainable=False, name="layouts_ready")
        self.thread, self.growing = None, growth.rest is not None  # Fixed when calls trace.
        if self.growing:
            self.thread = threading.Thread(target=self._grow, args=(growth,), daemon=True)
            self.thread.start()

    def _grow(self, growth: Growth) -> None:
        filled, env_id = self.first, "the layout bank"
        try:
            for chunk in growth.rest():
                count = len(chunk["pos"])
                if filled is not None and self.shape.fits(chunk):
                    self.rows[filled : filled + count].assign(self.shape.pack(chunk, self.cells))
                    self.ready.assign(filled + count)  # After its rows: see the module's doc.
                    filled += count
                elif filled is not None:
                    print(
                        f"Layouts {filled:,} on of {env_id} hold more cells than a row of this "
                        f"run does; it draws from the first {filled:,} (the next run reads the "
                        "whole bank from the cache).",
                        file=sys.stderr,
                    )
                    filled = None
        except Exception as error:  # noqa: BLE001  (training goes on with what is built)
            print(f"{error} Training draws from the {int(self.ready):,} built.", file=sys.stderr)

    def wait(self) -> None:
        """Block until every chunk is written (tests, benchmarks)."""
        if self.thread is not None:
            self.thread.join()

    def draw(self, start: tf.Tensor, count: int, seed: tf.Tensor) -> tf.Tensor:
        """Bank indices of the `count` layouts drawn after `start` others: the next ones of the
        written layouts (all are drawn once before any is drawn again), in an order within each
        `BLOCK` that `seed` (an int64 scalar) permutes.

        In a bank whole when opened, each seed's walk also starts at a block of its own, so
        that batches of other seeds (the evaluation envs, other MPI ranks) do not draw the
        layouts this one draws at the same time; a growing bank's walks all start at its
        first layout, which is built first.
        """
        ready = self.ready.read_value()
        k = (start + tf.range(count, dtype=tf.int64)) % ready
        mixed = seed * 2654435761  # Knuth's multiplicative hash; wraps, as wanted.
        scale = tf.bitwise.bitwise_and(mixed, BLOCK - 1) * 2 + 1  # Odd: a bijection.
        offset = tf.bitwise.bitwise_and(tf.bitwise.right_shift(mixed, 20), BLOCK - 1)
        blocks = ready // BLOCK
        if not self.growing:  # A rotation by whole blocks: each layout still drawn once.
            first = tf.math.floormod(_mix(seed), tf.maximum(blocks, 1))
            k = tf.where(k < blocks * BLOCK, (k + first * BLOCK) % tf.maximum(blocks * BLOCK, 1), k)
        permuted = k // BLOCK * BLOCK + (k % BLOCK * scale + offset) % BLOCK
        whole = k < blocks * BLOCK  # The last block of an odd size keeps its order.
        return tf.where(whole, permuted, k)

    def fields(self, index: tf.Tensor) -> dict[str, tf.Tensor]:
        """The fields (`RowShape.fields`) of layouts `index` [B]; a row not yet written in this
        call's view of the variable is replaced by a layout of the first chunk."""
        rows = tf.gather(self.rows, index)
        if self.growing:  # A bank whole when opened (the cache's) needs no check.
            unwritten = rows[:, self.shape.width - 3] == UNWRITTEN
            rows = tf.where(unwritten[:, None], tf.gather(self.rows, index % self.first), rows)
        return self.shape.fields(rows)


def _mix(seed: tf.Tensor) -> tf.Tensor:
    """An int64 hash of `seed` whose every bit depends on all of the seed's (splitmix64's
    finalizer; its constants as signed int64): seeds 0, 1, 2 land far apart."""
    z = seed * -7046029254386353131  # 0x9E3779B97F4A7C15
    z = tf.bitwise.bitwise_xor(z, tf.bitwise.right_shift(z, 30)) * -4658895280553007687
    return tf.bitwise.bitwise_xor(z, tf.bitwise.right_shift(z, 31))


def shared(env_id: str, size: int, seed: int) -> LiveBank:
    """The live bank of `env_id`, `size` and `seed` in this process (a training and an
    evaluation env read one), opened if none is."""
    key = (env_id, size, seed, str(layouts.cache_dir()))
    bank = _OPEN.get(key)
    if bank is None:
        bank = LiveBank(layouts.open_bank(env_id, size, seed))
        _OPEN[key] = bank
    return bank
