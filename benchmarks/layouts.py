"""Native MiniGrid's resets against minigrid's generator: distinct layouts and where things fall.

For each id, `--draws` native resets (`MiniGridEnv.initial_state`, one call) with each of
`--seeds` seeds, drawn at points spread over a run (the first from the bank's start, the last
across its end, where draws start over), are counted for distinct layouts (grid, agent position
and direction), beside
minigrid's own `reset(seed=...)` over as many runs of fresh seeds. Where walls, doors, keys,
balls, boxes, goals, lava and the agent fall is compared cell by cell between the native draws
and minigrid's: the largest z-score of a cell's frequency (two samples of `--draws`). The bank is
built whole first where the cache holds none (its seconds are recorded then).

Every run appends one JSON line per id to `benchmarks/results/layouts.jsonl` (date, commit,
machine, load) and prints the table; `--page` rewrites `docs/results/layouts.md` from the records
of its newest run.

Run: `python -m benchmarks.layouts [--draws 2000] [--seeds 5] [--ids ...] [--page]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from benchmarks import common
from benchmarks.pages import layouts_page

KINDS = range(2, 10)  # wall, floor, door, key, ball, box, goal, lava.


def _key(grid: np.ndarray, pos: np.ndarray, direction) -> bytes:
    return grid.astype(np.uint8).tobytes() + pos.astype(np.int32).tobytes() + bytes([direction])


def _occupancy(grids: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """[kinds + 1, W, H]: per cell, how often each object lies there and the agent starts there."""
    agent = np.zeros(grids.shape[1:3])
    np.add.at(agent, (positions[:, 0], positions[:, 1]), 1.0 / len(positions))
    return np.stack([*((grids[..., 0] == kind).mean(axis=0) for kind in KINDS), agent])


def largest_z(first: np.ndarray, second: np.ndarray, count: int) -> float:
    """The largest |z| of two samples' cell frequencies (pooled; cells both samples never or
    always hold are skipped)."""
    pooled = (first + second) / 2
    spread = np.sqrt(pooled * (1 - pooled) * 2 / count)
    varying = spread > 0
    return float(np.max(np.abs(first - second)[varying] / spread[varying], initial=0.0))


def measure(env_id: str, draws: int, seeds: int) -> dict:
    """Distinct layouts in `draws` resets per seed, native and minigrid's, and the statistics."""
    from agents.runtime import tf_loading

    tf_loading.import_tensorflow(onednn=False)
    import tensorflow as tf

    from agents.envs.gridworld import convert, layouts
    from agents.envs.gridworld.convert import state_of
    from agents.envs.gridworld.env import MiniGridEnv

    size = layouts.default_size(env_id)
    cached = layouts.path_of(env_id, size, 0).exists()
    start = time.perf_counter()
    env = MiniGridEnv(env_id)
    env._live.wait()  # Every layout built: draws at any point of a run.
    built = None if cached else time.perf_counter() - start
    native, occupancy = [], None
    starts = [seed * size // seeds for seed in range(seeds - 1)] + [size - draws // 2]
    for seed, drawn in enumerate(starts):
        env._drawn.assign(drawn)
        state = env.initial_state(draws, tf.constant([seed, 0], tf.int64))
        grid, pos, direction = state.grid.numpy(), state.pos.numpy(), state.direction.numpy()
        native.append(len({_key(grid[k], pos[k], direction[k]) for k in range(draws)}))
        occupancy = _occupancy(grid, pos) if occupancy is None else occupancy
    original, own, fresh = convert.make_minigrid(env_id), [], []
    for run in range(seeds):
        keys = set()
        for seed in range(10**9 + run * draws, 10**9 + (run + 1) * draws):
            original.reset(seed=seed)
            state = state_of(original)
            keys.add(_key(state["grid"], state["pos"], int(state["direction"])))
            fresh.append(state) if run == 0 else None
        own.append(len(keys))
    reference = _occupancy(
        np.stack([s["grid"] for s in fresh]), np.stack([s["pos"] for s in fresh])
    )
    bank_bytes = env._live.rows.numpy().nbytes
    return {
        "bank": size,
        "bytes_per_layout": bank_bytes / size,
        "build_seconds": built,
        "native_distinct": native,
        "minigrid_distinct": own,
        "largest_z": largest_z(occupancy, reference, draws),
    }


def main(argv: list[str] | None = None) -> int:
    from agents.envs.registry import MINIGRID_IDS

    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--ids", nargs="+", default=list(MINIGRID_IDS))
    parser.add_argument("--page", action="store_true", help="Rewrite the results page.")
    args = parser.parse_args(argv)
    sitting = common.new_sitting()
    for env_id in args.ids:
        result = measure(env_id, args.draws, args.seeds)
        common.append_record(
            layouts_page.RECORDS, sitting, env_id=env_id, draws=args.draws, **result
        )
        print(
            f"{env_id}: native {statistics.median(result['native_distinct'])}, minigrid "
            f"{statistics.median(result['minigrid_distinct'])} distinct of {args.draws}",
            file=sys.stderr,
        )
    print(f"{common.machine_line()} | commit {sitting['commit']}\n")
    print(layouts_page.table(common.sitting(common.read_records(layouts_page.RECORDS))))
    if args.page:
        with open(layouts_page.PAGE, "w", encoding="utf-8") as file:
            file.write(layouts_page.page(common.read_records(layouts_page.RECORDS)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
