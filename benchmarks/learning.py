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

Run: `python -m benchmarks.learning [--seeds 3] [--tasks pendulum cartpole] [--page]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

from benchmarks import common
from benchmarks.pages import learning_page

TASK_COLUMNS = (
    ("median eval", "{median_eval:.1f}"),
    ("worst eval", "{worst_eval:.1f}"),
    ("median env steps/s", "{steps_per_second:,.0f}"),
    ("median train call steps/s", "{call_steps_per_second:,.0f}"),
    ("max RSS MB", "{rss_mb:.0f}"),
)


def child(task: str, seed: int, run_dir: str) -> dict[str, float]:
    """Train and evaluate one run in this process; returns the measurements."""
    from agents.scripts import configs

    result = common.train_and_evaluate(
        getattr(configs, task)(), learning_page.TARGETS[task].budget, seed, run_dir
    )
    return dict(result, curve=common.eval_curve(run_dir, result))


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
    t = learning_page.TARGETS[task]
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


def report(results: dict[str, dict[int, dict[str, float]]], seconds: float) -> tuple[str, bool]:
    """The markdown report of all runs, and whether every target passed."""
    runs, tasks, lines = [], [], []
    for task, by_seed in results.items():
        for seed, run in by_seed.items():
            runs.append([task, str(seed)] + [form.format(**run) for _, form in common.RUN_COLUMNS])
        summary = summarize(list(by_seed.values()))
        tasks.append([task] + [form.format(**summary) for _, form in TASK_COLUMNS])
        lines += checks(task, summary)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    info = (
        f"{time.strftime('%Y-%m-%d %H:%M')} | {common.cores()} CPUs (load {load}) | "
        f"Python {platform.python_version()} | {seconds:.0f} s in all"
    )
    text = "\n\n".join(
        [
            info,
            common.table(["task", "seed"] + [name for name, _ in common.RUN_COLUMNS], runs),
            common.table(["task"] + [name for name, _ in TASK_COLUMNS], tasks),
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
            cached = common.cached_programs()
            results[task][seed] = common.run_child(__spec__.name, [task, str(seed)], run_dir)
            results[task][seed]["load"] = load
            # A run that compiled (a first run of its programs) peaks higher than one that
            # read them from XLA's cache.
            results[task][seed]["compiled_programs"] = common.cached_programs() - cached
            elapsed = f"{time.perf_counter() - start:.0f} s elapsed"
            print(f"  eval {results[task][seed]['eval_mean']:.1f}; {elapsed}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark, prints and saves the report; returns 1 if a target fails."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per task")
    parser.add_argument(
        "--tasks",
        nargs="+",
        choices=sorted(learning_page.TARGETS),
        default=list(learning_page.TARGETS),
    )
    parser.add_argument(
        "--out", default=common.DEFAULT_OUT, help="directory of the report and runs"
    )
    parser.add_argument(
        "--page", action="store_true", help="rewrite docs/results/learning.md and its plots"
    )
    args = parser.parse_args(argv)
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    start = time.perf_counter()
    sitting = common.new_sitting()
    results = run_all(args.tasks, args.seeds, args.out)
    text, passed = report(results, time.perf_counter() - start)
    with open(os.path.join(args.out, "learning.md"), "w") as handle:
        handle.write(text + "\n")
    with open(learning_page.RECORDS, "a", encoding="utf-8") as file:
        for task, by_seed in results.items():
            task_checks = checks(task, summarize(list(by_seed.values())))
            for seed, run in by_seed.items():
                record = dict(sitting, date=sitting["started"][:16])
                record.update(task=task, seed=seed, checks=task_checks, **run)
                file.write(json.dumps(record) + "\n")
    records = common.read_records(learning_page.RECORDS)
    for plot in learning_page.plots(
        records, os.path.dirname(learning_page.PAGE) if args.page else args.out
    ):
        print(f"saved {plot.draw()}", file=sys.stderr)
    if args.page:
        with open(learning_page.PAGE, "w", encoding="utf-8") as file:
            file.write(learning_page.page(records))
    print(text)
    return 0 if passed else 1


if __name__ == "__main__":
    common.run_script(main, child)
