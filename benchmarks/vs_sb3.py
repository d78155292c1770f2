"""End-to-end comparison with Stable-Baselines3 PPO: wall time and final score on the same budget.

Per task and round, alternating (SB3, ours, SB3, ours, ...), each side trains in a whole process
timed from spawn to exit, as a user meets it:

- SB3: `python -m benchmarks.sb3_driver train` under `--sb3-python` (RL-Zoo's tuned settings
  for Pendulum-v1, 4 envs x 1024, batch 64, 10 epochs, gSDE, VecNormalize; for CartPole-v1, 8 envs
  x 32, batch 256, 20 epochs, linear lr and clip; SB3's defaults on 8 envs x 256 for
  HalfCheetah-v5), one torch thread; the process ends after saving the model.
- ours: `python -m agents.scripts.train --config=<task> --set train_steps=<budget>` (its periodic
  eval phases, the final checkpoint, the curve and the policy export included). `pendulum_native`
  trains on Pendulum as TensorFlow ops against SB3's Pendulum, and is scored on gymnasium's.

Round r seeds both with r. Then, untimed, each side's final deterministic policy plays 20 fresh
episodes: SB3 with `evaluate_policy` (VecNormalize frozen, raw rewards), ours with
`Run.evaluate` on the restored checkpoint (`--child`). Both round the budget up to whole
rollouts; "env steps" says what each trained. Ratio is SB3 wall / ours wall. Writes
`<out>/vs_sb3.md`, keeps the runs under `<out>/vs_sb3`, appends a record per run to
`benchmarks/results/vs_sb3.jsonl`; `--page` rewrites docs/results/speed.md from the newest
sitting.

Run: `python -m benchmarks.vs_sb3 --sb3-python /path/to/sb3/bin/python
[--tasks pendulum cartpole cheetah] [--steps N] [--rounds 1] [--out benchmarks/out] [--page]`.
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
HEADER = [
    "task",
    "round",
    "budget",
    "env steps SB3 / ours",
    "SB3 wall s",
    "ours wall s",
    "ratio SB3/ours",
    f"SB3 eval ({common.EVAL_EPISODES} ep.)",
    f"ours eval ({common.EVAL_EPISODES} ep.)",
]


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


def run_sb3(python: str, task: str, budget: int, seed: int, directory: str) -> dict:
    """Trains (timed) and evaluates (untimed) SB3 PPO; returns its measurements."""
    model = os.path.abspath(os.path.join(directory, "model"))
    task = task.removesuffix("_native")  # SB3 trains on gymnasium's env of the same id.
    command = [python, "-m", DRIVER, "train", task, str(budget), str(seed), model]
    log = os.path.join(directory, "train.log")
    stdout, seconds = common.timed_process(command, log, cwd=common.ROOT)
    result = dict(common.last_json(stdout), seconds=seconds)
    command = [python, "-m", DRIVER, "eval", task, str(seed), model, str(common.EVAL_EPISODES)]
    stdout, _ = common.timed_process(command, os.path.join(directory, "eval.log"), cwd=common.ROOT)
    return dict(result, **common.last_json(stdout))


def run_ours(task: str, budget: int, seed: int, directory: str) -> dict:
    """Trains (timed) with `agents.scripts.train` and evaluates (untimed); returns measurements."""
    from agents.scripts import configs  # Plain data: no TensorFlow.

    overrides = [f"train_steps={budget}"]
    if budget < configs.CONFIGS[task]()["train_every"]:  # At least one train phase in the budget.
        overrides.append(f"train_every={budget}")
    logdir = os.path.join(directory, "logdir")
    command = [sys.executable, "-m", "agents.scripts.train", f"--config={task}"]
    command += [f"--logdir={logdir}", f"--seed={seed}"]
    command += [arg for override in overrides for arg in ("--set", override)]
    _, seconds = common.timed_process(command, os.path.join(directory, "train.log"))
    (run_name,) = os.listdir(logdir)
    run_dir = os.path.join(logdir, run_name)
    # run_child empties its run_dir argument: give it a fresh one, the run to evaluate before it.
    result = common.run_child(__spec__.name, [run_dir], os.path.join(directory, "eval"))
    return dict(result, seconds=seconds)


def run_round(python: str, task: str, budget: int, seed: int, out: str) -> dict[str, dict]:
    """One SB3 run, then one of ours, on the same task, budget and seed."""
    results = {}
    for side in ("sb3", "ours"):
        directory = os.path.join(out, f"{task}-round{seed}", side)
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        print(f"{task} round {seed}: {side} ...", file=sys.stderr)
        if side == "sb3":
            results[side] = run_sb3(python, task, budget, seed, directory)
        else:
            results[side] = run_ours(task, budget, seed, directory)
        measured = results[side]
        print(f"  {measured['seconds']:.1f} s, eval {measured['eval_mean']:.1f}", file=sys.stderr)
    return results


def row(task: str, label: str, budget: int, sb3: dict, ours: dict) -> list[str]:
    def score(run: dict) -> str:
        spread = f" ± {run['eval_std']:.1f}" if "eval_std" in run else ""
        return f"{run['eval_mean']:.1f}{spread}"

    steps = f"{sb3['env_steps']:,} / {ours['env_steps']:,}" if "env_steps" in sb3 else ""
    return [
        task,
        label,
        f"{budget:,}",
        steps,
        f"{sb3['seconds']:.1f}",
        f"{ours['seconds']:.1f}",
        f"{sb3['seconds'] / ours['seconds']:.2f}x",
        score(sb3),
        score(ours),
    ]


def median_run(runs: list[dict]) -> dict:
    """Median wall time and eval score over rounds."""
    return {key: statistics.median(run[key] for run in runs) for key in ("seconds", "eval_mean")}


def report(results: dict[str, list[dict]], budgets: dict[str, int], seconds: float) -> str:
    """The markdown report: machine line, table and each task's median wall-time ratio.

    A median row holds the medians over rounds of each side's wall time and mean eval; its ratio is
    that of the median wall times.
    """
    rows, lines = [], []
    for task, rounds in results.items():
        budget = budgets[task]
        for seed, pair in enumerate(rounds):
            rows.append(row(task, str(seed), budget, pair["sb3"], pair["ours"]))
        sb3, ours = (median_run([pair[side] for pair in rounds]) for side in ("sb3", "ours"))
        rows.append(row(task, "median", budget, sb3, ours))
        ratio = sb3["seconds"] / ours["seconds"]
        lines.append(f"{task}: SB3 takes {ratio:.2f}x our wall time for {budget:,} env steps")
    return "\n\n".join([common.machine_line(seconds), common.table(HEADER, rows), "\n".join(lines)])


def main(argv: list[str] | None = None) -> int:
    """Runs the comparison, prints and saves the report; returns 0."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sb3-python", required=True, help="a Python with stable-baselines3")
    parser.add_argument("--tasks", nargs="+", choices=list(BUDGETS), default=list(BUDGETS))
    parser.add_argument("--steps", type=int, help="env-step budget of every task (default: each)")
    parser.add_argument("--rounds", type=int, default=1, help="SB3/ours pairs per task")
    parser.add_argument(
        "--out", default=common.DEFAULT_OUT, help="directory of the report and runs"
    )
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/speed.md")
    args = parser.parse_args(argv)
    budgets = {task: args.steps or BUDGETS[task] for task in args.tasks}
    runs_dir = os.path.join(args.out, "vs_sb3")
    start, results = time.perf_counter(), {}
    started, revision, host = time.strftime("%Y-%m-%d %H:%M:%S"), common.commit(), common.machine()
    for task in args.tasks:
        results[task] = []
        for seed in range(args.rounds):
            load = round(os.getloadavg()[0], 2)
            results[task].append(run_round(args.sb3_python, task, budgets[task], seed, runs_dir))
            with open(speed_page.RECORDS, "a", encoding="utf-8") as file:
                for side, measured in results[task][-1].items():
                    record = dict(started=started, date=time.strftime("%Y-%m-%d %H:%M"))
                    record.update(commit=revision, machine=host, load=load, task=task)
                    record.update(round=seed, budget=budgets[task], side=side, **measured)
                    file.write(json.dumps(record) + "\n")
    if args.page:
        with open(speed_page.PAGE, "w", encoding="utf-8") as file:
            file.write(speed_page.page(common.read_records(speed_page.RECORDS)))
    text = report(results, budgets, time.perf_counter() - start)
    with open(os.path.join(args.out, "vs_sb3.md"), "w") as handle:
        handle.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    common.run_script(main, child)
