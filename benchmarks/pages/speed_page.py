"""docs/results/speed.md, from the records of the comparison with Stable-Baselines3 (vs_sb3.py)."""

from __future__ import annotations

import os

from benchmarks import common
from benchmarks.pages import claims

PAGE = os.path.join(common.ROOT, "docs", "results", "speed.md")
RECORDS = os.path.join(common.RESULTS, "vs_sb3.jsonl")

_INTRO = """# Speed against Stable-Baselines3

Whole processes, from the command to its exit, as a user meets them: Stable-Baselines3's PPO
(RL-Zoo's tuned hyperparameters, with VecNormalize on Pendulum, which RL-Zoo's Pendulum settings
do not use; one torch thread) and ours (`python -m agents.scripts.train --config=<task> --set
train_steps=<budget>`, on both cores, its evaluation phases, final checkpoint, learning curve
and policy export included), alternating in one run on the same budget and seed. Ours reads
XLA's persistent compile cache, as a user's runs after their first of a config do; a first
run, which also compiles, is not measured here. Afterwards, untimed, each side's deterministic
policy plays 20 fresh episodes. Generated from `benchmarks/results/vs_sb3.jsonl` by:

```sh
python -m benchmarks.vs_sb3 --sb3-python /path/to/sb3/bin/python --tasks pendulum cartpole \\
    --rounds 2 --page
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


def ratios(records: list[dict]) -> dict[str, float]:
    """Task -> SB3's wall time over ours in the newest sitting: of the medians over rounds, or
    of the totals where the sitting has too few rounds for a median (see `measure`)."""
    rows = common.sitting(records)
    found = {}
    for task in dict.fromkeys(row["task"] for row in rows):
        wall = {}
        for side in ("sb3", "ours"):
            seconds = [r["seconds"] for r in rows if r["task"] == task and r["side"] == side]
            enough = len(seconds) >= claims.MEDIAN_AT_LEAST
            wall[side] = claims.median(seconds) if enough else sum(seconds)
        found[task] = wall["sb3"] / wall["ours"]
    return found


def measure(records: list[dict]) -> str:
    """What `ratios` compares, in words: "median wall time" or "total wall time of N rounds"."""
    rounds = len({row["round"] for row in common.sitting(records)})
    if rounds >= claims.MEDIAN_AT_LEAST:
        return "median wall time"
    return f"total wall time of {rounds} rounds"


def page(records: list[dict]) -> str:
    rows = common.sitting(records)
    if not rows:
        return _INTRO + "\nNo sitting recorded yet.\n" + _AFTER
    loads = [row["load"] for row in rows]
    header = (
        f"{rows[0]['date']} to {rows[-1]['date']} | {rows[0]['machine']} | commit "
        f"{rows[0]['commit']} | load {min(loads):.1f}-{max(loads):.1f}"
    )
    lines = [
        "| task | round | budget | env steps SB3 / ours | SB3 wall s | ours wall s | ratio "
        "SB3/ours | SB3 eval (20 ep.) | ours eval (20 ep.) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for task in dict.fromkeys(row["task"] for row in rows):
        mine = [row for row in rows if row["task"] == task]
        for seed in dict.fromkeys(row["round"] for row in mine):
            pair = {row["side"]: row for row in mine if row["round"] == seed}
            sb3, ours = pair["sb3"], pair["ours"]
            lines.append(
                f"| {task} | {seed} | {sb3['budget']:,} | {sb3.get('env_steps', 0):,} / "
                f"{ours['env_steps']:,} | {sb3['seconds']:.1f} | {ours['seconds']:.1f} | "
                f"{sb3['seconds'] / ours['seconds']:.2f}x | {sb3['eval_mean']:.1f} ± "
                f"{sb3['eval_std']:.1f} | {ours['eval_mean']:.1f} ± {ours['eval_std']:.1f} |"
            )
    summary = "; ".join(
        f"{task}: SB3 takes {ratio:.2f}x our {measure(rows)}"
        for task, ratio in ratios(rows).items()
    )
    return "\n".join([_INTRO, header, "", *lines, "", summary + ".", _AFTER])
