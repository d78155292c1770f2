"""The exploration page's superseded groups: every library group of a task that the tables no
longer show, one line each (its commit, arms and seeds, headline success, ordering, and what
replaced it), so that no run leaves the page."""

from __future__ import annotations

import collections

from benchmarks.pages.exploration_ablations import ablations
from benchmarks.pages.exploration_orderings import ordering_words
from benchmarks.pages.exploration_runs import (
    ARM_NAMES,
    ARMS,
    ORDER_SEEDS,
    TASKS,
    newest,
    policy,
    solved,
    task_groups,
    whole,
)


def superseded(records: list[dict]) -> list[tuple[list[dict], list[dict]]]:
    """(a superseded library group, the group that replaced it on the page) of every task, in
    task order, newest first: the replacement is the group shown, or for a group newer than it,
    the group under way."""
    found = []
    for task in TASKS:
        shown, under_way, rest = task_groups(records, task)
        for group in rest:
            later = under_way and _started(group) > _started(shown)
            found.append((group, under_way if later else shown))
    return found


def _started(group: list[dict]) -> str:
    """When the newest sitting of a group started ("" for records from before `started`)."""
    return newest(group).get("started") or ""


def superseded_lines(records: list[dict]) -> list[str]:
    """The section of superseded groups, one line each; none where no group is superseded."""
    groups, earlier = superseded(records), earlier_ablations(records)
    if not groups and not earlier:
        return []
    lines = [
        "",
        "## Superseded groups",
        "",
        "Every earlier benchmark of a task, at other library code (`agents/`), that a newer one",
        "replaced in the tables above, one line each: its commits, its arms' seeds (a seed run",
        "twice is listed twice), the runs whose success reached 0.9 by the mode over minigrid's",
        "episodes [by the sampled policy], its orderings as the aggregates count them, and what",
        "changed in the benchmark that replaced it. The records stay in",
        "`benchmarks/results/exploration.jsonl`.",
        "",
        "| task | commit | dates | policy | arms: seeds | success >= 0.9, mode [sampled] "
        "| ordering | superseded by |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for group, by in groups:
        lines.append(superseded_row(group, by))
    later = {r["task"]: r["commit"] for r in ablations(records)}
    for (task, commit, overrides, _), runs in earlier.items():
        arm = ARM_NAMES[runs[0]["arm"]]
        mode, total = solved(runs, task, runs[0]["arm"], policy="mode")
        sampled, _ = solved(runs, task, runs[0]["arm"], policy="sampled")
        lines.append(
            f"| {runs[0]['env_id']} | {commit} | {_days(runs)} | {policy(runs[0])} | {arm} "
            f"`{' '.join(overrides)}` {seed_list([r['seed'] for r in runs])} | "
            f"{arm} {mode} [{sampled}] of {total} | an ablation: not ordered | "
            f"the ablations at {later.get(task, '-')} |"
        )
    return lines


def earlier_ablations(records: list[dict]) -> dict[tuple, list[dict]]:
    """(task, commit, overrides, arm) -> its runs, of the runs with `--set` overrides that the
    ablations' table no longer shows (`ablations`: a task's newest commit only)."""
    on_page = {id(r) for r in ablations(records)}
    found: dict[tuple, list[dict]] = {}
    for r in records:
        if r.get("overrides") and id(r) not in on_page:
            key = (r["task"], r["commit"], tuple(r["overrides"]), r["arm"])
            found.setdefault(key, []).append(r)
    return found


def _days(runs: list[dict]) -> str:
    """The days `runs` ended on: one day, or the first to the last."""
    days = sorted(r["date"][:10] for r in runs)
    return days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"


def superseded_row(group: list[dict], by: list[dict]) -> str:
    """One line of the superseded table: `group`, replaced by `by`."""
    task, first = group[0]["task"], group[0]
    arms = [arm for arm in ARMS if any(r["arm"] == arm for r in group)]
    seeds = "; ".join(
        f"{ARM_NAMES[arm]} {seed_list([r['seed'] for r in group if r['arm'] == arm])}"
        for arm in arms
    )
    counts = []
    for arm in arms:
        mode, total = solved(group, task, arm, policy="mode")
        sampled, _ = solved(group, task, arm, policy="sampled")
        counts.append(f"{ARM_NAMES[arm]} {mode} [{sampled}] of {total}")
    return (
        f"| {first['env_id']} | {_commits(group)} | {_days(group)} | {policy(first)} | {seeds} | "
        f"{', '.join(counts)} | {ordering_words(group, task)} | {why(group, by)} |"
    )


def why(group: list[dict], by: list[dict]) -> str:
    """What replaced `group`: the commits of `by`, and how its benchmark differs (other
    `agents/` code always; the settings whose values differ; a group short of seeds)."""
    said = ["other `agents/` code"]
    for name, values in SETTINGS.items():
        before, after = _values(group, values), _values(by, values)
        if before != after:
            said.append(f"{name} {before} to {after}")
    if not whole(group):
        said.append(f"this one short of {ORDER_SEEDS} seeds an arm")
    return f"{_commits(by)}: {'; '.join(said)}"


def _values(runs: list[dict], value) -> str:
    """The distinct values of `value` over `runs`, in words, in order."""
    return ", ".join(dict.fromkeys(str(value(r)) for r in runs if value(r) != ""))


# The settings of a benchmark a superseded group is compared on, each read from a record
# (a record from before a key was written gets the value the benchmark ran then, or -).
SETTINGS = {
    "policy": policy,
    "extrinsic discount": lambda r: r.get("discount", "-"),
    "intrinsic weight": lambda r: r.get("int_coef_schedule", "-") if r["arm"] != "control" else "",
    "scoring episodes": lambda r: r.get("episodes", 100),
    "budget": lambda r: f"{r['train_steps'] / 1e6:.1f}M env steps",
}


def _commits(runs: list[dict]) -> str:
    return ", ".join(dict.fromkeys(r["commit"] for r in runs))


def seed_list(values: list[int]) -> str:
    """Seeds in words: runs of consecutive seeds as ranges ("0-4"), a seed run more than once
    with how many times ("0-4, 3 twice")."""
    counts = collections.Counter(values)
    distinct, spans = sorted(counts), []
    for seed in distinct:
        if spans and seed == spans[-1][1] + 1:
            spans[-1][1] = seed
        else:
            spans.append([seed, seed])
    words = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}-{b}" for a, b in spans]
    times = {2: "twice", 3: "three times"}
    words += [f"{s} {times.get(n, f'{n} times')}" for s, n in sorted(counts.items()) if n > 1]
    return ", ".join(words)
