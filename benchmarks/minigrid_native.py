"""Native MiniGrid alone: random actions, env steps/s of the TensorFlow-ops engine and minigrid's.

For each id, `--envs` native environments (symbolic 7x7 view) take `--steps` batch steps of
uniformly random actions inside one XLA program (finished episodes restart from the layout bank
in the same program); the figure is the median of `--repeats` calls after a compiling one. The
last column is minigrid's own env stepped in a Python loop with the same random actions (one env,
its `step` with observation), for scale.

Every run appends one JSON line per id to `benchmarks/results/minigrid_native.jsonl` (date,
commit, machine, load) and prints the table; `--page` rewrites `docs/results/minigrid_native.md`
from the records of its newest run.

Run: `python -m benchmarks.minigrid_native [--envs 1024] [--steps 100] [--repeats 5]
[--ids MiniGrid-DoorKey-8x8-v0 ...] [--page]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from benchmarks import common
from benchmarks.pages import minigrid_native_page

IDS = (
    "MiniGrid-DoorKey-8x8-v0",
    "MiniGrid-DoorKey-16x16-v0",
    "MiniGrid-KeyCorridorS3R3-v0",
    "MiniGrid-MultiRoom-N4-S5-v1",
)


def native(env_id: str, envs: int, steps: int, repeats: int) -> dict:
    """Median env steps/s of `envs` native envs over `repeats` calls of `steps` batch steps."""
    result = common.native_random_steps(env_id, envs, steps, repeats)
    return {key: result[key] for key in ("steps_per_second", "compile_seconds")}


def python_loop(env_id: str, steps: int) -> float:
    """Env steps/s of minigrid's env stepped with random actions in a Python loop."""
    from agents.envs.gridworld.convert import make_minigrid

    env = make_minigrid(env_id)
    env.reset(seed=0)
    actions = __import__("numpy").random.default_rng(0).integers(0, 7, steps)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ids", nargs="+", default=list(IDS))
    parser.add_argument("--page", action="store_true", help="Rewrite the results page.")
    args = parser.parse_args(argv)
    host, revision = common.machine(), common.commit()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    rows = []
    for env_id in args.ids:
        result = native(env_id, args.envs, args.steps, args.repeats)
        reference = python_loop(env_id, 5_000)
        record = dict(
            started=started,
            date=time.strftime("%Y-%m-%d %H:%M"),
            commit=revision,
            machine=host,
            load=os.getloadavg()[0],
            env_id=env_id,
            envs=args.envs,
            steps=args.steps,
            minigrid_python_steps_per_second=reference,
            **result,
        )
        with open(minigrid_native_page.RECORDS, "a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")
        rows.append(record)
        print(f"{env_id}: {result['steps_per_second']:,.0f} env steps/s", file=sys.stderr)
    print(f"{common.machine_line()} | commit {revision}\n")
    print(minigrid_native_page.table(rows))
    if args.page:
        records = common.read_records(minigrid_native_page.RECORDS)
        with open(minigrid_native_page.PAGE, "w", encoding="utf-8") as file:
            file.write(minigrid_native_page.page(records) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
