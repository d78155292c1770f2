"""docs/results/learning.md, from the learning benchmark's records (the newest sitting per task)."""

from __future__ import annotations

import os
import statistics
from typing import NamedTuple

import numpy as np

from benchmarks import common
from benchmarks.common import EVAL_EPISODES  # By name: `save_curves`' source is in its digest.
from benchmarks.pages import claims
from benchmarks.pages.plots import Plot

PAGE = os.path.join(common.ROOT, "docs", "results", "learning.md")
RECORDS = os.path.join(common.RESULTS, "learning.jsonl")
TITLES = {"pendulum": "Pendulum-v1", "cartpole": "CartPole-v1"}


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

_INTRO = """# Learning curves: Pendulum and CartPole

Each (task, seed) trains its named config in a fresh process, stops at the last whole training
call within the task's budget (Pendulum 100k env steps, CartPole 60k), then the deterministic
policy plays 20 fresh episodes. "env steps/s" is training env steps over the loop's wall time,
evaluation phases and tracing included; "train call steps/s" is the median rate of single
training calls (rollout and update) after tracing; peak RSS is the child process's. Generated
from `benchmarks/results/learning.jsonl` by:

```sh
python -m benchmarks.learning --tasks pendulum --seeds 10 --page
python -m benchmarks.learning --tasks cartpole --seeds 3 --page
```

Stable-Baselines3 on the same tasks, side by side: [speed](speed.md).
"""


def newest(records: list[dict], task: str) -> list[dict]:
    """The records of `task` from the newest sitting that ran it."""
    return common.sitting([record for record in records if record["task"] == task])


def section(task: str, runs: list[dict]) -> list[str]:
    loads = [run["load"] for run in runs]
    evals = [run["eval_mean"] for run in runs]
    first = runs[0]
    target = TARGETS.get(task)
    near = claims.margin(claims.median(evals), target.median_eval) if target else ""
    lines = [
        f"## {TITLES.get(task, task)}",
        "",
        f"![{TITLES.get(task, task)} eval curves](learning_{task}.png)",
        "",
        f"{first['date']} | {first['machine']} | commit {first['commit']} | the `{task}` config "
        f"| load {min(loads):.1f}-{max(loads):.1f}",
        "",
        "| seed | env steps | eval (20 ep.) | wall s | env steps/s | train call steps/s "
        "| peak RSS MB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        lines.append(
            f"| {run['seed']} | {run['env_steps']:,} | {run['eval_mean']:.1f} ± "
            f"{run['eval_std']:.1f} | {run['seconds']:.1f} | {run['steps_per_second']:,.0f} | "
            f"{run['call_steps_per_second']:,.0f} | {run['rss_mb']:.0f} |"
        )
    lines += [
        "",
        f"Over the {len(runs)} seeds: median {claims.median(evals):.1f}{near}, mean "
        f"{statistics.fmean(evals):.1f}, worst {min(evals):.1f}; median "
        f"{claims.median(r['steps_per_second'] for r in runs):,.0f} env steps/s end to end, "
        f"{claims.median(r['call_steps_per_second'] for r in runs):,.0f} in training calls; "
        f"peak RSS {max(r['rss_mb'] for r in runs):.0f} MB{memory_by_compiling(runs)}.",
        "",
    ]
    lines += [f"- {'PASS' if passed else 'FAIL'} {text}" for passed, text in first["checks"]]
    return [*lines, ""]


def memory_by_compiling(runs: list[dict]) -> str:
    """The peak RSS of runs that compiled programs into XLA's cache against that of runs that
    read them from it, in words ("" for records made before the count was kept)."""
    if any("compiled_programs" not in run for run in runs):
        return ""
    compiled = [run["rss_mb"] for run in runs if run["compiled_programs"] > 0]
    read = [run["rss_mb"] for run in runs if run["compiled_programs"] == 0]
    if not compiled:
        return " (every run read its programs from XLA's cache)"
    if not read:
        return " (every run compiled programs into XLA's cache)"
    return (
        f" ({len(compiled)} run(s) that compiled programs into XLA's cache: up to "
        f"{max(compiled):.0f} MB; {len(read)} that read them from it: up to {max(read):.0f} MB)"
    )


def page(records: list[dict]) -> str:
    lines = [_INTRO]
    for task in TITLES:
        runs = newest(records, task)
        if runs:
            lines += section(task, runs)
    return "\n".join(lines)


def save_curves(task: str, runs: list[dict], path: str) -> str:
    """Saves a PNG of the eval curve (its record's `curve`) of every seed of `task`; returns its
    path, stamped with the records it shows."""
    from agents.training import curves as plot

    curves = {f"seed {run['seed']}": np.asarray(run["curve"]).T for run in runs}
    target = TARGETS[task]
    title = f"{target.env}: eval score of the deterministic policy (last: {EVAL_EPISODES} episodes)"
    return plot.plot_runs(curves, path, title, target=target.median_eval)


def plots(records: list[dict], out: str = os.path.dirname(PAGE)) -> list[Plot]:
    """The page's plots (`<out>/learning_<task>.png`), from the newest sitting of each task
    whose records hold their curves (records before `curve` was kept have none to draw)."""
    from agents.training import curves

    found = []
    for task in TARGETS:
        runs = newest(records, task)
        if runs and all("curve" in run for run in runs):
            path = os.path.join(out, f"learning_{task}.png")
            draw = lambda t=task, r=runs, p=path: save_curves(t, r, p)  # noqa: E731
            found.append(Plot(path, runs, draw, code=(save_curves, curves.plot_runs)))
    return found
