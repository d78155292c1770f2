"""docs/results/rnd.md and rnd.png, from the RND benchmark's records (the newest sitting)."""

from __future__ import annotations

import math
import os
import statistics

from benchmarks import common
from benchmarks.pages.plots import Plot, save

PAGE = os.path.join(common.ROOT, "docs", "results", "rnd.md")
RECORDS = os.path.join(common.RESULTS, "rnd.jsonl")
REACH_SUCCESS = 0.5  # Success rate of the last report's training episodes that counts as reached.
CONTROL = "minigrid"  # The RND config's control: the same agent, `int_coef` 0.
STYLES = {"RND": ("tab:red", "-"), "control": ("tab:blue", "--")}  # Color, line style.
RUN_COLUMNS = (
    ("env steps", "{env_steps:,}"),
    ("found at", "{found_at}"),
    ("train success", "{train_success:.0%}"),
    ("train score", "{train_score:.2f}"),
    (f"eval ({common.EVAL_EPISODES} ep.)", "{eval_mean:.2f}"),
    ("cells", "{cells:.0f}"),
    ("int. reward", "{intrinsic_reward:.3g}"),
    ("env steps/s", "{steps_per_second:,.0f}"),
)
AGENT_COLUMNS = (
    ("reached", "{reached}"),
    ("eval > 0", "{eval_reached}"),
    ("mean train score", "{train_score:.2f}"),
    ("mean eval", "{eval_mean:.2f}"),
    ("mean cells", "{cells:.1f}"),
    ("mean env steps/s", "{steps_per_second:,.0f}"),
)


def summarize(runs: list[dict]) -> dict:
    """Counts of seeds that reached the reward, and means over seeds, of one agent."""
    reached = sum(run["train_success"] >= REACH_SUCCESS for run in runs)
    evals = sum(run["eval_mean"] > 0 for run in runs)
    keys = ("train_score", "eval_mean", "cells", "steps_per_second")
    means = {key: statistics.fmean(run[key] for run in runs) for key in keys}
    n = len(runs)
    return dict(means, count=reached, reached=f"{reached}/{n}", eval_reached=f"{evals}/{n}")


def verdict(rnd: dict, control: dict, seeds: int) -> tuple[bool, str]:
    """The target line: RND reaches the reward in >= 2/3 of the seeds, the control in <= 1/3."""
    need, allow = math.ceil(2 * seeds / 3), seeds // 3
    passed = rnd["count"] >= need and control["count"] <= allow
    line = (
        f"{'PASS' if passed else 'FAIL'}  RND reaches the reward in {rnd['count']} of {seeds} "
        f"seeds (>= {need}) where the control does in {control['count']} of {seeds} (<= {allow})"
    )
    if rnd["count"] < need:
        line += (
            f"\nRND does not win: it reached the reward in only {rnd['count']} of {seeds} seeds."
        )
    elif not passed:
        line += "\nRND does not win: the control reached the reward too; this task and budget "
        line += "do not separate exploration from no exploration."
    return passed, line


def save_plot(results: dict[str, dict[int, dict]], path: str, title: str) -> str:
    """Saves the train score and visited cells of every run, one color per agent; returns `path`."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4.5), layout="constrained")
    score_axes, cell_axes = figure.subplots(1, 2)
    for agent, by_seed in results.items():
        for index, run in enumerate(by_seed.values()):
            steps, scores, cells = zip(*run["curve"])
            color, style = STYLES[agent]
            for axes, values in ((score_axes, scores), (cell_axes, cells)):
                label = agent if index == 0 else None
                axes.plot(steps, values, style, marker=".", color=color, label=label, alpha=0.8)
    score_axes.set(title="train mean extrinsic score", xlabel="env steps", ylabel="mean score")
    score_axes.set_ylim(-0.03, 1.03)  # MiniGrid returns lie in [0, 1].
    cell_axes.set(title="distinct cells visited (train envs)", xlabel="env steps", ylabel="cells")
    for axes in (score_axes, cell_axes):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.suptitle(title)
    return save(figure, path)


def report(results: dict[str, dict[int, dict]], seeds: int, info: str) -> tuple[str, bool]:
    """The markdown report of all runs, and whether the target passed. Cells visited are left
    out where no run counted them (native envs)."""
    every = [run for by_seed in results.values() for run in by_seed.values()]
    counted = any(not math.isnan(run["cells"]) for run in every)
    run_columns = [c for c in RUN_COLUMNS if counted or "cells" not in c[1]]
    agent_columns = [c for c in AGENT_COLUMNS if counted or "cells" not in c[1]]
    runs, agents, summaries = [], [], {}
    for agent, by_seed in results.items():
        for seed, run in by_seed.items():
            runs.append([agent, str(seed)] + [form.format(**run) for _, form in run_columns])
        summaries[agent] = summarize(list(by_seed.values()))
        agents.append([agent] + [form.format(**summaries[agent]) for _, form in agent_columns])
    passed, line = verdict(summaries["RND"], summaries["control"], seeds)
    note = (
        f"reached: the stochastic policy succeeds in >= {REACH_SUCCESS:.0%} of the training "
        "episodes of the last report; found at: first report with a training success."
    )
    runs_table = common.table(["agent", "seed"] + [name for name, _ in run_columns], runs)
    agents_table = common.table(["agent"] + [name for name, _ in agent_columns], agents)
    return "\n\n".join([info, runs_table, agents_table, note, line]), passed


_INTRO = """# Exploration with RND

`{config}` (the pixel agent with random network distillation) against its control `{control}`
(the same agent, `int_coef=0`) on MiniGrid-Empty-16x16, whose only reward is for reaching the far
corner within 100 steps: a random walk almost never finds it. Each (config, seed) trains
{steps:,} env steps in a fresh process; then the deterministic policy plays {episodes} episodes.
A seed *reached* the reward when the stochastic policy succeeds in at least half of the last
report's training episodes; *found at* is the first report with a success. Eval is shown apart:
the greedy policy can loop in a partially observed grid. Env steps/s is training env steps over
the loop's wall time (evaluation phases and tracing included). Generated from
`benchmarks/results/rnd.jsonl` by:

```sh
pip install -e ".[minigrid]"
python -m benchmarks.rnd --seeds {seeds}{set} --page
```
{overrides}
![RND vs control on MiniGrid-Empty-16x16](rnd.png)
"""


def sitting_results(records: list[dict]) -> dict[str, dict[int, dict]]:
    """agent -> seed -> run, of the newest sitting."""
    results: dict[str, dict[int, dict]] = {"RND": {}, "control": {}}
    for record in common.sitting(records):
        results[record["agent"]][record["seed"]] = record
    return results


def page(records: list[dict]) -> str:
    """docs/results/rnd.md: the newest sitting's tables and verdict."""
    results = sitting_results(records)
    runs = [run for by_seed in results.values() for run in by_seed.values()]
    if not runs:
        return "# Exploration with RND\n\nNo records yet: `python -m benchmarks.rnd --page`.\n"
    first, seeds = runs[0], len(results["RND"])
    loads = [run["load"] for run in runs]
    dates = sorted(run["date"] for run in runs)
    info = (
        f"{dates[0]}-{dates[-1][11:]} | {first['machine']} | commit {first['commit']} | load "
        f"{min(loads):.1f}-{max(loads):.1f} | {sum(run['wall_s'] for run in runs):.0f} s in all"
    )
    overrides = first.get("overrides", [])
    intro = _INTRO.format(
        config=first["config"],
        control=CONTROL,
        steps=first["steps"],
        episodes=common.EVAL_EPISODES,
        seeds=seeds,
        set=f" --set {' '.join(overrides)}" if overrides else "",
        overrides=f"\nBoth configs run with `{' '.join(overrides)}`.\n" if overrides else "",
    )
    text, _ = report(results, seeds, info)
    return f"{intro}\n{text}\n"


def plots(records: list[dict], directory: str = os.path.dirname(PAGE)) -> list[Plot]:
    """rnd.png in `directory`, drawn from the newest sitting of `records`."""
    results = sitting_results(records)
    config = next(iter(results["RND"].values()))["config"]
    seeds = len(results["RND"])
    title = f"{config} (RND) vs {CONTROL} (control), {seeds} seed(s)"
    path = os.path.join(directory, "rnd.png")
    return [Plot(path, results, lambda: save_plot(results, path, title), code=(save_plot,))]
