"""End-to-end comparison with Stable-Baselines3 PPO: wall time and final score on the same budget.

Per task and round, alternating (SB3 on one torch thread, ours from an empty XLA cache, SB3 on
two threads, ours again on the cache the first filled), each side trains in a whole process
timed from spawn to exit, as a user meets it:

- SB3: `python -m benchmarks.sb3_driver train` under `--sb3-python` with RL-Zoo's tuned settings
  as its `hyperparams/ppo.yml` gives them (Pendulum-v1: 4 envs x 1024, batch 64, 10 epochs,
  gSDE, no normalization; CartPole-v1: 8 envs x 32, batch 256, 20 epochs, linear lr and clip;
  SB3's defaults on 8 envs x 256 for HalfCheetah-v5); the process ends after saving the model.
- ours: `python -m agents.scripts.train --config=<task> --set train_steps=<budget>` (its periodic
  eval phases, the final checkpoint, the curve and the policy export included), first cold (a
  fresh XDG_CACHE_HOME: a user's first run of the config compiles everything), then warm (the
  same cache: the user's next run). `pendulum_native` trains on Pendulum as TensorFlow ops
  against SB3's Pendulum, and is scored on gymnasium's.

Round r seeds every run with r. Then, untimed, each run's final deterministic policy plays 20
fresh episodes: SB3 with `evaluate_policy` (raw rewards), ours with `Run.evaluate` on the
restored checkpoint (`--child`). Both round the budget up to whole rollouts; "env steps" says
what each trained. Writes `<out>/vs_sb3.md`, keeps the runs under `<out>/vs_sb3`, appends a
record per run to `benchmarks/results/vs_sb3.jsonl` (SB3's with `threads`, ours with `cache`);
`--page` rewrites docs/results/speed.md from the newest sitting.

Run: `python -m benchmarks.vs_sb3 --sb3-python /path/to/sb3/bin/python
[--tasks pendulum cartpole cheetah] [--steps N] [--rounds 5] [--out benchmarks/out] [--page]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time

from benchmarks import common
from benchmarks.pages import speed_page

DRIVER = "benchmarks.sb3_driver"  # Run from the repository's root under `--sb3-python`.
BUDGETS = {
    "pendulum": 100_000,
    "cartpole": 100_000,
    "cheetah": 200_000,
    "pendulum_native": 100_000,  # Against SB3's Pendulum: the env as TensorFlow ops.
}


def child(run_dir: str) -> dict[str, float]:
    """Evaluates the latest checkpoint of a training run in this process."""
    from agents.runtime import tf_loading

    tf_loading.import_tensorflow()  # As train does: its TF settings (oneDNN off).
    from agents.config import files
    from agents.training.run import Run

    # Scored on gymnasium's env, also when trained natively.
    config = dict(files.load_config(run_dir), native_env=False)
    run = Run(config, run_dir, seed=0)
    try:
        scores = run.evaluate(common.EVAL_EPISODES)
        env_steps = run.env_steps
    finally:
        run.close()
    mean, std = statistics.fmean(scores), statistics.pstdev(scores)
    return dict(env_steps=env_steps, eval_mean=mean, eval_std=std)


ROUND = (("sb3", 1), ("ours", "cold"), ("sb3", 2), ("ours", "warm"))  # A round's runs, in order.


def run_sb3(python: str, task: str, budget: int, seed: int, directory: str, threads: int) -> dict:
    """Trains (timed) on `threads` torch threads and evaluates (untimed) SB3 PPO; returns its
    measurements."""
    model = os.path.abspath(os.path.join(directory, "model"))
    task = task.removesuffix("_native")  # SB3 trains on gymnasium's env of the same id.
    command = [python, "-m", DRIVER, "train", task, str(budget), str(seed), model, str(threads)]
    log = os.path.join(directory, "train.log")
    stdout, seconds = common.timed_process(command, log, cwd=common.ROOT)
    result = dict(common.last_json(stdout), seconds=seconds, threads=threads)
    command = [python, "-m", DRIVER, "eval", task, str(seed), model, str(common.EVAL_EPISODES)]
    stdout, _ = common.timed_process(command, os.path.join(directory, "eval.log"), cwd=common.ROOT)
    return dict(result, **common.last_json(stdout))


def run_ours(task: str, budget: int, seed: int, directory: str, cache_home: str) -> dict:
    """Trains (timed) with `agents.scripts.train`, its XLA cache under `cache_home`, and
    evaluates (untimed); returns its measurements."""
    from agents.scripts import configs  # Plain data: no TensorFlow.

    overrides = [f"train_steps={budget}"]
    if budget < configs.CONFIGS[task]()["train_every"]:  # At least one train phase in the budget.
        overrides.append(f"train_every={budget}")
    logdir = os.path.join(directory, "logdir")
    command = [sys.executable, "-m", "agents.scripts.train", f"--config={task}"]
    command += [f"--logdir={logdir}", f"--seed={seed}"]
    command += [arg for override in overrides for arg in ("--set", override)]
    # The cache of the round, as a user's default cache: no flags of this process's own.
    env = common.checkout_env(
        without=("TF_XLA_FLAGS", "AGENTS_XLA_CACHE"), XDG_CACHE_HOME=cache_home
    )
    train_log = os.path.join(directory, "train.log")
    _, seconds = common.timed_process(command, train_log, env=env)
    (run_name,) = os.listdir(logdir)
    run_dir = os.path.join(logdir, run_name)
    # run_child empties its run_dir argument: give it a fresh one, the run to evaluate before it.
    result = common.run_child(__spec__.name, [run_dir], os.path.join(directory, "eval"))
    return dict(result, seconds=seconds)


def run_round(python: str, task: str, budget: int, seed: int, out: str) -> list[dict]:
    """The runs of `ROUND` on one task, budget and seed; ours share a cache new to the round."""
    results, cache_home = [], os.path.join(out, f"{task}-round{seed}", "cache")
    shutil.rmtree(cache_home, ignore_errors=True)
    for side, setting in ROUND:
        directory = os.path.join(out, f"{task}-round{seed}", f"{side}-{setting}")
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        print(f"{task} round {seed}: {side} ({setting}) ...", file=sys.stderr)
        if side == "sb3":
            measured = dict(side=side, **run_sb3(python, task, budget, seed, directory, setting))
        else:
            measured = run_ours(task, budget, seed, directory, cache_home)
            measured = dict(side=side, cache=setting, **measured)
        results.append(measured)
        print(f"  {measured['seconds']:.1f} s, eval {measured['eval_mean']:.1f}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    """Runs the comparison, prints and saves the report; returns 0."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sb3-python", required=True, help="a Python with stable-baselines3")
    parser.add_argument("--tasks", nargs="+", choices=list(BUDGETS), default=list(BUDGETS))
    parser.add_argument("--steps", type=int, help="env-step budget of every task (default: each)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of four runs per task")
    parser.add_argument(
        "--out", default=common.DEFAULT_OUT, help="directory of the report and runs"
    )
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/speed.md")
    args = parser.parse_args(argv)
    budgets = {task: args.steps or BUDGETS[task] for task in args.tasks}
    runs_dir = os.path.join(args.out, "vs_sb3")
    start, records = time.perf_counter(), []
    started, revision, host = time.strftime("%Y-%m-%d %H:%M:%S"), common.commit(), common.machine()
    for task in args.tasks:
        for seed in range(args.rounds):
            load = round(os.getloadavg()[0], 2)
            for measured in run_round(args.sb3_python, task, budgets[task], seed, runs_dir):
                record = dict(started=started, date=time.strftime("%Y-%m-%d %H:%M"))
                record.update(commit=revision, machine=host, load=load, task=task)
                record.update(round=seed, budget=budgets[task], **measured)
                records.append(record)
                with open(speed_page.RECORDS, "a", encoding="utf-8") as file:
                    file.write(json.dumps(record) + "\n")
    if args.page:
        with open(speed_page.PAGE, "w", encoding="utf-8") as file:
            file.write(speed_page.page(common.read_records(speed_page.RECORDS)))
    text = "\n\n".join(
        [common.machine_line(time.perf_counter() - start), speed_page.table(records)]
    )
    with open(os.path.join(args.out, "vs_sb3.md"), "w") as handle:
        handle.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    common.run_script(main, child)
