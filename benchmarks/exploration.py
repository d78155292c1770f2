"""Exploration on native MiniGrid: RND against its control on tasks a random walk does not solve.

Per task (DoorKey-16x16, KeyCorridorS3R3, MultiRoom-N4-S5-v1: v1 has four rooms, v0 six;
the frontier of published exploration work, KeyCorridorS4R3 and MultiRoom-N6, at 5M env steps;
KeyCorridorS6R3 and ObstructedMaze-1Q at 10M; and, only where named, ObstructedMaze-2Dlh at
20M, KeyCorridorS5R3 and ObstructedMaze-Full at 50M), arm (`<task>_rnd`; the control `<task>`:
the same agent with `int_coef=0`; `<task>_noveld`: the same agent with NovelD's episodic bonus
in place of RND's; where named, and where the task has the config, `<task>_count` and
`<task>_e3b`: the episodic count bonus and E3B) and seed, `python -m
agents.scripts.train --config=<config> --seed=<seed>` runs in a fresh process, timed from spawn
to exit (the layout banks the runs draw from are built first, untimed). Then, untimed, the
exported policy plays `--episodes` episodes of **minigrid's own env** (gymnasium's id through
minigrid's `ImgObsWrapper`, not the native ops) with the stochastic policy as trained and with
its mode; a success is an episode that reaches the goal (return > 0).

Every run appends one JSON line to `benchmarks/results/exploration.jsonl` (date, commit,
machine, load, the extrinsic discount, wall time, successes, the training return's and success
rate's curves). `--page`
rewrites `docs/results/exploration.md` and its figures from, per task, the newest sitting that
ran it and the sittings whose commits' `agents/` equal its own: one figure per task with each
arm's training success rate (IQM over seeds, 95% bootstrap band) against env steps.

Run: `python -m benchmarks.exploration [--tasks doorkey16 keycorridor multiroom keycorridor_s4
multiroom_n6 keycorridor_s6 obstructedmaze_1q ...] [--arms rnd control noveld count e3b] [--seeds 5]
[--episodes 500] [--jobs 2] [--page]`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import sys
import threading

from benchmarks import common
from benchmarks.pages import exploration_page, exploration_runs


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
    stdout, seconds = common.timed_process(command, os.path.join(logdir, f"seed{seed}.log"))
    found = re.search(r"Done: .* in (.+)\.$", stdout, re.MULTILINE)  # Lines may be dated.
    if not found:
        raise RuntimeError(f"{' '.join(command)}: no 'Done:' line in its output:\n{stdout}")
    return found.group(1), seconds


def settings_of(config: str, overrides: list[str]) -> dict:
    """The whole settings a run of the named `config` trains with under `overrides`."""
    from agents.config.schema import defaults
    from agents.config.values import apply_overrides
    from agents.scripts.configs import CONFIGS

    return apply_overrides({**defaults(), **CONFIGS[config]()}, overrides)


def layout_banks(configs: list[str], overrides: list[str]) -> list[tuple[str, int]]:
    """The (env id, size) of each distinct layout bank the native MiniGrid runs of `configs`
    draw their resets from, under `overrides`."""
    from agents.envs import registry
    from agents.envs.gridworld import layouts

    banks = []
    for name in configs:
        settings = settings_of(name, overrides)
        env_id = settings["env"]
        if settings["native_env"] and registry.native_wrappers(env_id):
            bank = (env_id, settings["layout_bank"] or layouts.default_size(env_id))
            if bank not in banks:
                banks.append(bank)
    return banks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=list(exploration_runs.DEFAULT_TASKS),
        choices=exploration_runs.TASKS,
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--arms",
        nargs="+",
        default=list(exploration_runs.CORE_ARMS),
        choices=exploration_runs.ARMS,
    )
    parser.add_argument(
        "--episodes", type=int, default=500, help="scoring episodes per seed on minigrid's env"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="Runs trained at once (at most the machine's cores)."
    )
    parser.add_argument("--set", nargs="*", default=[], help="Overrides for every run (tests).")
    parser.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "exploration"))
    parser.add_argument("--page", action="store_true", help="Rewrite the results page.")
    parser.add_argument("--page-only", action="store_true", help="Only rewrite the page.")
    args = parser.parse_args(argv)
    from agents.envs.gridworld import layouts

    if not args.page_only:
        started = common.new_sitting()
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        # Seed by seed, arms alternating: a sitting cut short holds whole seeds, and load
        # affects the arms alike.
        runs = [(task, arm, seed) for seed in seeds for task in args.tasks for arm in args.arms]
        # Built here, one at a time: a run's wall time is then its training alone, and runs
        # started at once never build the same bank twice.
        configs = [config_name(task, arm) for task in args.tasks for arm in args.arms]
        for env_id, size in layout_banks(configs, args.set):
            layouts.bank(env_id, size)
        scoring = threading.Lock()

        def run(task: str, arm: str, seed: int) -> None:
            run_dir, seconds = train(task, arm, seed, args.out, args.set)
            with scoring:  # Training runs in child processes; scoring, in this one, in turn.
                settings = settings_of(config_name(task, arm), args.set)
                env_id = settings["env"]
                points = common.training_curve(run_dir)
                scores = common.score_on_minigrid(run_dir, env_id, args.episodes)
                common.append_record(
                    exploration_page.RECORDS,
                    started,
                    task=task,
                    arm=arm,
                    seed=seed,
                    env_id=env_id,
                    config=config_name(task, arm),
                    overrides=args.set,
                    network=settings["network"],
                    chunk_length=settings["chunk_length"],
                    bonus=settings["bonus"] if settings["int_coef"] else None,
                    int_coef_schedule=settings["int_coef_schedule"],
                    episodes=args.episodes,
                    discount=settings["discount"],
                    train_steps=points[-1][0] if points else 0,
                    wall_seconds=seconds,
                    concurrent=args.jobs,
                    curve=points,
                    success_curve=common.training_curve(run_dir, "success_rate"),
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
        exploration_page.write(common.read_records(exploration_page.RECORDS))
        print(f"{common.machine_line()}\nwrote {exploration_page.PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
