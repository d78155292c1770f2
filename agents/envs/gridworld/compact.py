"""Layouts of minigrid's generator in a few bytes each: what differs from the id's common grid.

A layout is the id's base grid (the cell most layouts hold at each position), the wall
rectangles of its rooms where rooms move (MultiRoom), and the cells that still differ, as
(position, palette entry) points; the agent's position and direction and the object to fetch
complete it. `decode` is the slow reference of the compiled reset's rendering (`MiniGridEnv`).
"""

from __future__ import annotations

import numpy as np
from gymnasium.utils import seeding

from agents.envs.gridworld.convert import make_minigrid, state_of
from agents.envs.gridworld.encoding import EMPTY_CELL, WALL

FIELDS = ("base", "palette", "rects", "points", "values", "pos", "direction", "target")
RECT_CELL = (WALL, 5, 0, 0)  # A room's wall as minigrid's `Wall()` encodes it (grey).
BASE_SAMPLE = 1024  # Layouts whose most common cell per position is the base.
CHUNK = 8192  # Layouts a worker encodes per task.


def _reset(env, seed: int) -> None:
    """minigrid's `reset(seed=seed)` without its first observation, which a bank does not keep
    (the layouts are equal: tests/envs/test_minigrid_layouts.py compares them)."""
    env.np_random, _ = seeding.np_random(seed)
    env.agent_pos, env.agent_dir = (-1, -1), -1
    env._gen_grid(env.width, env.height)
    env.carrying, env.step_count = None, 0


def rects_of(env) -> list[tuple[int, int, int, int]]:
    """The (x, y, width, height) of the rooms whose walls a layout draws: MultiRoom's list of
    placed rooms; other ids' walls lie in their base grid."""
    return [(*room.top, *room.size) for room in getattr(env, "rooms", None) or []]


def pack(cells: np.ndarray) -> np.ndarray:
    """Cells [..., 4] of bytes as one integer each."""
    cells = cells.astype(np.int64)
    return cells[..., 0] << 24 | cells[..., 1] << 16 | cells[..., 2] << 8 | cells[..., 3]


def unpack(packed: np.ndarray) -> np.ndarray:
    return np.stack([packed >> shift & 0xFF for shift in (24, 16, 8, 0)], -1).astype(np.uint8)


def base_of(grids: np.ndarray) -> np.ndarray:
    """[W, H, 4]: the cell most of `grids` [N, W, H, 4] hold at each position."""
    packed = pack(grids).reshape(len(grids), -1)
    base = np.empty(packed.shape[1], np.int64)
    for column in range(packed.shape[1]):
        values, counts = np.unique(packed[:, column], return_counts=True)
        base[column] = values[np.argmax(counts)]
    return unpack(base).reshape(grids.shape[1:])


def draw_rects(grid: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """`grid` [W, H, 4] with the borders of `rects` [R, 4] (x, y, w, h; w = 0 for none) walled."""
    grid = grid.copy()
    for x, y, w, h in rects:
        if w:
            grid[x : x + w, [y, y + h - 1]] = RECT_CELL
            grid[[x, x + w - 1], y : y + h] = RECT_CELL
    return grid


def encode_chunk(env_id: str, seeds: range, base: np.ndarray) -> dict[str, np.ndarray]:
    """Layouts of `seeds` as arrays padded to this chunk's most rects and points: rects, points
    (flat index; -1 for none), cells (packed), pos, direction, target."""
    env = make_minigrid(env_id)
    height = base.shape[1]
    rows = []
    for seed in seeds:
        _reset(env, seed)
        state, rects = state_of(env), np.asarray(rects_of(env), np.int64).reshape(-1, 4)
        if tuple(state["carried"]) != EMPTY_CELL or state["step_count"] != 0:
            raise ValueError(f"{env_id} starts carrying or stepped; a bank cannot hold it.")
        x, y = np.nonzero(np.any(state["grid"] != draw_rects(base, rects), axis=-1))
        rows.append((rects, x * height + y, pack(state["grid"][x, y]), state))
    most_rects = max(len(row[0]) for row in rows)
    most_points = max(len(row[1]) for row in rows)
    chunk = {
        "rects": np.zeros([len(rows), most_rects, 4], np.int64),
        "points": np.full([len(rows), most_points], -1, np.int64),
        "cells": np.zeros([len(rows), most_points], np.int64),
    }
    for k, (rects, points, cells, _) in enumerate(rows):
        chunk["rects"][k, : len(rects)] = rects
        chunk["points"][k, : len(points)] = points
        chunk["cells"][k, : len(cells)] = cells
    for key in ("pos", "direction", "target"):
        chunk[key] = np.stack([row[3][key] for row in rows])
    return chunk


def base_layout(env_id: str, sample: int, seed: int) -> np.ndarray:
    """[W, H, 4] int64: the cell most of the first `sample` layouts from `seed` hold at each
    position."""
    env = make_minigrid(env_id)
    grids = []
    for k in range(sample):
        _reset(env, seed + k)
        grids.append(state_of(env)["grid"])
    return base_of(np.stack(grids)).astype(np.int64)


def _pad(arrays: list[np.ndarray], fill: int) -> np.ndarray:
    """Chunks' arrays [n, k, ...] padded to the largest k with `fill` and joined."""
    most = max(array.shape[1] for array in arrays)
    return np.concatenate(
        [
            np.pad(
                a, [(0, 0), (0, most - a.shape[1])] + [(0, 0)] * (a.ndim - 2), constant_values=fill
            )
            for a in arrays
        ]
    )


def assemble(base: np.ndarray, chunks: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The bank's arrays from its encoded chunks."""
    points, cells = _pad([c["points"] for c in chunks], -1), _pad([c["cells"] for c in chunks], 0)
    palette = np.unique(np.append(cells[points >= 0], 0))
    if len(palette) > 256:
        raise ValueError(f"{len(palette)} distinct cells in one bank; its palette holds 256.")
    width, height = base.shape[:2]
    joined = {
        key: np.concatenate([c[key] for c in chunks]) for key in ("pos", "direction", "target")
    }
    return {
        "base": base.astype(np.uint8),
        "palette": unpack(palette),
        "rects": _pad([c["rects"] for c in chunks], 0).astype(np.uint8),
        # Past the grid where a layout has fewer points: such points change no cell.
        "points": np.where(points >= 0, points, width * height).astype(np.uint16),
        "values": np.searchsorted(palette, np.where(points >= 0, cells, 0)).astype(np.uint8),
        **{key: value.astype(np.uint8) for key, value in joined.items()},
    }


def decode(bank: dict[str, np.ndarray], index: int) -> dict[str, np.ndarray]:
    """Layout `index` of `bank` as `convert.state_of` gives it (the slow reference)."""
    grid = draw_rects(bank["base"], bank["rects"][index].astype(np.int64))
    width, height = grid.shape[:2]
    flat = grid.reshape(width * height, 4)
    for where, what in zip(bank["points"][index], bank["values"][index]):
        if where < width * height:
            flat[where] = bank["palette"][what]
    return {
        "grid": flat.reshape(grid.shape).astype(np.int32),
        "pos": bank["pos"][index].astype(np.int32),
        "direction": np.asarray(bank["direction"][index], np.int32),
        "carried": np.asarray(EMPTY_CELL, np.int32),
        "step_count": np.asarray(0, np.int32),
        "target": bank["target"][index].astype(np.int32),
    }
