"""The exploration benchmark's runs: which tasks and arms, which records count (one library's
code, every run of it), and what is measured of them (success, steps to solve, IQMs, orderings
of arms)."""

from __future__ import annotations

from agents.multirun import aggregates
from benchmarks import common

TASKS = (
    "doorkey16",
    "keycorridor",
    "multiroom",
    "keycorridor_s4",
    "multiroom_n6",
    "keycorridor_s5",
    "obstructedmaze",
    "keycorridor_s6",
    "obstructedmaze_1q",
    "obstructedmaze_full",
)
# 20M-50M env steps: run only where named.
LONG_TASKS = ("keycorridor_s5", "obstructedmaze", "obstructedmaze_full")
DEFAULT_TASKS = tuple(task for task in TASKS if task not in LONG_TASKS)
# Every task's arms: RND, its control (int_coef=0) and NovelD; the episodic count bonus and E3B
# are arms of the tasks they are named for (`<task>_count`, `<task>_e3b`).
CORE_ARMS = ("rnd", "control", "noveld")
ARMS = (*CORE_ARMS, "count", "e3b")
ARM_NAMES = {
    "rnd": "RND",
    "control": "control",
    "noveld": "NovelD",
    "count": "count",
    "e3b": "E3B",
}

# Which runs of a group its aggregates count, fixed before any run: every run on the record. A
# seed run twice (on another machine, or again after a fix of the harness) counts twice, so
# that no rerun can take the place of a result; records are only ever appended.
COUNTED = "every run on the record"


def counted(group: list[dict]) -> list[dict]:
    """The runs of one library group that its aggregates count (`COUNTED`: all of them), in the
    order they started."""
    return by_start(group)


def seeds(runs: list[dict]) -> int:
    """How many distinct seeds (of one arm: its seeds; of several, each arm's apart) `runs`
    hold."""
    return len({(r["task"], r["arm"], r["seed"]) for r in runs})


def counted_words(runs: list[dict]) -> str:
    """The rule `COUNTED` with what it counts here: "every run on the record: 16 runs of 15
    seeds" (seeds of each task and arm apart)."""
    count, seeded = len(runs), seeds(runs)
    return f"{COUNTED}: {count} run{'s' * (count != 1)} of {seeded} seed{'s' * (seeded != 1)}"


def _sitting_of(record: dict) -> str:
    """The sitting a record belongs to (its commit, for records written before sittings were)."""
    return record.get("started") or record["commit"]


def named(records: list[dict]) -> list[dict]:
    """Per task, the runs with the configs as named (runs with `--set` overrides are ablations,
    kept out of the arms' counts) of one library's code (`library_groups`): the newest group
    that is `whole`, else the newest group; every run of it (`counted`: a seed run twice counts
    twice). A newer group still under way (`shown_and_under_way`) does not displace a whole one,
    so that a benchmark spread over several sittings replaces the last one only once it can be
    read on its own."""
    return shown_and_under_way(records)[0]


def shown_and_under_way(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """Per task, the group shown (`named`: the newest `whole` library group, else the newest)
    and the group under way: where the shown group is not the newest, the newest (a benchmark
    at newer code not yet `whole`)."""
    shown, newer = [], []
    for task in TASKS:
        group, under_way, _ = task_groups(records, task)
        shown += group
        newer += under_way
    return shown, newer


def task_groups(records: list[dict], task: str) -> tuple[list[dict], list[dict], list[list[dict]]]:
    """Of `task`'s named runs: (the group shown, the group under way, the groups superseded:
    every other library group, newest first). Each is empty where the task has none."""
    groups = library_groups([r for r in records if r["task"] == task])
    if not groups:
        return [], [], []
    shown = next((group for group in groups if whole(group)), groups[0])
    under_way = groups[0] if shown is not groups[0] else []
    rest = [group for group in groups if group is not shown and group is not under_way]
    return shown, under_way, rest


def library_groups(runs: list[dict]) -> list[list[dict]]:
    """The named runs of `runs` in groups of one library's code (`same_library` as the group's
    newest run), newest group first; in each, the runs it counts (`counted`)."""
    left, groups = [r for r in runs if not r.get("overrides")], []
    while left:
        head = newest(left)
        group = [r for r in left if same_library(r, head)]
        left = [r for r in left if not any(r is g for g in group)]
        groups.append(counted(group))
    return groups


def whole(runs: list[dict]) -> bool:
    """Whether a task's runs hold each core arm, and every other arm they have, at
    `ORDER_SEEDS` seeds or more (the long tasks, run with one arm, never are: their newest
    group is shown)."""
    arms = set(CORE_ARMS) | {r["arm"] for r in runs}
    return all(len({r["seed"] for r in runs if r["arm"] == arm}) >= ORDER_SEEDS for arm in arms)


def newest(runs: list[dict]) -> dict:
    """The last run of the newest sitting (`common.sitting`: by when it started, wherever the
    file holds it); of undated runs only, the file's last."""
    return (common.sitting(runs) or runs)[-1]


def by_start(runs: list[dict]) -> list[dict]:
    """`runs` in the order they started (runs started at once in the file's order)."""
    return sorted(runs, key=lambda r: r.get("started") or "")


def same_library(record: dict, other: dict) -> bool:
    """Whether two records ran the same library code: one sitting, or commits whose `agents/`
    trees are equal (a commit with uncommitted changes, `-dirty`, equals none but itself)."""
    if _sitting_of(record) == _sitting_of(other):
        return True
    tree = common.agents_tree(record["commit"])
    return tree is not None and tree == common.agents_tree(other["commit"])


def policy(record: dict) -> str:
    """The policy network of a record in words (records before the key ran `network=auto`:
    the MLP, on the symbolic view); a GRU's training sequences, where longer than one step
    (records before the key ran one-step sequences: the GRU learned nothing through time)."""
    network = record.get("network", "auto")
    names = {"auto": "MLP", "recurrent_categorical": "MLP + GRU"}
    words = names.get(network, network)
    chunk = record.get("chunk_length", 1)
    return f"{words} ({chunk}-step sequences)" if network != "auto" and chunk > 1 else words


def millions(first: int | None) -> str:
    """Env steps from which a level held, in millions (None: never)."""
    return "never" if first is None else f"{first / 1e6:.1f}M"


# The policies a record scores: the mode (deterministic, what a run's own evaluation plays by
# default) and samples of the distribution.
POLICIES = {"mode": "success_mode", "sampled": "success_stochastic"}


def solved(
    runs: list[dict], task: str, arm: str, level: float = 0.9, policy: str = "mode"
) -> tuple[int, int]:
    """(runs whose success on minigrid's env with `policy` ("mode" or "sampled") is at least
    `level`, runs) of an arm (a seed run twice counts twice: `COUNTED`)."""
    arm_runs = [r for r in runs if r["task"] == task and r["arm"] == arm]
    return sum(r[POLICIES[policy]] >= level for r in arm_runs), len(arm_runs)


def held_from(points: list[list[float]], level: float = 0.5) -> int | None:
    """The first reported env step from which the mean training return stays at `level` or
    above at every later report.

    A report averages the episodes that ended since the previous one, so early reports count
    the short episodes, the ones that reach the goal, and not the long ones still running: a
    single report at `level` can be a few lucky episodes of a policy that never learns.
    """
    first = None
    for steps, score in points:
        if score < level:
            first = None
        elif first is None:
            first = int(steps)
    return first


# What solving a task means: the training success rate holds 0.9 (records of runs whose reports
# gave no success rate fall back on the training return holding 0.5).
SOLVED_SUCCESS, SOLVED_RETURN = 0.9, 0.5


def solved_by_success(runs: list[dict]) -> bool:
    """Whether every run has a training success-rate curve, so that steps to solve count it."""
    return bool(runs) and all(run.get("success_curve") for run in runs)


def solved_at(run: dict, by_success: bool) -> int | None:
    """The env step from which the training success rate held 0.9 (`by_success`), else the
    training return 0.5; None for a run that never held it."""
    if by_success:
        return held_from(run["success_curve"], SOLVED_SUCCESS)
    return held_from(run["curve"], SOLVED_RETURN)


def steps_to_solve(run: dict, by_success: bool) -> int:
    """`solved_at`; a run that never held it counts its budget."""
    first = solved_at(run, by_success)
    return int(run["train_steps"]) if first is None else first


def minutes_to_solve(run: dict, by_success: bool) -> float | None:
    """Wall minutes until the run's sampled training policy solved its task (`solved_at`), at
    the run's mean rate: its wall time, process start and compiling included, times the share
    of its env steps trained by then. None for a run that never solved it."""
    first = solved_at(run, by_success)
    if first is None or not run["train_steps"]:
        return None
    return run["wall_seconds"] * first / run["train_steps"] / 60


def criterion(runs: list[dict]) -> str:
    """What steps to solve count for these runs, in words."""
    if solved_by_success(runs):
        return f"training success {SOLVED_SUCCESS} held"
    return f"training return {SOLVED_RETURN} held"


# Seeds per arm below which no ordering of two arms is stated, however far apart they score.
ORDER_SEEDS = 5


def orderings(
    runs: list[dict], task: str, measure: str = "success"
) -> list[tuple[str, str, float, tuple[float, float]]]:
    """(better arm, other arm, P, its interval) for each pair of arms of `task` where one
    improves on the other with the 95% interval of P(X > Y) above 0.5, over every run counted;
    none where an arm has fewer than `ORDER_SEEDS` seeds. `measure`: "success", the final
    success of the mode (`MEASURES`), higher better; "solved", the env steps to solve of the
    sampled training policy (`steps_to_solve`), fewer better."""
    found = []
    for better, other, p, (low, high) in improvements(runs, task, measure):
        if low > 0.5:
            found.append((better, other, p, (low, high)))
    return found


# What an ordering scores, per measure, in words: which policy and what of it.
MEASURES = {
    "success": "final success of the mode (deterministic policy) over minigrid's episodes",
    "solved": "steps to solve of the sampled training policy",
}


def improvements(
    runs: list[dict], task: str, measure: str = "success"
) -> list[tuple[str, str, float, tuple[float, float]]]:
    """(arm, other arm, P(arm's run beats other's), its 95% interval) for each ordered pair of
    arms of `task` that both have `ORDER_SEEDS` seeds or more, over every run counted;
    `measure` as in `orderings`."""
    mine = [r for r in runs if r["task"] == task]
    by_success = solved_by_success(mine)
    value = {
        "success": lambda r: r["success_mode"],
        "solved": lambda r: -steps_to_solve(r, by_success),
    }[measure]
    arm_runs = {arm: [r for r in mine if r["arm"] == arm] for arm in ARMS}
    found = []
    for better in ARMS:
        for other in ARMS:
            fewest = min(seeds(arm_runs[better]), seeds(arm_runs[other]))
            if better == other or fewest < ORDER_SEEDS:
                continue
            x = [value(r) for r in arm_runs[better]]
            y = [value(r) for r in arm_runs[other]]
            interval_ = aggregates.improvement_ci(x, y)
            found.append((better, other, aggregates.probability_of_improvement(x, y), interval_))
    return found


def interval(values: list[float], digits: int, scale: float = 1.0) -> str:
    """The IQM of `values` with its 95% bootstrap interval; of one value, the value alone (a
    single seed has no interval: resampling it gives it back every time)."""
    middle = aggregates.iqm(values)
    if len(values) < 2:
        return f"{middle / scale:.{digits}f} (one seed)"
    low, high = aggregates.bootstrap_ci(values, aggregates.iqm)
    return f"{middle / scale:.{digits}f} [{low / scale:.{digits}f}, {high / scale:.{digits}f}]"


def versus(runs: list[dict], others: list[dict], by_success: bool) -> list[str]:
    """P(a seed of `runs` beats a seed of `others`) with its 95% interval, on the final success
    (mode; higher) and on the env steps to solve (`steps_to_solve`; fewer), as two cells."""
    pairs = (
        ([r["success_mode"] for r in runs], [r["success_mode"] for r in others]),
        (
            [-steps_to_solve(r, by_success) for r in runs],
            [-steps_to_solve(r, by_success) for r in others],
        ),
    )
    return [
        f"{aggregates.probability_of_improvement(x, y):.2f} [{{:.2f}}, {{:.2f}}]".format(
            *aggregates.improvement_ci(x, y)
        )
        for x, y in pairs
    ]
