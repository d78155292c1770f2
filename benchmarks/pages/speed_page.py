"""docs/results/speed.md, from the records of the comparison with Stable-Baselines3 (vs_sb3.py)."""

from __future__ import annotations

import os

from benchmarks import common
from benchmarks.pages import claims

PAGE = os.path.join(common.ROOT, "docs", "results", "speed.md")
RECORDS = os.path.join(common.RESULTS, "vs_sb3.jsonl")

_INTRO = """# Speed against Stable-Baselines3

Whole processes, from the command to its exit, as a user meets them: Stable-Baselines3's PPO with
RL-Zoo's tuned settings as its `hyperparams/ppo.yml` gives them, on one and on two torch threads,
and ours (`python -m agents.scripts.train --config=<task> --set train_steps=<budget>`, on both
cores, its evaluation phases, final checkpoint, learning curve and policy export included) twice:
cold, from an empty XLA compile cache (a user's first run of a config, which compiles
everything), and warm, on the cache the cold run filled (the next run). The four alternate in
each round, on the same budget and seed. Afterwards, untimed, each run's deterministic policy
plays 20 fresh episodes. SB3's figure is its faster thread setting's. Generated from
`benchmarks/results/vs_sb3.jsonl` by:

```sh
python -m benchmarks.vs_sb3 --sb3-python /path/to/sb3/bin/python --tasks pendulum cartpole \\
    --rounds 5 --page
```
"""

_AFTER = """
## The compiled hot path

```sh
python -m benchmarks.speed [--tasks pendulum cartpole] [--calls 8] [--xla-cache]
```

prints, per task, the seconds to import TensorFlow and the package, to build the training
session, to the end of the first training call (tracing and compiling included), tracing alone,
the rollout step and the gradient step in milliseconds, and the env steps per second of steady
training calls. Each task runs in fresh processes, as a training run does. The current
training-call throughput of every agent family is on the [Speed matrix](speed_matrix.md).
"""


def _runs(rows: list[dict], task: str, side: str, key: str, value) -> list[dict]:
    """The runs of `task` by `side` whose `key` is `value`; a record without `key` is refused
    (it predates the setting, and a figure must not claim what its record does not say)."""
    runs = [row for row in rows if row["task"] == task and row["side"] == side]
    for run in runs:
        if key not in run:
            raise claims.ClaimError(
                f"vs_sb3 record of {task} round {run['round']} ({run['date']}) has no {key!r}; "
                "run python -m benchmarks.vs_sb3 again"
            )
    return [run for run in runs if run[key] == value]


def walls(rows: list[dict]) -> dict[str, dict]:
    """Task -> median wall seconds over the sitting's rounds: `sb3` (its faster thread setting),
    `threads` (which), `cold` and `warm` (ours)."""
    found = {}
    for task in dict.fromkeys(row["task"] for row in rows):
        sb3 = {
            count: claims.median(
                [run["seconds"] for run in _runs(rows, task, "sb3", "threads", count)],
                f"SB3's wall time on {threads(count)}, {task}",
            )
            for count in (1, 2)
        }
        fastest = min(sb3, key=sb3.get)
        found[task] = dict(sb3=sb3[fastest], threads=fastest)
        for cache in ("cold", "warm"):
            seconds = [run["seconds"] for run in _runs(rows, task, "ours", "cache", cache)]
            found[task][cache] = claims.median(seconds, f"our {cache} wall time, {task}")
    return found


def threads(count: int) -> str:
    return f"{count} torch thread{'s' if count > 1 else ''}"


def rounds(rows: list[dict]) -> int:
    return len({row["round"] for row in rows})


def table(rows: list[dict]) -> str:
    """One line per run, a round's four together, then each task's medians and ratios."""
    lines = [
        "| task | round | run | env steps | wall s | eval (20 ep.) |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        sb3 = row["side"] == "sb3"
        run = f"SB3, {threads(row['threads'])}" if sb3 else f"ours, {row['cache']}"
        lines.append(
            f"| {row['task']} | {row['round']} | {run} | {row.get('env_steps', 0):,} | "
            f"{row['seconds']:.1f} | {row['eval_mean']:.1f} ± {row['eval_std']:.1f} |"
        )
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    parts = []
    for task, wall in walls(rows).items():
        parts.append(
            f"{task}: medians over {rounds(rows)} rounds, SB3 {wall['sb3']:.1f} s (on "
            f"{threads(wall['threads'])}, its faster), ours {wall['warm']:.1f} s warm and "
            f"{wall['cold']:.1f} s cold: SB3 takes {wall['sb3'] / wall['warm']:.2f}x our warm "
            f"and {wall['sb3'] / wall['cold']:.2f}x our cold wall time"
        )
    return ";\n".join(parts) + "."


def page(records: list[dict]) -> str:
    rows = common.sitting(records)
    if not rows:
        return _INTRO + "\nNo sitting recorded yet.\n" + _AFTER
    loads = [row["load"] for row in rows]
    header = (
        f"{rows[0]['date']} to {rows[-1]['date']} | {rows[0]['machine']} | commit "
        f"{rows[0]['commit']} | load {min(loads):.1f}-{max(loads):.1f}"
    )
    return "\n".join([_INTRO, header, "", table(rows), "", summary(rows), _AFTER])
