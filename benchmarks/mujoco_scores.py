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

Not called `mujoco.py`: a script's folder is first on `sys.path`, and a
`benchmarks/mujoco.py` would shadow the `mujoco` package for every benchmark and child process that
makes a MuJoCo env from here (`sb3_driver.py` and `vs_sb3.py` on HalfCheetah, and this one).

Run: `python benchmarks/mujoco_scores.py [--tasks cheetah hopper walker ant reacher] [--seeds 3]
[--steps N] [--parallel 1] [--env_backend python] [--page] [--out benchmarks/out]`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import sys
import time
from typing import NamedTuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import append_record, cores, machine_line, new_sitting, run_script  # noqa: E402
from learning import (  # noqa: E402
    DEFAULT_OUT,
    RUN_COLUMNS,
    eval_curve,
    run_child,
    table,
    train_and_evaluate,
)
from plots import Plot, save  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "results", "mujoco.jsonl")
PAGE = os.path.join(os.path.dirname(HERE), "docs", "results", "mujoco.md")


class Reference(NamedTuple):
    """A published PPO score that the mean eval over seeds must reach, and its source."""

    env: str
    source: str | None  # CleanRL, TF-Agents or RL-Zoo; None: no reference, report only.
    mean_eval: float | None

    def collapse(self) -> float:
        """The score each seed must reach: half the reference (twice it, for a negative one)."""
        return self.mean_eval / 2 if self.mean_eval > 0 else self.mean_eval * 2


REFERENCES = {
    "cheetah": Reference("HalfCheetah-v5", "TF-Agents", 4_239.0),
    "hopper": Reference("Hopper-v5", "TF-Agents", 2_530.0),
    "walker": Reference("Walker2d-v5", "TF-Agents", 2_971.0),
    "ant": Reference("Ant-v5", "RL-Zoo", 1_327.0),
    "reacher": Reference("Reacher-v5", "TF-Agents", -7.71),
    "humanoid": Reference("Humanoid-v5", None, None),
}
DEFAULT_TASKS = ["cheetah", "hopper", "walker", "ant", "reacher"]
# Published PPO scores at 1M env steps as each source gives them (mean ± std over its seeds).
PUBLISHED = {
    "cheetah": ("2,906 ± 1,129", "4,239", "5,819 ± 664"),
    "hopper": ("2,052 ± 314", "2,530", "2,410 ± 10"),
    "walker": ("2,891 ± 231", "2,971", "3,479 ± 822"),
    "reacher": ("—", "-7.71", "—"),
    "ant": ("—", "—", "1,327 ± 452"),
    "humanoid": ("—", "—", "—"),
}
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
    result = train_and_evaluate(config, config["train_steps"], seed, run_dir)
    return dict(result, curve=eval_curve(run_dir, result))


def summarize(runs: list[dict[str, float]]) -> dict[str, float]:
    evals = [run["eval_mean"] for run in runs]
    return dict(
        env_steps=max(run["env_steps"] for run in runs),
        mean_eval=statistics.fmean(evals),
        median_eval=statistics.median(evals),
        worst_eval=min(evals),
        steps_per_second=statistics.median(run["steps_per_second"] for run in runs),
    )


def checks(task: str, summary: dict[str, float]) -> list[tuple[bool, str]]:
    """(passed, description) of each check of `task` against its reference."""
    ref = REFERENCES[task]
    if ref.mean_eval is None:
        return []
    mean, worst, steps = summary["mean_eval"], summary["worst_eval"], summary["env_steps"]
    reference = f"{ref.source} {ref.mean_eval:g}"
    return [
        (mean >= ref.mean_eval, f"{ref.env} mean eval {mean:.1f} >= {reference}"),
        (
            worst >= ref.collapse(),
            f"{ref.env} worst seed {worst:.1f} >= {ref.collapse():g} (at {steps:,} steps)",
        ),
    ]


def save_curves(task: str, runs: dict[int, dict], path: str) -> str:
    """Saves a PNG of the eval curve over seeds (mean, min-max band); returns its path.

    Each seed's curve is its record's `curve`; the seeds are put on the grid of the env steps
    they share.
    """
    from matplotlib.figure import Figure

    curves = [np.array(run["curve"]).T for run in runs.values()]
    grid = np.array(sorted(set.intersection(*(set(steps.tolist()) for steps, _ in curves))))
    values = np.array([[dict(zip(s.tolist(), v))[x] for x in grid] for s, v in curves])
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.add_subplot()
    axes.plot(grid, values.mean(0), marker="." if len(grid) < 30 else None, label="mean")
    axes.fill_between(grid, values.min(0), values.max(0), alpha=0.25, label="min-max")
    ref = REFERENCES[task]
    if ref.mean_eval is not None:
        label = f"{ref.source} {ref.mean_eval:g}"
        axes.axhline(ref.mean_eval, color="gray", linestyle="--", linewidth=1, label=label)
    seeds = f"{len(curves)} seed{'s' if len(curves) > 1 else ''}"
    title = f"{ref.env}, {seeds}: deterministic eval return"
    axes.set(title=title, xlabel="env steps", ylabel="eval return")
    axes.grid(alpha=0.3)
    axes.legend()
    return save(figure, path)


def newest(records: list[dict]) -> dict[str, dict[int, dict]]:
    """task -> seed -> record, from the newest sitting that ran each task (in task order)."""
    found: dict[str, dict[int, dict]] = {}
    for task in [t for t in REFERENCES if any(r["task"] == t for r in records)]:
        mine = [record for record in records if record["task"] == task]
        started = mine[-1]["started"]
        found[task] = {r["seed"]: r for r in mine if r["started"] == started}
    return found


def shown(records: list[dict]) -> list[dict]:
    """The records the page shows: each task's newest sitting."""
    return [run for by_seed in newest(records).values() for run in by_seed.values()]


def plots(records: list[dict], out: str = os.path.dirname(PAGE)) -> list[Plot]:
    """The page's plots (`<out>/mujoco_<task>.png`), drawn from the records it shows."""
    return [
        Plot(
            path,
            by_seed,
            lambda t=task, b=by_seed, p=path: save_curves(t, b, p),
            code=(save_curves,),
        )
        for task, by_seed in newest(records).items()
        for path in [os.path.join(out, f"mujoco_{task}.png")]
    ]


_INTRO = """# MuJoCo

Each (task, seed) trains its named config in a fresh process to the last whole rollout within
the budget, then the deterministic policy plays 20 fresh episodes of the task. Env steps/s is
training env steps over the loop's wall time (evaluation phases and tracing included). The
reference columns are the published PPO scores of CleanRL, TF-Agents and RL-Zoo (RL-Zoo's with
its per-task tuned settings for HalfCheetah, Hopper and Walker2d, its defaults for Ant, which it
does not tune); a task passes when the mean over seeds reaches TF-Agents' score
(RL-Zoo's for Ant, where TF-Agents publishes none) and no seed falls below half of it. Generated
from `benchmarks/results/mujoco.jsonl` by:

```sh
pip install -e ".[mujoco]"
python benchmarks/mujoco_scores.py --seeds 3 --parallel 2 --page
```
"""


def page(records: list[dict]) -> str:
    """docs/results/mujoco.md from the newest sitting of each task."""
    results = newest(records)
    lines = [_INTRO]
    if not results:
        return "\n".join([*lines, "No records yet.", ""])
    seeds = max(len(by_seed) for by_seed in results.values())
    names = [f"seed {seed}" for seed in range(seeds)]
    lines += [
        f"| task (config) | {' | '.join(names)} | mean | CleanRL | TF-Agents | RL-Zoo |",
        "| --- |" + " ---: |" * (seeds + 4),
    ]
    for task, by_seed in results.items():
        places = digits(task)
        cells = [
            f"{by_seed[s]['eval_mean']:,.{places}f} ± {by_seed[s]['eval_std']:,.{places}f}"
            if s in by_seed
            else ""
            for s in range(seeds)
        ]
        mean = statistics.fmean(run["eval_mean"] for run in by_seed.values())
        first = next(iter(by_seed.values()))
        label = f"{REFERENCES[task].env} (`{task}`, {first['env_steps']:,} env steps)"
        lines.append(
            f"| {label} | {' | '.join(cells)} | **{mean:,.{places}f}** | "
            f"{' | '.join(PUBLISHED[task])} |"
        )
    lines.append("")
    for task, by_seed in results.items():
        runs = [by_seed[seed] for seed in sorted(by_seed)]
        first, loads = runs[0], [run["load"] for run in runs]
        lines += [
            f"## {REFERENCES[task].env}",
            "",
            f"![{REFERENCES[task].env} eval curves](mujoco_{task}.png)",
            "",
            f"{first['date']} | {first['machine']} | commit {first['commit']} | load "
            f"{min(loads):.1f}-{max(loads):.1f} | {first['parallel']} run(s) at a time | "
            f"env_backend {first['env_backend']}",
            "",
            table(
                ["seed"] + [name for name, _ in RUN_COLUMNS],
                [
                    [str(run["seed"])] + [form.format(**run) for _, form in RUN_COLUMNS]
                    for run in runs
                ],
            ),
            "",
        ]
        lines += [
            f"- {'PASS' if passed else 'FAIL'} {text}"
            for passed, text in checks(task, summarize(runs))
        ]
        lines.append("")
    return "\n".join(lines)


def digits(task: str) -> int:
    """Decimals of a task's returns on the page (Reacher's are a few units)."""
    return 2 if task == "reacher" else 0


def report(results: dict[str, dict[int, dict]], seconds: float, parallel: int) -> tuple[str, bool]:
    """The markdown report of all runs, and whether every check passed."""
    runs, tasks, lines = [], [], []
    for task, by_seed in results.items():
        for seed, run in sorted(by_seed.items()):
            runs.append([task, str(seed)] + [form.format(**run) for _, form in RUN_COLUMNS])
        summary = summarize(list(by_seed.values()))
        tasks.append([task] + [form.format(**summary) for _, form in TASK_COLUMNS])
        lines += checks(task, summary)
    info = f"{machine_line(seconds)} | {parallel} run(s) at a time"
    sections = [
        info,
        table(["task", "seed"] + [name for name, _ in RUN_COLUMNS], runs),
        table(["task"] + [name for name, _ in TASK_COLUMNS], tasks),
        "\n".join(f"{'PASS' if passed else 'FAIL'}  {text}" for passed, text in lines),
    ]
    return "\n\n".join(sections), all(passed for passed, _ in lines)


def record(args: argparse.Namespace, task: str, seed: int, run: dict) -> None:
    """Appends one run's record to `RECORDS`."""
    append_record(
        RECORDS,
        args.sitting,
        task=task,
        env=REFERENCES[task].env,
        seed=seed,
        parallel=args.parallel,
        env_backend=args.env_backend,
        **run,
    )


def run_all(args: argparse.Namespace) -> dict[str, dict[int, dict]]:
    """Runs every (task, seed), `args.parallel` at a time; saves each task's PNG."""
    threads = max(1, cores() // args.parallel) if args.parallel > 1 else 0
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
                run_child,
                __file__,
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=list(REFERENCES), default=DEFAULT_TASKS)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per task")
    parser.add_argument("--steps", type=int, default=0, help="env steps (default: the config's)")
    parser.add_argument("--parallel", type=int, default=1, help="children running at once")
    parser.add_argument("--out", default=DEFAULT_OUT, help="directory of the report and runs")
    parser.add_argument(
        "--env_backend",
        default="python",
        choices=("python", "gymnasium-sync", "gymnasium-async", "envpool"),
        help="what steps the envs, training and evaluation (env_backend)",
    )
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/mujoco.md")
    args = parser.parse_args(argv)
    from speed_matrix import read_records

    args.sitting = new_sitting(os.path.dirname(HERE))
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    start = time.perf_counter()
    results = run_all(args)
    text, passed = report(results, time.perf_counter() - start, args.parallel)
    print(text)
    out = os.path.dirname(PAGE) if args.page else args.out
    for plot in plots(read_records(RECORDS), out):
        print(f"saved {plot.draw()}", file=sys.stderr)
    with open(PAGE if args.page else os.path.join(args.out, "mujoco.md"), "w") as handle:
        handle.write(page(read_records(RECORDS)))
    return 0 if passed else 1


if __name__ == "__main__":
    run_script(main, child)
