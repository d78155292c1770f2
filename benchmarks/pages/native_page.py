"""docs/results/native.md, from the native benchmark's records (`benchmarks/results/native.jsonl`).

Three kinds of sitting: the native runs over seeds (`python -m benchmarks.native --seeds 3`),
the same configs on gymnasium's envs beside them (`--gym`), and the steady state (`--steady`);
each section shows the newest sitting of its kind.
"""

from __future__ import annotations

import os
import statistics

from benchmarks import common
from benchmarks.pages import claims

PAGE = os.path.join(common.ROOT, "docs", "results", "native.md")
RECORDS = os.path.join(common.RESULTS, "native.jsonl")
# Published scores of tuned PPO on gymnasium's env, by source.
REFERENCE = {
    "CartPole-v1": "475 (gymnasium's reward threshold)",
    "Pendulum-v1": "-172.2 (RL-Zoo, 100k)",
    "Acrobot-v1": "-73.5 (RL-Zoo, 1M)",
    "MountainCar-v0": "-110.4 (RL-Zoo, 1M)",
    "MountainCarContinuous-v0": "88.3 (RL-Zoo, 20k)",
}

_INTRO = """# Native environments

Gymnasium's classic control tasks as TensorFlow ops (`native_env=True`, see [Native
environments](../native-envs.md)): each training call, rollouts and updates, is one XLA program.
Every run is a whole process, timed from the command to its exit as a user meets it (import,
XLA's compile or its cache, training, the evaluation phases, checkpoints, the learning curve and
the policy export); then, untimed, the exported policy plays 20 deterministic episodes of
**gymnasium's** env of the same id, so each score is the real env's. A sitting starts with an
empty XLA compile cache, so each config's first run compiles its training call, as a user's
first run does; the later seeds load it from the cache. Generated from
`benchmarks/results/native.jsonl` by the commands of each section (with `--page`).
"""


def newest(records: list[dict], kind: str) -> list[dict]:
    """The records of the newest sitting of `kind` ("native", "gym" or "steady")."""
    return common.sitting([record for record in records if record.get("kind") == kind])


def _head(rows: list[dict]) -> str:
    loads = [row["load"] for row in rows]
    dates = sorted(row["date"] for row in rows)
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]}-{dates[-1][11:]}"
    return (
        f"{span} | {rows[0]['machine']} | commit {rows[0]['commit']} | "
        f"load {min(loads):.1f}-{max(loads):.1f} (this benchmark's own processes)"
    )


def _run_table(rows: list[dict]) -> list[str]:
    lines = [
        "| config | envs | seed | env steps | process s | eval on gymnasium (20 ep.) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['config']} | {'native' if row['native'] else 'gymnasium'} | {row['seed']} | "
            f"{row['env_steps']:,} | {row['seconds']:.1f} | {row['mean']:.1f} ± {row['std']:.1f} |"
        )
    return lines


def _native_section(rows: list[dict]) -> list[str]:
    lines = ["## Over seeds", "", "```sh", "python -m benchmarks.native --seeds 3 --page", "```"]
    lines += ["", _head(rows), "", *_run_table(rows), ""]
    lines += [
        "| config | first run s (compiling) | later runs s | median eval | mean eval | worst eval "
        "| reference |",
        "|---|---|---|---|---|---|---|",
    ]
    for config in dict.fromkeys(row["config"] for row in rows):
        group = [row for row in rows if row["config"] == config]
        later = [row["seconds"] for row in group[1:]]
        span = f"{min(later):.1f}-{max(later):.1f}" if later else "-"
        scores = [row["mean"] for row in group]
        lines.append(
            f"| {config} | {group[0]['seconds']:.1f} | {span} | {claims.median(scores):.1f} "
            f"| {statistics.fmean(scores):.1f} | {min(scores):.1f} | "
            f"{REFERENCE.get(group[0]['env'], '')} |"
        )
    return lines


def _gym_section(rows: list[dict]) -> list[str]:
    lines = [
        "## On gymnasium's envs",
        "",
        "The same configs trained on gymnasium's own envs in Python (`--set native_env=False`),",
        "alternating with the native run of the same seed, both from an empty compile cache:",
        "",
        "```sh",
        "python -m benchmarks.native --seeds 1 --gym --page --configs cartpole_native "
        "pendulum_native \\",
        "    acrobot_native mountaincar_native mountaincar_continuous_native",
        "```",
        "",
        _head(rows),
        "",
        *_run_table(rows),
        "",
    ]
    ratios = []
    for config in dict.fromkeys(row["config"] for row in rows):
        native = [row["seconds"] for row in rows if row["config"] == config and row["native"]]
        gym = [row["seconds"] for row in rows if row["config"] == config and not row["native"]]
        if native and gym:
            ratios.append((statistics.fmean(gym) / statistics.fmean(native), config))
    if ratios:
        low, high = min(ratios), max(ratios)
        lines.append(
            f"From command to exit the gymnasium runs take {low[0]:.1f}x ({low[1]}) to "
            f"{high[0]:.1f}x ({high[1]}) the native runs' time."
        )
    return lines


def best_of(record: dict) -> str:
    """How a steady figure was taken: from the record's `calls` where it has them; the records
    made before it was kept say the count is the benchmark's, not theirs."""
    if "calls" in record:
        return f"the best of {record['calls']} calls after compiling"
    return "the best of 5 calls after compiling (the benchmark's count; its records do not say)"


def _steady_section(rows: list[dict]) -> list[str]:
    lines = [
        "## Steady state",
        "",
        "```sh",
        "python -m benchmarks.native --steady --page",
        "```",
        "",
        f"{_head(rows)} | {best_of(rows[0])}:",
        "",
        "| config | envs x (rollouts x) steps per call | what | env steps/s |",
        "|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['config']} | {row['shape']} | {row['what']} | {row['steps_per_second']:,.0f} |"
        )
    lines += [
        "",
        "The rollout alone is the PPO agent's rollout without its update (policy, sampling,",
        "log-probs and values, buffer writes, the env and its resets), in calls of one step less",
        "than a rollout; a whole call adds the update (for `cartpole_native`, 4 epochs of 2",
        "minibatches over each rollout; `cartpole_native_fast` makes one pass over each rollout).",
    ]
    return lines


def page(records: list[dict]) -> str:
    lines = [_INTRO]
    for kind, section in (
        ("native", _native_section),
        ("gym", _gym_section),
        ("steady", _steady_section),
    ):
        rows = newest(records, kind)
        if rows:
            lines += [*section(rows), ""]
    return "\n".join(lines)
