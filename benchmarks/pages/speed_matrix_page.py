"""docs/results/speed_matrix.md, from the records of the speed matrix's newest sitting."""

from __future__ import annotations

import os

from benchmarks import common

PAGE = os.path.join(common.ROOT, "docs", "results", "speed_matrix.md")
RECORDS = os.path.join(common.RESULTS, "speed_matrix.jsonl")

_INTRO = """# Speed matrix

Env steps per second of steady training calls (a whole rollout and the update after it) for
every agent family, each in a fresh process; the 2-rank family counts the env steps of both
ranks. `first call s` is the first training call, tracing and compiling included (XLA's
persistent cache off). Generated from `benchmarks/results/speed_matrix.jsonl` (the newest
sitting) by `--page`:

```sh
python -m benchmarks.speed_matrix --quick --page
```

(`--against CHECKOUT` measures another checkout alternately, one process at a time, and prints
the ratios; the page shows this checkout's figures.)
"""

_FAMILIES = """
The 4 s figures (`--quick`) spread by 10-20% between sittings on a 2-core machine.

`cartpole_native` is CartPole as TensorFlow ops ([native environments](native.md)): a call is 8
rollouts of 16 steps on 64 envs with their updates, one XLA program. `minigrid_native_rnd` is
`doorkey16_rnd`: RND on native MiniGrid's symbolic view, 4 rollouts of 128 steps on 128 envs,
intrinsic rewards, the predictor's and PPO's updates, one XLA program.
`minigrid_native_pixels` is `minigrid_rnd` with `native_env=True`: the same CNN+GRU pixel agent
on MiniGrid frames rendered as ops, 128 steps of 16 envs and the update, one XLA program (the
`tiles8` convolutions as matrix products over their patches); in `minigrid_rnd` MiniGrid's own
Python step and partial-view rendering take much of the call. `montezuma_rnd`'s update runs in
graph mode (oneDNN's convolutions of the Atari stack are faster than XLA's on a CPU).
A family missing from the table could not run on the machine (e.g. `cheetah` without the
`mujoco` extra).
"""


def page(records: list[dict]) -> str:
    """The page's Markdown: the newest sitting's table of the measured checkout."""
    rows = common.sitting(records)
    measured = [record for record in rows if not record["against"]]
    if not measured:
        return _INTRO + "\nNo sitting recorded yet.\n"
    loads = [record["load"] for record in rows]
    first = measured[0]
    alternating = ", alternating with another checkout" if len(measured) < len(rows) else ""
    header = (
        f"{first['started'][:16]} | {first['machine']} | commit {first['commit']}{alternating}"
        f" | calls timed for {first['seconds']:g} s | load {min(loads):.1f}-{max(loads):.1f}"
    )
    columns = ["family", "env steps/s", "calls", "first call s", "load"]
    lines = ["| " + " | ".join(columns) + " |", "| --- |" + " ---: |" * (len(columns) - 1)]
    for record in measured:
        cells = [
            record["family"],
            f"{record['steps_per_second']:,.0f}",
            str(record["calls"]),
            f"{record['first_call_s']:.1f}",
            f"{record['load']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([_INTRO, header, "", *lines, _FAMILIES])
