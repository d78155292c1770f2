"""The exploration page's aggregates: per task and arm, IQMs with their intervals over every run
counted, and each arm's probability of improving on the control."""

from __future__ import annotations

import math
import statistics

from benchmarks.pages import exploration_runs as runs_of
from benchmarks.pages.exploration_runs import (
    ARMS,
    ORDER_SEEDS,
    SOLVED_RETURN,
    SOLVED_SUCCESS,
    criterion,
    interval,
    minutes_to_solve,
    solved_by_success,
    steps_to_solve,
)


def aggregate_lines(runs: list[dict]) -> list[str]:
    """Per task and arm: IQMs with 95% bootstrap intervals of the final success (mode) and of
    the env steps to solve, and each arm's probability of improving on the control."""
    lines = [
        "",
        "## Aggregates",
        "",
        f"The aggregates count {runs_of.counted_words(runs)} (a rule fixed before the runs: a",
        "seed run twice, on another machine or again, counts twice; records are only appended).",
        "",
        "Per task and arm over its runs: the interquartile mean (IQM) with its 95% percentile",
        "bootstrap interval over runs (`agents.multirun.aggregates`, rliable's definitions), of",
        "the deterministic policy's (the mode's) final success over minigrid's episodes and of",
        "the env steps to solve of the sampled training policy: the first training report from",
        f"which the training success rate held {SOLVED_SUCCESS} (the share of the report's",
        "episodes, played by sampling the policy as it trained, that reached the goal; where a",
        f"task's records have no success rate, the training return held {SOLVED_RETURN} instead,",
        "as the criterion column says; a run that never held it counts its whole budget); and",
        "P(X > control), the probability that a run of the arm beats a run of the control",
        "(success: higher; env steps: fewer), with its stratified bootstrap interval. An interval",
        f"above 0.5 orders the two arms; with fewer than {ORDER_SEEDS} seeds an arm is not ordered",
        "at all. The two can disagree: the sampled policy can solve a task its mode does not.",
        "",
        "| task | arm | runs (seeds) | success (mode), IQM [95% CI] | steps to solve, sampled "
        "training policy (M env steps), IQM [95% CI] | criterion | P(success > control's) "
        "[95% CI] | P(sampled training policy solves sooner than control's) [95% CI] |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for mine, arm, arm_runs in _task_arms(runs):
        by_success, said = solved_by_success(mine), criterion(mine).removeprefix("training ")
        control = [r for r in mine if r["arm"] == "control"]
        success = [r["success_mode"] for r in arm_runs]
        held = [steps_to_solve(r, by_success) for r in arm_runs]
        versus = ["-", "-"]
        if control and arm != "control":
            versus = runs_of.versus(arm_runs, control, by_success)
        counted = f"{len(arm_runs)} ({runs_of.seeds(arm_runs)})"
        lines.append(
            f"| {arm_runs[0]['env_id']} | {arm} | {counted} | {interval(success, 2)} | "
            f"{interval(held, 1, 1e6)} | {said} | {versus[0]} | {versus[1]} |"
        )
    return lines


def wall_lines(runs: list[dict]) -> list[str]:
    """Per task and arm: the median env steps per second and the median wall time to solve, a
    run that never solved counting as never."""
    lines = [
        "",
        "## Wall time to solve",
        "",
        "Per task and arm over the same runs: the median env steps per second (a run's env steps",
        "over its wall time, process start and compiling included) and the median wall time until",
        "the sampled training policy solved the task (as the steps to solve above; at the run's",
        "mean rate: its wall time times the share of its env steps trained by then). A run that",
        "never solved counts as never, so a median of *never* means half the runs or more did not;",
        "the range spans the runs that solved. Runs trained at once share the cores (the first",
        "table says how many); the load column is the machine's load over the runs.",
        "",
        "| task | arm | runs | solved | env steps/s, median | wall to solve (min), median "
        "| range (min) | load |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for mine, arm, arm_runs in _task_arms(runs):
        by_success = solved_by_success(mine)
        rate = statistics.median(r["train_steps"] / r["wall_seconds"] for r in arm_runs)
        minutes = [minutes_to_solve(r, by_success) for r in arm_runs]
        solved = sorted(m for m in minutes if m is not None)
        median = statistics.median(math.inf if m is None else m for m in minutes)
        said = "never" if math.isinf(median) else f"{median:.1f}"
        spread = _span(f"{solved[0]:.1f}", f"{solved[-1]:.1f}") if solved else "-"
        loads = [r["load"] for r in arm_runs]
        load = _span(f"{min(loads):.1f}", f"{max(loads):.1f}")
        lines.append(
            f"| {arm_runs[0]['env_id']} | {arm} | {len(arm_runs)} | {len(solved)} | "
            f"{rate:,.0f} | {said} | {spread} | {load} |"
        )
    return lines


def _task_arms(runs: list[dict]):
    """(a task's runs, an arm, the arm's runs) for each task in record order and each arm it
    has, in `ARMS` order."""
    for task in dict.fromkeys(r["task"] for r in runs):
        mine = [r for r in runs if r["task"] == task]
        for arm in ARMS:
            arm_runs = [r for r in mine if r["arm"] == arm]
            if arm_runs:
                yield mine, arm, arm_runs


def _span(low: str, high: str) -> str:
    """A range as written, one value where its ends agree."""
    return low if low == high else f"{low}-{high}"
