"""Ours beside a published MiniGrid PPO: the same task and env-step budget, whole processes timed.

The peer is rl-starter-files' PPO (torch-ac's `PPOAlgo` on minigrid's Python envs, as its
`scripts/train.py` runs it by default; `benchmarks/peer_driver.py`), installed in a venv of its
own (`pip install torch==2.13.0 torch-ac==1.4.0 minigrid==3.2.0`). Ours is the plain-PPO
control of the exploration page's task (`--config=<task>`, native MiniGrid, the training call
one XLA program, its evaluation phase included), twice: from a fresh XLA compile cache (a user's
first run, compiling included) and on the cache that run filled (the next run); MiniGrid's layout
banks are the machine's, built beforehand as a user's first run of the id builds them. Each
side's figure is its process from spawn to exit; the score is each side's mean training return
over the episodes of its last report (torch-ac's last update; ours, the last training report).

Appends a record per side to `benchmarks/results/peer.jsonl`; the exploration page shows the
newest sitting (`--page` rewrites it).

Run: `python -m benchmarks.peer --peer-python /path/to/peer/bin/python [--task doorkey16]
[--steps 1048576] [--page]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys

from benchmarks import common
from benchmarks.pages import exploration_page, exploration_runs

RECORDS = exploration_page.PEER_RECORDS


def run_peer(python: str, env_id: str, steps: int, seed: int, directory: str) -> dict:
    """The peer's process on `env_id` for `steps` env steps; its measurements."""
    command = [python, "-m", "benchmarks.peer_driver", env_id, str(steps), str(seed)]
    stdout, seconds = common.timed_process(
        command, os.path.join(directory, "peer.log"), cwd=common.ROOT
    )
    found = json.loads(stdout.strip().splitlines()[-1])
    return dict(steps=found["frames"], seconds=seconds, final_return=found["final_return"])


def run_ours(task: str, steps: int, seed: int, directory: str, cache: str) -> dict:
    """Our training process of `task` for `steps` env steps with its XLA compile cache under
    `cache` (MiniGrid's layout banks where this machine keeps them, as a user's are)."""
    from agents.envs.gridworld import layouts  # Plain numpy: no TensorFlow.

    logdir = os.path.join(directory, "logdir")
    command = [sys.executable, "-m", "agents.scripts.train", f"--config={task}"]
    command += [f"--logdir={logdir}", f"--seed={seed}", "--set", f"train_steps={steps}"]
    command += [f"train_every={steps}"]  # One training phase, its evaluation after it.
    env = common.checkout_env(
        without=("TF_XLA_FLAGS", "AGENTS_XLA_CACHE"),
        XDG_CACHE_HOME=cache,
        AGENTS_CACHE=str(layouts.cache_dir()),
    )
    stdout, seconds = common.timed_process(command, os.path.join(directory, "ours.log"), env=env)
    done = re.search(r"Done: ([\d,]+) env steps in (.+)\.$", stdout, re.MULTILINE)
    steps_done = int(done.group(1).replace(",", ""))
    final_return = common.training_curve(done.group(2))[-1][1]
    return dict(steps=steps_done, seconds=seconds, final_return=final_return)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--peer-python", required=True, help="a Python with torch-ac, minigrid")
    parser.add_argument("--task", default="doorkey16", choices=exploration_runs.TASKS)
    parser.add_argument("--steps", type=int, default=2**20, help="env steps of each side")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "peer"))
    parser.add_argument("--page", action="store_true", help="Rewrite the exploration page.")
    args = parser.parse_args(argv)
    from agents.scripts.configs import CONFIGS  # Plain data: no TensorFlow.

    env_id = CONFIGS[args.task]()["env"]
    sitting = common.new_sitting()
    cache = os.path.join(args.out, "xla-cache")
    shutil.rmtree(cache, ignore_errors=True)
    for side in ("peer", "ours-cold", "ours-warm"):  # Warm: the cache the cold run filled.
        directory = os.path.join(args.out, side)
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        if side == "peer":
            measured = run_peer(args.peer_python, env_id, args.steps, args.seed, directory)
        else:
            measured = run_ours(args.task, args.steps, args.seed, directory, cache)
        rate = measured["steps"] / measured["seconds"]
        common.append_record(
            RECORDS, sitting, side=side, task=args.task, env_id=env_id, seed=args.seed,
            steps_per_second=rate, **measured,
        )  # fmt: skip
        print(f"{side}: {measured['steps']:,} env steps in {measured['seconds']:.1f} s "
              f"({rate:,.0f}/s), final training return {measured['final_return']:.3f}")  # fmt: skip
    if args.page:
        exploration_page.write(common.read_records(exploration_page.RECORDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
