"""Learning benchmark: final scores, throughput and memory of the pendulum and cartpole configs.

Each (task, seed) trains in a fresh child process (`--child`), so that peak RSS is per run, from
`configs.<task>()` with `Run(config, run_dir, seed)`, then evaluates the deterministic policy
on 20 fresh episodes. A run stops at the last whole rollout within its task's env-step budget: the
configs round training up to whole train phases (e.g. pendulum 102,400 steps for 100k), and the
targets are scores reached within the budget. Throughput is training env steps over the wall time
of the loop, evaluation phases and tf.function tracing included; "train call steps/s" is the
median rate of single training calls (rollout and update) after tracing. Peak RSS is the child's
`ru_maxrss`.

Prints a table per run, a summary per task and a PASS/FAIL line per target; writes the table as
`<out>/learning.md`, a PNG of the eval curves of all seeds per task, and keeps the run directories
under `<out>/runs`. Exits with 1 if a target fails.

Every run also appends a record per (task, seed) to `benchmarks/results/learning.jsonl` (figures,
eval curve, targets met, commit, machine, load, date); the plots are drawn from those records;
`--page` rewrites docs/results/learning.md and its plots from the newest sitting of each task.

Run: `python benchmarks/learning.py [--seeds 3] [--tasks pendulum cartpole] [--page]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from typing import NamedTuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learning_page  # noqa: E402
from common import cores, run_script  # noqa: E402
from plots import Plot  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EVAL_EPISODES = 20
DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
# (header, format of a run's or a task summary's measurements) of the two tables.
RUN_COLUMNS = (
    ("env steps", "{env_steps:,}"),
    (f"eval ({EVAL_EPISODES} ep.)", "{eval_mean:.1f} ± {eval_std:.1f}"),
    ("wall s", "{seconds:.1f}"),
    ("env steps/s", "{steps_per_second:,.0f}"),
    ("train call steps/s", "{call_steps_per_second:,.0f}"),
    ("peak RSS MB", "{rss_mb:.0f}"),
)
TASK_COLUMNS = (
    ("median eval", "{median_eval:.1f}"),
    ("worst eval", "{worst_eval:.1f}"),
    ("median env steps/s", "{steps_per_second:,.0f}"),
    ("median train call steps/s", "{call_steps_per_second:,.0f}"),
    ("max RSS MB", "{rss_mb:.0f}"),
)


class Target(NamedTuple):
    """What a task's runs must reach."""

    env: str
    budget: int  # Training env steps.
    median_eval: float
    worst_eval: float | None
    steps_per_second: float  # Median over seeds.
    max_rss_mb: float | None


TARGETS = {
    "pendulum": Target("Pendulum-v1", 100_000, -200.0, -300.0, 8_000.0, 700.0),
    "cartpole": Target("CartPole-v1", 60_000, 495.0, None, 12_000.0, None),
}


def child(task: str, seed: int, run_dir: str) -> dict[str, float]:
    """Train and evaluate one run in this process; returns the measurements."""
    from agents.scripts import configs

    result = train_and_evaluate(getattr(configs, task)(), TARGETS[task].budget, seed, run_dir)
    return dict(result, curve=eval_curve(run_dir, result))


def train_and_evaluate(config: dict, budget: int, seed: int, run_dir: str) -> dict[str, float]:
    """Train `config` to the last whole rollout within `budget` env steps, then evaluate it.

    Shared by the benchmarks that train in a child process (learning, mujoco_scores).
    """
    from agents.runtime import tf_loading

    tf_loading.import_tensorflow()  # As train does: its TF settings (oneDNN off, XLA's cache).
    from agents.training.run import Run
    from agents.training.tensorboard_log import TensorBoardLog

    train_call = config["rollout_length"] * config["num_agents"]
    run = Run(config, run_dir, seed)
    log = TensorBoardLog(run_dir)  # The curves, as a Trainer's run writes them.
    try:
        start = time.perf_counter()
        reports = []
        for report in run.loop(should_stop=lambda: run.env_steps + train_call > budget):
            log.write(report, run.env_steps)
            reports.append(report)
        seconds = time.perf_counter() - start
        scores = run.evaluate(EVAL_EPISODES)
    finally:
        log.close()
        run.close()
    return dict(
        env_steps=run.env_steps,
        eval_mean=statistics.fmean(scores),
        eval_std=statistics.pstdev(scores),
        seconds=seconds,
        steps_per_second=run.env_steps / seconds,
        # The last training call of each train phase: rollout and update, after tracing.
        call_steps_per_second=statistics.median(
            [r.metrics["env_steps_per_second"] for r in reports if r.phase == "train"] or [0.0]
        ),
        rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux.
    )


def run_child(script: str, args: list[str], run_dir: str) -> dict:
    """Runs `script --child *args run_dir` in a fresh process; returns its last JSON line.

    Its stderr goes to `<run_dir>.log`. Shared with the other benchmarks.
    """
    shutil.rmtree(run_dir, ignore_errors=True)  # A Run would resume an old checkpoint.
    command = [sys.executable, os.path.abspath(script), "--child", *args, run_dir]
    with open(run_dir + ".log", "w") as log:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=log, text=True)
    if result.returncode:
        with open(run_dir + ".log") as log:
            tail = "".join(log.readlines()[-20:])
        raise RuntimeError(f"{' '.join(args)} exited with {result.returncode}:\n{tail}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def summarize(runs: list[dict[str, float]]) -> dict[str, float]:
    """Median and worst eval, median throughput and max RSS over a task's seeds."""
    evals = [run["eval_mean"] for run in runs]
    return dict(
        env_steps=max(run["env_steps"] for run in runs),
        median_eval=statistics.median(evals),
        worst_eval=min(evals),
        steps_per_second=statistics.median(run["steps_per_second"] for run in runs),
        call_steps_per_second=statistics.median(run["call_steps_per_second"] for run in runs),
        rss_mb=max(run["rss_mb"] for run in runs),
    )


def checks(task: str, s: dict[str, float]) -> list[tuple[bool, str]]:
    """(passed, description) of each target of `task`, given its summary `s`."""
    t = TARGETS[task]
    results = [
        (
            s["median_eval"] >= t.median_eval and s["env_steps"] <= t.budget,
            f"median eval {s['median_eval']:.1f} >= {t.median_eval:g} "
            f"at {s['env_steps']:,} <= {t.budget:,} env steps",
        ),
        (
            s["steps_per_second"] >= t.steps_per_second,
            f"median {s['steps_per_second']:,.0f} >= {t.steps_per_second:,.0f} env steps/s",
        ),
    ]
    if t.worst_eval is not None:
        passed = s["worst_eval"] >= t.worst_eval
        results.append((passed, f"worst eval {s['worst_eval']:.1f} >= {t.worst_eval:g}"))
    if t.max_rss_mb is not None:
        passed = s["rss_mb"] <= t.max_rss_mb
        results.append((passed, f"peak RSS {s['rss_mb']:.0f} MB <= {t.max_rss_mb:g} MB"))
    return [(passed, f"{t.env} {text}") for passed, text in results]


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table, aligned for the terminal too."""
    rows = [header, *rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(c.rjust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "| " + " | ".join("-" * (w - 1) + ":" for w in widths) + " |")
    return "\n".join(lines)


def eval_curve(run_dir: str, run: dict) -> list[list[float]]:
    """[env steps, eval mean score] of each eval phase, then the final evaluation.

    Shared by the benchmarks that train in a child process (learning, mujoco_scores).
    """
    from agents.training import curves as plot

    # A run stopped before its first eval phase has no eval summaries, only the final score.
    steps, scores = (
        plot.read_curve(run_dir, "eval") if plot.has_events(run_dir, "eval") else ((), ())
    )
    return [[float(x), float(y)] for x, y in zip(steps, scores)] + [
        [float(run["env_steps"]), float(run["eval_mean"])]
    ]


def save_curves(task: str, runs: list[dict], path: str) -> str:
    """Saves a PNG of the eval curve (its record's `curve`) of every seed of `task`; returns its
    path, stamped with the records it shows."""
    from agents.training import curves as plot

    curves = {f"seed {run['seed']}": np.asarray(run["curve"]).T for run in runs}
    target = TARGETS[task]
    title = f"{target.env}: eval score of the deterministic policy (last: {EVAL_EPISODES} episodes)"
    return plot.plot_runs(curves, path, title, target=target.median_eval)


def plots(records: list[dict], out: str = os.path.dirname(learning_page.PAGE)) -> list[Plot]:
    """The page's plots (`<out>/learning_<task>.png`), from the newest sitting of each task
    whose records hold their curves (records before `curve` was kept have none to draw)."""
    from agents.training import curves

    found = []
    for task in TARGETS:
        runs = learning_page.newest(records, task)
        if runs and all("curve" in run for run in runs):
            path = os.path.join(out, f"learning_{task}.png")
            draw = lambda t=task, r=runs, p=path: save_curves(t, r, p)  # noqa: E731
            found.append(Plot(path, runs, draw, code=(save_curves, curves.plot_runs)))
    return found


def report(results: dict[str, dict[int, dict[str, float]]], seconds: float) -> tuple[str, bool]:
    """The markdown report of all runs, and whether every target passed."""
    runs, tasks, lines = [], [], []
    for task, by_seed in results.items():
        for seed, run in by_seed.items():
            runs.append([task, str(seed)] + [form.format(**run) for _, form in RUN_COLUMNS])
        summary = summarize(list(by_seed.values()))
        tasks.append([task] + [form.format(**summary) for _, form in TASK_COLUMNS])
        lines += checks(task, summary)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    info = (
        f"{time.strftime('%Y-%m-%d %H:%M')} | {cores()} CPUs (load {load}) | "
        f"Python {platform.python_version()} | {seconds:.0f} s in all"
    )
    text = "\n\n".join(
        [
            info,
            table(["task", "seed"] + [name for name, _ in RUN_COLUMNS], runs),
            table(["task"] + [name for name, _ in TASK_COLUMNS], tasks),
            "\n".join(f"{'PASS' if passed else 'FAIL'}  {text}" for passed, text in lines),
        ]
    )
    return text, all(passed for passed, _ in lines)


def run_all(tasks: list[str], seeds: int, out: str) -> dict[str, dict[int, dict[str, float]]]:
    """Runs every task and seed in turn, logging progress to stderr."""
    start, count = time.perf_counter(), 0
    results: dict[str, dict[int, dict[str, float]]] = {}
    for task in tasks:
        run_dirs = {seed: os.path.join(out, "runs", f"{task}-seed{seed}") for seed in range(seeds)}
        results[task] = {}
        for seed, run_dir in run_dirs.items():
            count += 1
            print(f"[{count}/{len(tasks) * seeds}] {task} seed {seed} ...", file=sys.stderr)
            load = round(os.getloadavg()[0], 2)  # Before the run: the rest of the machine's.
            results[task][seed] = run_child(__file__, [task, str(seed)], run_dir)
            results[task][seed]["load"] = load
            elapsed = f"{time.perf_counter() - start:.0f} s elapsed"
            print(f"  eval {results[task][seed]['eval_mean']:.1f}; {elapsed}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark, prints and saves the report; returns 1 if a target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per task")
    parser.add_argument("--tasks", nargs="+", choices=sorted(TARGETS), default=list(TARGETS))
    parser.add_argument("--out", default=DEFAULT_OUT, help="directory of the report and runs")
    parser.add_argument(
        "--page", action="store_true", help="rewrite docs/results/learning.md and its plots"
    )
    args = parser.parse_args(argv)
    from speed_matrix import commit, machine, read_records  # Imports `table` from here.

    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    start = time.perf_counter()
    started, revision, host = time.strftime("%Y-%m-%d %H:%M:%S"), commit(ROOT), machine()
    results = run_all(args.tasks, args.seeds, args.out)
    text, passed = report(results, time.perf_counter() - start)
    with open(os.path.join(args.out, "learning.md"), "w") as handle:
        handle.write(text + "\n")
    with open(learning_page.RECORDS, "a", encoding="utf-8") as file:
        for task, by_seed in results.items():
            task_checks = checks(task, summarize(list(by_seed.values())))
            for seed, run in by_seed.items():
                record = dict(started=started, date=started[:16], commit=revision, machine=host)
                record.update(task=task, seed=seed, checks=task_checks, **run)
                file.write(json.dumps(record) + "\n")
    records = read_records(learning_page.RECORDS)
    for plot in plots(records, os.path.dirname(learning_page.PAGE) if args.page else args.out):
        print(f"saved {plot.draw()}", file=sys.stderr)
    if args.page:
        with open(learning_page.PAGE, "w", encoding="utf-8") as file:
            file.write(learning_page.page(records))
    print(text)
    return 0 if passed else 1


if __name__ == "__main__":
    run_script(main, child)
