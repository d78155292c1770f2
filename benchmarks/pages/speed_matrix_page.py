"""docs/results/speed_matrix.md, from the records of the speed matrix's newest whole sitting and
the partial sittings (a few families measured again) after it."""

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
sitting of half the families or more; sittings of fewer after it are listed below its table) by
`--page`:

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


def _sittings(records: list[dict]) -> list[list[dict]]:
    """The records grouped by sitting (same `started`), oldest first."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        if "started" in record:
            groups.setdefault(record["started"], []).append(record)
    return [groups[started] for started in sorted(groups)]


def _families(rows: list[dict]) -> set[str]:
    return {record["family"] for record in rows}


def _pairs(rows: list[dict]) -> list[tuple[dict, dict | None]]:
    """Each record of the measured checkout with the other checkout's record of its pair: the
    k-th of a family with the k-th of it (a sitting may measure a family several times; each
    pair ran side by side)."""
    others: dict[str, list[dict]] = {}
    for record in rows:
        if record["against"]:
            others.setdefault(record["family"], []).append(record)
    pairs, taken = [], {}
    for record in rows:
        if not record["against"]:
            family = record["family"]
            k = taken[family] = taken.get(family, -1) + 1
            found = others.get(family, [])
            pairs.append((record, found[k] if k < len(found) else None))
    return pairs


def _partial_lines(partial: list[list[dict]], machine: str) -> list[str]:
    """One line per later partial sitting: its families' figures and ratios to the other tree,
    and its machine where it is not `machine` (the table's)."""
    if not partial:
        return []
    lines = ["", "Families measured again after it (a partial sitting each):", ""]
    for rows in partial:
        figures = []
        for record, against in _pairs(rows):
            figure = f"`{record['family']}` {record['steps_per_second']:,.0f}"
            if against:
                ratio = record["steps_per_second"] / against["steps_per_second"]
                figure += f" ({ratio:.2f}x {against['commit']})"
            figures.append(figure)
        first = next(record for record in rows if not record["against"])
        where = f", {first['machine']}" if first["machine"] != machine else ""
        lines.append(
            f"- {first['started'][:16]}{where}, commit {first['commit']}, calls timed for "
            f"{first['seconds']:g} s: {', '.join(figures)}."
        )
    return lines


def whole_sitting(records: list[dict]) -> tuple[list[dict], list[list[dict]]]:
    """The newest sitting that measured half the families or more (of the sitting that measured
    most), and the partial sittings after it, oldest first."""
    sittings = _sittings(records)
    most = max((len(_families(rows)) for rows in sittings), default=0)
    whole = [index for index, rows in enumerate(sittings) if 2 * len(_families(rows)) >= most]
    if not whole:
        return [], []
    return sittings[whole[-1]], sittings[whole[-1] + 1 :]


def page(records: list[dict]) -> str:
    """The page's Markdown: the newest whole sitting's table of the measured checkout, and the
    partial sittings after it."""
    rows, partial = whole_sitting(records)
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
    return "\n".join(
        [_INTRO, header, "", *lines, *_partial_lines(partial, first["machine"]), _FAMILIES]
    )
