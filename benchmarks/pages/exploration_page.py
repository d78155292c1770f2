"""docs/results/exploration.md and its plots, from the exploration benchmark's records (per task,
the newest sitting that ran it and those at commits with the same `agents/`)."""

from __future__ import annotations

import datetime
import os

from benchmarks import common
from benchmarks.pages import claims, exploration_figures
from benchmarks.pages import exploration_runs as runs_of
from benchmarks.pages import exploration_superseded as superseded_of
from benchmarks.pages.exploration_ablations import ablation_lines, ablations, baselines, compared
from benchmarks.pages.exploration_runs import (
    ARMS,
    ORDER_SEEDS,
    SOLVED_RETURN,
    SOLVED_SUCCESS,
    TASKS,
    criterion,
    held_from,
    interval,
    policy,
    solved,
    solved_by_success,
    steps_to_solve,
)

PAGE = os.path.join(common.ROOT, "docs", "results", "exploration.md")
RECORDS = os.path.join(common.RESULTS, "exploration.jsonl")
PEER_RECORDS = os.path.join(common.RESULTS, "peer.jsonl")  # benchmarks/peer.py


def shown(records: list[dict]) -> list[dict]:
    """Every run the page shows, in its tables (`tabled`) or on a line of its group
    (`exploration_superseded`: groups the tables no longer show), each once; records are only
    ever appended, so this is every record of the benchmark."""
    found = {id(r): r for r in tabled(records)}
    for group, _ in superseded_of.superseded(records):
        found.update((id(r), r) for r in group)
    for runs in superseded_of.earlier_ablations(records).values():
        found.update((id(r), r) for r in runs)
    return [r for r in records if id(r) in found]


def tabled(records: list[dict]) -> list[dict]:
    """The runs the page's tables show run by run: the arms' runs (`named`, and those under
    way), the ablations' runs and the named runs they are read against (`baselines`, and
    `compared` where an ablation is aggregated), each once."""
    on_show, newer = runs_of.shown_and_under_way(records)
    arms, tried = on_show + newer, ablations(records)
    against = [*baselines(tried, records), *compared(tried, records)]
    return arms + tried + [r for r in {id(r): r for r in against}.values() if r not in arms]


def _aggregate_lines(runs: list[dict]) -> list[str]:
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
    for task in dict.fromkeys(r["task"] for r in runs):
        mine = [r for r in runs if r["task"] == task]
        by_success, said = solved_by_success(mine), criterion(mine).removeprefix("training ")
        control = [r for r in mine if r["arm"] == "control"]
        for arm in ARMS:
            arm_runs = [r for r in mine if r["arm"] == arm]
            if not arm_runs:
                continue
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


def page(records: list[dict], peer: list[dict] = ()) -> str:
    """docs/results/exploration.md from each task's newest sitting, the ablations, and the
    newest sitting of `peer` (the side by side with a published implementation)."""
    tried = ablations(records)
    runs, newer = runs_of.shown_and_under_way(records)
    lines = [
        "# Exploration on native MiniGrid",
        "",
        "RND (`<task>_rnd`) against its control (`<task>`: the same agent, `int_coef=0`) and,",
        "where the arm is listed, NovelD (`<task>_noveld`: the same agent with `bonus: noveld`,",
        "RND's error growth paid on first visits within an episode) on",
        "MiniGrid as TensorFlow ops, symbolic 7x7 view, an MLP torso (a GRU after it where the",
        "policy column says so) and RND's MLP, the whole training call one XLA program; runs",
        "trained *at once* share the machine's cores (- where not recorded). Scores are",
        "**minigrid's own env** (gymnasium's id with",
        f"minigrid's `ImgObsWrapper`), {_episodes(runs)} episodes per seed after training, reset",
        "with seeds the layout bank was not made from; a success reaches the goal (near 0.9, a",
        "success rate over 500 episodes has a standard error of 1.3 points, over 100 of 3).",
        "*Intrinsic weight*: `constant`, or `linear` (`int_coef_schedule`: the weight falls",
        "linearly to 0 over the run, so that the bonus stops steering the final policy).",
        "*Training success 0.9 held from*: the first training report from which the share of",
        "the report's episodes that reached the goal stays at 0.9 or more, the sampled training",
        "policy's steps to solve of the aggregates (runs whose reports gave no success rate",
        "show -).",
        "*Return 0.5 held from*: the",
        "first training report from which the mean training return stays at 0.5 or more (a",
        "report averages the episodes that ended since the last one, so one early report can",
        "hold only the few short, successful episodes of a policy that never learns). A task's",
        "runs come from one library's code: a sitting and every sitting at a commit whose",
        "`agents/` is identical to it (`git diff --quiet A B -- agents`), one benchmark spread",
        "over several sittings; the commits are listed. Of these groups the tables show the",
        f"newest that holds all three arms at {ORDER_SEEDS} seeds (where none does, the newest),",
        "every run of it: a seed run twice is two rows. A newer group still short of that is",
        "listed under *Under way*, and every other group on a line of its own under *Superseded",
        "groups*. Generated by",
        "`python -m benchmarks.exploration --page` from",
        "`benchmarks/results/exploration.jsonl`.",
        "",
        "```sh",
        'pip install -e ".[minigrid]"',
        "python -m benchmarks.exploration --seeds 5 --episodes 500 --jobs 2 --page",
        "```",
        "",
        "| task | commit | machine | dates | load | at once | policy | extrinsic discount "
        "| intrinsic weight |",
        "|---|---|---|---|---:|---:|---|---:|---|",
    ]
    for task in dict.fromkeys(r["task"] for r in runs):
        mine = [r for r in runs if r["task"] == task]
        loads = sorted(f"{r['load']:.1f}" for r in mine)
        load = loads[0] if loads[0] == loads[-1] else f"{loads[0]}-{loads[-1]}"
        lines.append(
            f"| {mine[0]['env_id']} | {_distinct(mine, 'commit')} | {_machines(mine)} "
            f"| {_span(mine)} | {load} | "
            f"{_distinct(mine, 'concurrent')} | {policy(mine[0])} | {mine[0]['discount']} | "
            f"{_distinct([r for r in mine if r['arm'] != 'control'], 'int_coef_schedule')} |"
        )
    lines += _rescored(runs)
    lines += [
        "",
        "| task | arm | seed | env steps | wall (s) | return 0.5 held from "
        "| training success 0.9 held from (sampled training policy) | success (sampled) "
        "| success (mode) | return (sampled) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in sorted(runs, key=lambda r: (r["task"], ARMS.index(r["arm"]), r["seed"])):
        first = _steps(held_from(run["curve"]))
        solved_at = "-"  # Runs whose reports gave no success rate.
        if run.get("success_curve"):
            solved_at = _steps(held_from(run["success_curve"], SOLVED_SUCCESS))
        lines.append(
            f"| {run['env_id']} | {run['arm']} | {run['seed']} | {run['train_steps']:,} | "
            f"{run['wall_seconds']:.0f} | {first} | {solved_at} | "
            f"{run['success_stochastic']:.2f} | {run['success_mode']:.2f} | "
            f"{run['return_stochastic']:.3f} |"
        )
    lines += [
        "",
        "| task | arm | runs with success >= 0.9 (mode) | runs with success >= 0.9 (sampled) |",
        "|---|---|---:|---:|",
    ]
    for task in TASKS:
        for arm in ARMS:
            mode, total = solved(runs, task, arm, policy="mode")
            sampled, _ = solved(runs, task, arm, policy="sampled")
            if total:
                env_id = next(r["env_id"] for r in runs if r["task"] == task)
                lines.append(f"| {env_id} | {arm} | {mode} of {total} | {sampled} of {total} |")
    lines += _aggregate_lines(runs)
    lines += _under_way_lines(newer)
    lines += superseded_of.superseded_lines(records)
    lines += [
        "",
        "The figures: per arm, the IQM over runs of the training success rate against env steps",
        "(of the training return, for a task whose records have no success rate), with its 95%",
        "bootstrap interval shaded.",
        "",
    ]
    for task_runs, name in exploration_figures.figured(runs):
        arms = " and ".join(dict.fromkeys(r["arm"] for r in task_runs))
        lines += [f"![{task_runs[0]['env_id']}: {arms}]({name})", ""]
    lines += ablation_lines(tried, records)
    lines += _peer_lines(common.sitting(list(peer)) if peer else [])
    return "\n".join(lines)


def _under_way_lines(runs: list[dict]) -> list[str]:
    """Per task and arm, the seeds of a newer benchmark not yet whole, each seed's success."""
    if not runs:
        return []
    lines = [
        "",
        "## Under way",
        "",
        f"Runs at newer library code for a task whose arms do not yet all have {ORDER_SEEDS} seeds",
        "there: the tables above keep the last benchmark that has them until these do. Success",
        f"over {_episodes(runs)} episodes of minigrid's env per seed, in the order of the seeds.",
        "",
        "| task | commit | machine | policy | arm | seeds | success (mode) | success (sampled) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for task in dict.fromkeys(r["task"] for r in runs):
        for arm in ARMS:
            mine = sorted(
                (r for r in runs if r["task"] == task and r["arm"] == arm),
                key=lambda r: r["seed"],
            )
            if mine:
                lines.append(
                    f"| {mine[0]['env_id']} | {_distinct(mine, 'commit')} | "
                    f"{_machines(mine)} | {policy(mine[0])} | "
                    f"{arm} | {', '.join(str(r['seed']) for r in mine)} | "
                    f"{_each(mine, 'success_mode')} | {_each(mine, 'success_stochastic')} |"
                )
    return lines


def _each(runs: list[dict], key: str) -> str:
    return ", ".join(f"{run[key]:.2f}" for run in runs)


def _steps(first: int | None) -> str:
    return "never" if first is None else f"{first:,}"


def _distinct(runs: list[dict], key: str, separator: str = ", ") -> str:
    """The values of `key` among `runs`, each once, in order (- where not recorded)."""
    return separator.join(dict.fromkeys(str(run.get(key, "-")) for run in runs))


def _span(runs: list[dict]) -> str:
    """From the first run's start (its record's date less its wall time, to the nearest minute)
    to the last run's end (its record's date), the second date without its day where it is the
    first's."""
    minute = datetime.timedelta(minutes=1)

    def start(run: dict) -> datetime.datetime:
        ended = datetime.datetime.strptime(run["date"], "%Y-%m-%d %H:%M")
        return ended - datetime.timedelta(seconds=run["wall_seconds"]) + minute / 2

    first = min(start(run) for run in runs).strftime("%Y-%m-%d %H:%M")
    last = max(run["date"] for run in runs)
    return f"{first} to {last if last[:10] != first[:10] else last[11:]}"


def _machines(runs: list[dict]) -> str:
    """The machines of `runs`, each once, joined by "; " (a machine's name holds a comma)."""
    return _distinct(runs, "machine", "; ")


def _peer_lines(runs: list[dict]) -> list[str]:
    """The side by side with rl-starter-files' PPO: each side's process, env steps per second
    and final training return, and how many times the peer's rate ours is."""
    sides = {run["side"]: run for run in runs}
    if set(sides) != {"peer", "ours-cold", "ours-warm"}:
        return []
    peer, ours, warm = sides["peer"], sides["ours-cold"], sides["ours-warm"]
    lines = [
        "",
        "## Speed beside a published implementation",
        "",
        "rl-starter-files' PPO (torch-ac 1.4.0's `PPOAlgo` on minigrid's Python envs, its",
        "`scripts/train.py` defaults: 16 env processes, 128 steps each per update, its",
        "convolutional network; `benchmarks/peer_driver.py`) beside ours (the plain-PPO control",
        f"`--config={ours['task']}` on native MiniGrid, its evaluation phase included; cold: from",
        "a fresh XLA compile cache, warm: on the cache the cold run filled; the layout bank built",
        "beforehand), on the same task, budget and seed, one after the other;",
        "each side's whole process from spawn to exit. *Final return*: the mean training return",
        "of the episodes of each side's last report. Generated by `python -m benchmarks.peer",
        "--peer-python /path/to/peer/bin/python --page` from `benchmarks/results/peer.jsonl`.",
        "",
        f"{ours['date']} | {ours['machine']} | commit {ours['commit']} | load "
        f"{min(r['load'] for r in runs):.1f}-{max(r['load'] for r in runs):.1f}",
        "",
        "| side | env id | env steps | wall (s) | env steps/s | final return |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, run in (("rl-starter-files' PPO", peer), ("ours, cold", ours), ("ours, warm", warm)):
        lines.append(
            f"| {name} | {run['env_id']} | {run['steps']:,} | {run['seconds']:.1f} | "
            f"{run['steps_per_second']:,.0f} | {run['final_return']:.3f} |"
        )
    cold, hot = (run["steps_per_second"] / peer["steps_per_second"] for run in (ours, warm))
    lines += [
        "",
        f"{claims.runs_a_side(runs).capitalize()}{claims.busy(runs)}: ours trains {hot:.1f}x "
        f"the peer's env steps per second warm, {cold:.1f}x cold, whole processes.",
    ]
    return lines


def _rescored(runs: list[dict]) -> list[str]:
    """A line per task whose scores were taken again from its saved policies."""
    lines = []
    for task in dict.fromkeys(r["task"] for r in runs):
        again = [r for r in runs if r["task"] == task and r.get("rescored")]
        if again:
            when = again[0]["rescored"]
            lines += [
                "",
                f"{again[0]['env_id']}: the scores of its {len(again)} runs were taken again "
                f"{when['date']} at {when['commit']} ({when['machine']}) over "
                f"{again[0]['episodes']} episodes each, from the runs' saved policies "
                "(`python -m benchmarks.exploration_rescore`), trained at the commit above.",
            ]
    return lines


def _episodes(runs: list[dict]) -> str:
    """The scoring episodes per seed of `runs`, in words ("100", or "100 or 500")."""
    counts = sorted({int(run.get("episodes", 100)) for run in runs})
    return " or ".join(str(count) for count in counts) or "no"


def write(records: list[dict]) -> None:
    """Rewrites the page and draws its plots from `records` (and the peer's records)."""
    with open(PAGE, "w", encoding="utf-8") as file:
        file.write(page(records, common.read_records(PEER_RECORDS)) + "\n")
    for plot in exploration_figures.plots(records, PAGE):
        plot.draw()
