"""MuJoCo benchmark: final scores of the MuJoCo configs over seeds, against published PPO.

Each (task, seed) trains in a fresh child process (`--child`) from `configs.<task>()` with
`Run(config, run_dir, seed)`, for the config's `train_steps` or `--steps` (which also becomes
`train_steps`, so a linear learning rate still decays to zero at the end), stopping at the last
whole rollout within that budget; then the deterministic policy plays 20 fresh episodes. Wall time
is the training loop's, its eval phases and tracing included; env steps/s is training env steps
over it. `--parallel N` runs N children at once, each with its share of the cores for TensorFlow
(wall times then depend on N: say which was used).

Reference points, published PPO scores named by their source: the mean over seeds reaches
TF-Agents' HalfCheetah 4,239, Hopper 2,530, Walker2d 2,971 and Reacher -7.71, and RL-Zoo's Ant
1,327 (TF-Agents publishes none), and no seed collapsed (each at least half its reference: -15.42
for Reacher). Humanoid-v5 is reported only.
Prints a table per run, a summary per task and PASS/FAIL lines and keeps the runs under
`<out>/runs`. Every run appends a record (figures, eval curve, commit, machine, load, date) to
`benchmarks/results/mujoco.jsonl`; `--page` rewrites docs/results/mujoco.md and its plots
(mean and min-max over seeds of the eval curve) from the newest sitting of each task, otherwise
they go to `<out>`. Exits 1 on FAIL.

Run: `python -m benchmarks.mujoco_scores [--tasks cheetah hopper walker ant reacher] [--seeds 3]
[--steps N] [--parallel 1] [--env_backend python] [--page] [--out benchmarks/out]`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import time

from benchmarks import common
from benchmarks.pages import mujoco_page

DEFAULT_TASKS = ["cheetah", "hopper", "walker", "ant", "reacher"]
TASK_COLUMNS = (
    ("env steps", "{env_steps:,}"),
    ("mean eval", "{mean_eval:.1f}"),
    ("median eval", "{median_eval:.1f}"),
    ("worst eval", "{worst_eval:.1f}"),
    ("median env steps/s", "{steps_per_second:,.0f}"),
)


def child(
    task: str, seed: int, steps: int, threads: int, backend: str, run_dir: str
) -> dict[str, float]:
    """Train and evaluate one run in this process; `steps` 0 keeps the config's budget;
    `backend` is the envs' `env_backend` (training and evaluation)."""
    from agents.runtime import tf_loading
    from agents.scripts import configs

    tf_loading.import_tensorflow()  # As train does: its TF settings (oneDNN off, XLA's cache).
    import tensorflow as tf

    if threads:  # Before TensorFlow runs an op.
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    config = dict(getattr(configs, task)(), env_backend=backend)
    if steps:
        config.update(train_steps=steps, train_every=min(config["train_every"], steps))
    result = common.train_and_evaluate(config, config["train_steps"], seed, run_dir)
    return dict(result, curve=common.eval_curve(run_dir, result))


def report(results: dict[str, dict[int, dict]], seconds: float, parallel: int) -> tuple[str, bool]:
    """The markdown report of all runs, and whether every check passed."""
    runs, tasks, lines = [], [], []
    for task, by_seed in results.items():
        for seed, run in sorted(by_seed.items()):
            runs.append([task, str(seed)] + [form.format(**run) for _, form in common.RUN_COLUMNS])
        summary = mujoco_page.summarize(list(by_seed.values()))
        tasks.append([task] + [form.format(**summary) for _, form in TASK_COLUMNS])
        lines += mujoco_page.checks(task, summary)
    info = f"{common.machine_line(seconds)} | {parallel} run(s) at a time"
    sections = [
        info,
        common.table(["task", "seed"] + [name for name, _ in common.RUN_COLUMNS], runs),
        common.table(["task"] + [name for name, _ in TASK_COLUMNS], tasks),
        "\n".join(f"{'PASS' if passed else 'FAIL'}  {text}" for passed, text in lines),
    ]
    return "\n\n".join(sections), all(passed for passed, _ in lines)


def record(args: argparse.Namespace, task: str, seed: int, run: dict) -> None:
    """Appends one run's record to the MuJoCo records."""
    common.append_record(
        mujoco_page.RECORDS,
        args.sitting,
        task=task,
        env=mujoco_page.REFERENCES[task].env,
        seed=seed,
        parallel=args.parallel,
        env_backend=args.env_backend,
        **run,
    )


def run_all(args: argparse.Namespace) -> dict[str, dict[int, dict]]:
    """Runs every (task, seed), `args.parallel` at a time; saves each task's PNG."""
    threads = max(1, common.cores() // args.parallel) if args.parallel > 1 else 0
    jobs = {
        (task, seed): os.path.join(args.out, "runs", f"mujoco-{task}-seed{seed}")
        for task in args.tasks
        for seed in range(args.seeds)
    }
    results: dict[str, dict[int, dict]] = {task: {} for task in args.tasks}
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        futures = {
            pool.submit(
                common.run_child,
                __spec__.name,
                [task, str(seed), str(args.steps), str(threads), args.env_backend],
                run_dir,
            ): (task, seed)
            for (task, seed), run_dir in jobs.items()
        }
        for count, future in enumerate(concurrent.futures.as_completed(futures), 1):
            task, seed = futures[future]
            results[task][seed] = run = future.result()
            record(args, task, seed, run)
            print(
                f"[{count}/{len(jobs)}] {task} seed {seed}: eval {run['eval_mean']:.1f} in "
                f"{run['seconds']:.0f} s; {time.perf_counter() - start:.0f} s elapsed",
                file=sys.stderr,
            )
    return results


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark, prints and saves the report; returns 1 if a check fails."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--tasks", nargs="+", choices=list(mujoco_page.REFERENCES), default=DEFAULT_TASKS
    )
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per task")
    parser.add_argument("--steps", type=int, default=0, help="env steps (default: the config's)")
    parser.add_argument("--parallel", type=int, default=1, help="children running at once")
    parser.add_argument(
        "--out", default=common.DEFAULT_OUT, help="directory of the report and runs"
    )
    parser.add_argument(
        "--env_backend",
        default="python",
        choices=("python", "gymnasium-sync", "gymnasium-async", "envpool"),
        help="what steps the envs, training and evaluation (env_backend)",
    )
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/mujoco.md")
    args = parser.parse_args(argv)
    args.sitting = common.new_sitting()
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    start = time.perf_counter()
    results = run_all(args)
    text, passed = report(results, time.perf_counter() - start, args.parallel)
    print(text)
    out = os.path.dirname(mujoco_page.PAGE) if args.page else args.out
    records = common.read_records(mujoco_page.RECORDS)
    for plot in mujoco_page.plots(records, out):
        print(f"saved {plot.draw()}", file=sys.stderr)
    with open(
        mujoco_page.PAGE if args.page else os.path.join(args.out, "mujoco.md"), "w"
    ) as handle:
        handle.write(mujoco_page.page(records))
    return 0 if passed else 1


if __name__ == "__main__":
    common.run_script(main, child)
