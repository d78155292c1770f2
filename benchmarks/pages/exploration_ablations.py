"""The exploration page's ablations: runs with `--set` overrides, each read beside the runs of
the named configs at the same library code."""

from __future__ import annotations

from benchmarks.pages.exploration_runs import (
    ARMS,
    ORDER_SEEDS,
    SOLVED_SUCCESS,
    TASKS,
    counted,
    criterion,
    held_from,
    interval,
    millions,
    newest,
    same_library,
    solved,
    solved_by_success,
    steps_to_solve,
    versus,
)


def ablations(records: list[dict]) -> list[dict]:
    """Per task, the runs with `--set` overrides at the newest commit that ran such runs (a
    setting and its default run as sittings of their own, both with the override named)."""
    found = []
    for task in TASKS:
        mine = [r for r in records if r["task"] == task and r.get("overrides")]
        found += [r for r in mine if r["commit"] == newest(mine)["commit"]] if mine else []
    return found


def baselines(tried: list[dict], records: list[dict]) -> list[dict]:
    """The runs of named configs an ablation is read against: of its task and arms, the seeds it
    ran, at the same library code (`named_alike`; a row that differs only in the overrides
    stands beside it), whether or not a newer sitting of the task replaced them in the arms'
    tables."""
    ran = {(r["task"], r["arm"], r["seed"]) for r in tried}
    found = []
    for task in dict.fromkeys(r["task"] for r in tried):
        alike = named_alike([r for r in tried if r["task"] == task], records)
        found += [r for r in alike if (r["task"], r["arm"], r["seed"]) in ran]
    return found


def ablation_lines(tried: list[dict], records: list[dict]) -> list[str]:
    """The ablations' table: per task, arm and overrides, each seed's success (mode, then
    sampled) and where the training success rate held 0.9 and the return 0.5; beside each
    ablated arm, the named runs of its seeds at the same library code (`as named`)."""
    if not tried:
        return []
    lines = [
        "",
        "## Ablations",
        "",
        "Runs of one commit that differ only in the `--set` overrides named (defaults named too);",
        "*as named*: runs of the named configs of the same seeds and the same `agents/`.",
        "",
        "| task | commit | machine | arm | overrides | seeds | success (mode), per seed "
        "| success (sampled) | training success 0.9 held from | return 0.5 held from |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = _groups([*baselines(tried, records), *tried])
    for (_, arm, overrides), mine in groups:
        solved = [
            millions(held_from(r["success_curve"], SOLVED_SUCCESS))
            if r.get("success_curve")
            else "-"  # Runs whose reports gave no success rate.
            for r in mine
        ]
        machines = ", ".join(dict.fromkeys(str(r.get("machine", "-")) for r in mine))
        lines.append(
            f"| {mine[0]['env_id']} | {mine[0]['commit']} | {machines} | {arm} | "
            + (f"`{' '.join(overrides)}`" if overrides else "as named")
            + " | "
            + ", ".join(str(r["seed"]) for r in mine)
            + " | "
            + ", ".join(f"{r['success_mode']:.2f}" for r in mine)
            + " | "
            + ", ".join(f"{r['success_stochastic']:.2f}" for r in mine)
            + " | "
            + ", ".join(solved)
            + " | "
            + ", ".join(millions(held_from(r["curve"])) for r in mine)
            + " |"
        )
    return lines + _aggregate_lines(_aggregated(groups), records)


def _groups(runs: list[dict]) -> list[tuple[tuple, list[dict]]]:
    """((task, arm, overrides), its runs by seed) in task, arm and overrides order."""
    groups: dict[tuple, list[dict]] = {}
    for r in sorted(runs, key=lambda r: r["seed"]):
        groups.setdefault((r["task"], r["arm"], tuple(r.get("overrides") or ())), []).append(r)
    return sorted(
        groups.items(), key=lambda g: (TASKS.index(g[0][0]), ARMS.index(g[0][1]), g[0][2])
    )


def _aggregated(groups: list[tuple[tuple, list[dict]]]) -> list[tuple[tuple, list[dict]]]:
    """The groups of ablated runs (not as named) with seeds enough to be aggregated."""
    return [(key, runs) for key, runs in groups if key[2] and len(runs) >= ORDER_SEEDS]


def compared(tried: list[dict], records: list[dict]) -> list[dict]:
    """The named runs the aggregated ablations are measured against (`named_alike`)."""
    found = {}
    for _, runs in _aggregated(_groups(tried)):
        found.update((id(r), r) for r in named_alike(runs, records))
    return list(found.values())


def named_alike(runs: list[dict], records: list[dict]) -> list[dict]:
    """The named configs' runs of the task of `runs` at the same library code as its first,
    every one of them (`counted`: a seed run twice counts twice)."""
    return counted(
        [
            run
            for run in records
            if run["task"] == runs[0]["task"]
            and not run.get("overrides")
            and same_library(run, runs[0])
        ]
    )


def _aggregate_lines(groups: list[tuple[tuple, list[dict]]], records: list[dict]) -> list[str]:
    """Per ablated arm of at least `ORDER_SEEDS` seeds: the aggregates' IQMs, and P(X > Y)
    against the control and against its own arm as named, both at the same library code."""
    rows = []
    for (_, arm, overrides), mine in groups:
        alike = named_alike(mine, records)
        control = [r for r in alike if r["arm"] == "control"]
        as_named = [r for r in alike if r["arm"] == arm]
        by_success = solved_by_success(mine + alike)
        cells = [
            "{} of {}".format(*solved(runs, mine[0]["task"], name))
            for runs, name in ((mine, arm), (alike, "control"), (alike, arm))
        ]
        for others in (control, as_named):
            cells += versus(mine, others, by_success) if others else ["-", "-"]
        success = [r["success_mode"] for r in mine]
        held = [steps_to_solve(r, by_success) for r in mine]
        rows.append(
            f"| {mine[0]['env_id']} | {arm} | `{' '.join(overrides)}` | {cells[0]} | "
            f"{interval(success, 2)} | {interval(held, 1, 1e6)} | "
            f"{criterion(mine + alike).removeprefix('training ')} | " + " | ".join(cells[1:]) + " |"
        )
    if not rows:
        return []
    return [
        "",
        f"Ablated arms of at least {ORDER_SEEDS} seeds, measured as in the aggregates above,",
        "against the control and against the same arm as named, both run at the same `agents/`",
        "(runs with success >= 0.9 by the mode, then P(X > Y) [95% CI] against each; *sooner*:",
        "the sampled training policy's steps to solve):",
        "",
        "| task | arm | overrides | runs >= 0.9 (mode) | success (mode), IQM [95% CI] "
        "| steps to solve, sampled training policy (M env steps), IQM [95% CI] | criterion "
        "| control's runs >= 0.9 | as named, runs >= 0.9 | P(success > control's) "
        "| P(sooner than control) | P(success > as named) | P(sooner than as named) |",
        "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
        *rows,
    ]
