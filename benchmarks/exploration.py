"""Exploration on native MiniGrid: RND against its control on tasks a random walk does not solve.

Per task (DoorKey-16x16, KeyCorridorS3R3, MultiRoom-N4-S5-v1: v1 has four rooms, v0 six), arm
(`<task>_rnd`; the control `<task>`: the same agent with `int_coef=0`; and `<task>_noveld`: the
same agent with NovelD's episodic bonus in place of RND's) and seed, `python -m
agents.scripts.train --config=<config> --seed=<seed>` runs in a fresh process, timed from spawn
to exit. Then, untimed, the exported policy plays `--episodes` episodes of **minigrid's own env**
(gymnasium's id through minigrid's `ImgObsWrapper`, not the native ops) with the stochastic
policy as trained and with its mode; a success is an episode that reaches the goal (return > 0).

Every run appends one JSON line to `benchmarks/results/exploration.jsonl` (date, commit,
machine, load, the extrinsic discount, wall time, successes, the training curve). `--page`
rewrites `docs/results/exploration.md` and its figures from, per task, the newest sitting that
ran it: one figure per task with each arm's training score (mean and range over seeds) against
env steps.

Run: `python benchmarks/exploration.py [--tasks doorkey16 keycorridor multiroom] [--seeds 3]
[--episodes 500] [--jobs 2] [--page]`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import (  # noqa: E402
    append_record,
    machine_line,
    new_sitting,
    timed_process,
)
from benchmarks.plots import Plot, save  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RECORDS = os.path.join(HERE, "results", "exploration.jsonl")
PAGE = os.path.join(ROOT, "docs", "results", "exploration.md")
TASKS = ("doorkey16", "keycorridor", "multiroom")
ARMS = ("rnd", "control", "noveld")


def config_name(task: str, arm: str) -> str:
    return task if arm == "control" else f"{task}_{arm}"


def train(task: str, arm: str, seed: int, out: str, overrides: list[str]) -> tuple[str, float]:
    """Trains one (task, arm, seed) in a fresh process; returns its run directory and wall time."""
    logdir = os.path.join(out, task, arm)
    os.makedirs(logdir, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "agents.scripts.train",
        f"--config={config_name(task, arm)}",
        f"--seed={seed}",
        f"--logdir={logdir}",
    ]
    if overrides:
        command += ["--set", *overrides]
    stdout, seconds = timed_process(command, os.path.join(logdir, f"seed{seed}.log"))
    found = re.search(r"Done: .* in (.+)\.$", stdout, re.MULTILINE)  # Lines may be dated.
    if not found:
        raise RuntimeError(f"{' '.join(command)}: no 'Done:' line in its output:\n{stdout}")
    return found.group(1), seconds


def curve(run_dir: str) -> list[list[float]]:
    """[env steps, mean training return] of each training report of a run."""
    points = []
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as file:
        for line in file:
            row = json.loads(line)
            if row.get("phase") == "train" and row.get("score") is not None:
                points.append([row["env_steps"], row["score"]])
    return points


def score_on_minigrid(run_dir: str, env_id: str, episodes: int) -> dict:
    """Success rate and mean return of the run's policy on minigrid's own env, sampled as
    trained and by its mode (episodes reset with seeds 10**6 + k: layouts not in the bank),
    all episodes at once."""
    import numpy as np

    import agents
    from agents.envs.python.environments import make_env

    policy = agents.load_policy(run_dir)
    result = {}
    for name, deterministic in (("stochastic", False), ("mode", True)):
        returns = agents.evaluate(
            policy,
            lambda: make_env(env_id, wrapper="minigrid_image"),
            episodes,
            seed=10**6,
            deterministic=deterministic,
            parallel=episodes,
        ).returns
        result[f"success_{name}"] = float(np.mean(np.asarray(returns) > 0))
        result[f"return_{name}"] = float(np.mean(returns))
    return result


def read_records() -> list[dict]:
    if not os.path.exists(RECORDS):
        return []
    with open(RECORDS, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def _sitting_of(record: dict) -> str:
    """The sitting a record belongs to (its commit, for records written before sittings were)."""
    return record.get("started") or record["commit"]


def shown(records: list[dict]) -> list[dict]:
    """The runs the page shows: per task, those of the newest sitting that ran it."""
    found = []
    for task in TASKS:
        mine = [r for r in records if r["task"] == task]
        found += [r for r in mine if _sitting_of(r) == _sitting_of(mine[-1])] if mine else []
    return found


def solved(runs: list[dict], task: str, arm: str, level: float = 0.9) -> tuple[int, int]:
    """(seeds whose sampled success on minigrid's env is at least `level`, seeds) of an arm."""
    arm_runs = [r for r in runs if r["task"] == task and r["arm"] == arm]
    return sum(r["success_stochastic"] >= level for r in arm_runs), len(arm_runs)


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


def policy(record: dict) -> str:
    """The policy network of a record in words (records before the key ran `network=auto`:
    the MLP, on the symbolic view)."""
    network = record.get("network", "auto")
    names = {"auto": "MLP", "recurrent_categorical": "MLP + GRU"}
    return names.get(network, network)


def aligned(curves: list[list[list[float]]]) -> tuple[list[float], list[list[float]]]:
    """Curves of (env steps, score) put on the env steps any of them reports, up to the last
    step all of them reach; returns (steps, one row of scores per curve).

    A report is skipped when no episode ended in its window, so seeds report at different steps:
    each curve holds its last report until its next one (its first report before it).
    """
    import numpy as np

    end = min(curve[-1][0] for curve in curves)
    steps = sorted({point[0] for curve in curves for point in curve if point[0] <= end})
    rows = []
    for curve in curves:
        at, score = np.asarray(curve, dtype=float).T
        index = np.searchsorted(at, steps, side="right") - 1
        rows.append(score[np.maximum(index, 0)].tolist())
    return steps, rows


def figure(runs: list[dict], path: str) -> str:
    """Each arm's training score against env steps: mean line, range over seeds shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axis = plt.subplots(figsize=(6, 3.6))
    for arm, color in zip(ARMS, ("tab:blue", "tab:gray", "tab:orange"), strict=True):
        curves = [run["curve"] for run in runs if run["arm"] == arm and run["curve"]]
        if not curves:
            continue
        steps, rows = aligned(curves)
        scores = np.asarray(rows)
        label = f"{arm} ({len(curves)} seeds)"
        axis.plot(steps, scores.mean(0), color=color, label=label)
        axis.fill_between(steps, scores.min(0), scores.max(0), color=color, alpha=0.2)
    axis.set(xlabel="env steps", ylabel="training return", title=runs[0]["env_id"], ylim=(0, 1))
    axis.legend(loc="upper left")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
    return path


def page(records: list[dict]) -> str:
    """docs/results/exploration.md from each task's newest sitting."""
    runs = shown(records)
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
        "*Return 0.5 held from*: the",
        "first training report from which the mean training return stays at 0.5 or more (a",
        "report averages the episodes that ended since the last one, so one early report can",
        "hold only the few short, successful episodes of a policy that never learns). Generated by",
        "`python benchmarks/exploration.py --page` from",
        "`benchmarks/results/exploration.jsonl`.",
        "",
        "```sh",
        'pip install -e ".[minigrid]"',
        "python benchmarks/exploration.py --seeds 3 --episodes 500 --jobs 2 --page",
        "```",
        "",
        "| task | commit | machine | dates | load | at once | policy | extrinsic discount |",
        "|---|---|---|---|---:|---:|---|---:|",
    ]
    for task in dict.fromkeys(r["task"] for r in runs):
        mine = [r for r in runs if r["task"] == task]
        dates = sorted(r["date"] for r in mine)
        loads = [r["load"] for r in mine]
        lines.append(
            f"| {mine[0]['env_id']} | {mine[0]['commit']} | {mine[0]['machine']} | "
            f"{dates[0]} to {dates[-1][11:]} | {min(loads):.1f}-{max(loads):.1f} | "
            f"{mine[0].get('concurrent', '-')} | {policy(mine[0])} | {mine[0]['discount']} |"
        )
    lines += _rescored(runs)
    lines += [
        "",
        "| task | arm | seed | env steps | wall (s) | return 0.5 held from | success (sampled) "
        "| success (mode) | return (sampled) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in sorted(runs, key=lambda r: (r["task"], ARMS.index(r["arm"]), r["seed"])):
        first = held_from(run["curve"])
        lines.append(
            f"| {run['env_id']} | {run['arm']} | {run['seed']} | {run['train_steps']:,} | "
            f"{run['wall_seconds']:.0f} | {'never' if first is None else f'{first:,}'} | "
            f"{run['success_stochastic']:.2f} | {run['success_mode']:.2f} | "
            f"{run['return_stochastic']:.3f} |"
        )
    lines += ["", "| task | arm | seeds with success >= 0.9 (sampled) |", "|---|---|---:|"]
    for task in TASKS:
        for arm in ARMS:
            count, total = solved(runs, task, arm)
            if total:
                env_id = next(r["env_id"] for r in runs if r["task"] == task)
                lines.append(f"| {env_id} | {arm} | {count} of {total} |")
    lines.append("")
    for task_runs, name in _figured(runs):
        arms = " and ".join(dict.fromkeys(r["arm"] for r in task_runs))
        lines += [f"![{task_runs[0]['env_id']}: {arms}]({name})", ""]
    return "\n".join(lines)


def plots(records: list[dict]) -> list[Plot]:
    """The page's plots (PNG beside it), one per task, from the newest sitting's records."""
    found = []
    for task_runs, name in _figured(shown(records)):
        path = os.path.join(os.path.dirname(PAGE), name)
        draw = lambda r=task_runs, p=path: figure(r, p)  # noqa: E731
        found.append(Plot(path, task_runs, draw, code=(figure, aligned)))
    return found


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
                "(`benchmarks/exploration_rescore.py`), trained at the commit above.",
            ]
    return lines


def _episodes(runs: list[dict]) -> str:
    """The scoring episodes per seed of `runs`, in words ("100", or "100 or 500")."""
    counts = sorted({int(run.get("episodes", 100)) for run in runs})
    return " or ".join(str(count) for count in counts) or "no"


def _figured(runs: list[dict]) -> list[tuple[list[dict], str]]:
    """(its runs, plot file name) of each task with runs, in task order."""
    found = [(task, [r for r in runs if r["task"] == task]) for task in TASKS]
    return [(mine, f"exploration_{task}.png") for task, mine in found if mine]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument(
        "--episodes", type=int, default=500, help="scoring episodes per seed on minigrid's env"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="Runs trained at once (at most the machine's cores)."
    )
    parser.add_argument("--set", nargs="*", default=[], help="Overrides for every run (tests).")
    parser.add_argument("--out", default=os.path.join(HERE, "out", "exploration"))
    parser.add_argument("--page", action="store_true", help="Rewrite the results page.")
    parser.add_argument("--page-only", action="store_true", help="Only rewrite the page.")
    args = parser.parse_args(argv)
    from agents.config.schema import defaults
    from agents.config.values import apply_overrides
    from agents.scripts.configs import CONFIGS

    if not args.page_only:
        started = new_sitting(ROOT)
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        # Seed by seed, arms alternating: a sitting cut short holds whole seeds, and load
        # affects the arms alike.
        runs = [(task, arm, seed) for seed in seeds for task in args.tasks for arm in args.arms]
        scoring = threading.Lock()

        def run(task: str, arm: str, seed: int) -> None:
            run_dir, seconds = train(task, arm, seed, args.out, args.set)
            with scoring:  # Training runs in child processes; scoring, in this one, in turn.
                env_id = CONFIGS[config_name(task, arm)]()["env"]
                points = curve(run_dir)
                scores = score_on_minigrid(run_dir, env_id, args.episodes)
                named = {**defaults(), **CONFIGS[config_name(task, arm)]()}
                settings = apply_overrides(named, args.set)
                append_record(
                    RECORDS,
                    started,
                    task=task,
                    arm=arm,
                    seed=seed,
                    env_id=env_id,
                    config=config_name(task, arm),
                    overrides=args.set,
                    network=settings["network"],
                    bonus=settings["bonus"] if settings["int_coef"] else None,
                    episodes=args.episodes,
                    discount=settings["discount"],
                    train_steps=points[-1][0] if points else 0,
                    wall_seconds=seconds,
                    concurrent=args.jobs,
                    curve=points,
                    **scores,
                )
                print(
                    f"{task} {arm} seed {seed}: success {scores['success_stochastic']:.2f} "
                    f"(mode {scores['success_mode']:.2f}) in {seconds:.0f} s",
                    flush=True,
                )

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for done in [pool.submit(run, *key) for key in runs]:
                done.result()
    if args.page or args.page_only:
        with open(PAGE, "w", encoding="utf-8") as file:
            file.write(page(read_records()) + "\n")
        for plot in plots(read_records()):
            plot.draw()
        print(f"{machine_line()}\nwrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
