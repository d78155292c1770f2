"""RND benchmark: exploration with and without intrinsic reward on a sparse-reward pixel task.

Each (config, seed) trains in a fresh child process (`--child`): `minigrid_rnd` (RND) and its
control `minigrid` (the same agent, `int_coef` 0), for `--steps` rounded down to whole rollouts,
in 9 to 11 equal train reports. Per report a run records the mean extrinsic score of the training
episodes (stochastic policy) and the distinct cells visited by the train envs; then it evaluates
the deterministic policy on 20 episodes. An episode succeeded iff its return is > 0 (MiniGrid
pays 1 - 0.9 * steps / max_steps at the goal). A random walk almost never reaches the far corner
of the 16x16 room in 100 steps, but an agent may find the goal by chance ("found at", the
first report with a success); a seed *reached the reward* when
the stochastic policy succeeds in >= half of the last report's training episodes. Eval is shown
apart: the greedy policy can loop in a partially observed grid. Env steps/s: training steps over
the loop's wall time. Every run appends a record (figures, curve, commit, machine, load, date) to
`benchmarks/results/rnd.jsonl`; `--page` rewrites docs/results/rnd.md and rnd.png from the newest
sitting (otherwise the report goes to `<out>/rnd.md`, `<out>/rnd.png`). Exits 1 on FAIL.

Run: `python benchmarks/rnd.py [--seeds 3] [--steps N] [--config minigrid_rnd] [--set KEY=VALUE
...] [--page] [--out DIR]` (`--set` overrides both agents' configs, e.g. `native_env=True`: the
same frames from MiniGrid as TensorFlow ops).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import append_record, new_sitting, run_script  # noqa: E402
from learning import DEFAULT_OUT, EVAL_EPISODES, run_child, table  # noqa: E402
from plots import Plot, save  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "results", "rnd.jsonl")
PAGE = os.path.join(os.path.dirname(HERE), "docs", "results", "rnd.md")
REPORTS = 10  # Train reports per run, give or take one.
REACH_SUCCESS = 0.5  # Success rate of the last report's training episodes that counts as reached.
CONTROL = "minigrid"
STYLES = {"RND": ("tab:red", "-"), "control": ("tab:blue", "--")}  # Color, line style.
RUN_COLUMNS = (
    ("env steps", "{env_steps:,}"),
    ("found at", "{found_at}"),
    ("train success", "{train_success:.0%}"),
    ("train score", "{train_score:.2f}"),
    (f"eval ({EVAL_EPISODES} ep.)", "{eval_mean:.2f}"),
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


def schedule(steps: int, call: int) -> tuple[int, int]:
    """`(train_steps, train_every)`: most whole calls within `steps`, in about REPORTS reports."""
    calls = max(1, steps // call)
    counts = range(min(calls, REPORTS - 1), min(calls, REPORTS + 1) + 1)
    count = max(counts, key=lambda r: (calls // r * r, -abs(r - REPORTS), r))
    return calls // count * count * call, calls // count * call


def child(name: str, seed: int, steps: int, overrides: str, run_dir: str) -> dict:
    """Train and evaluate one run of config `name` (with `overrides`, space-separated
    `key=value`s) in this process; returns the measurements."""

    from agents.config.values import apply_overrides
    from agents.runtime import tf_loading
    from agents.scripts import configs

    tf_loading.import_tensorflow()  # As train does: its TF settings (oneDNN off, XLA's cache).
    from agents.training.run import Run

    config = apply_overrides(getattr(configs, name)(), overrides.split())
    train_steps, train_every = schedule(steps, config["rollout_length"] * config["num_agents"])
    config.update(train_steps=train_steps, train_every=train_every)
    run = Run(config, run_dir, seed)
    # Reports give only the mean score; the success rate needs the training episodes' returns.
    episodes: list[float] = []
    run.on_train_episodes = episodes.extend
    curve, success, metrics = [], math.nan, {}
    try:
        start = time.perf_counter()
        for report in run.loop():
            if report.phase == "train":
                metrics = report.metrics
                cells = metrics.get("visited_cells", math.nan)
                curve.append((metrics["env_steps"], report.score, cells))
                success = statistics.fmean(r > 0 for r in episodes) if episodes else math.nan
                episodes.clear()
        seconds = time.perf_counter() - start
        scores = run.evaluate(EVAL_EPISODES)
    finally:
        run.close()
    found = [steps for steps, score, _ in curve if score > 0]
    return dict(
        env_steps=run.env_steps,
        curve=curve,
        found_at=f"{found[0]:,.0f}" if found else "never",
        train_success=success,
        train_score=curve[-1][1],
        eval_mean=statistics.fmean(scores),
        cells=curve[-1][2],
        intrinsic_reward=metrics.get("intrinsic_reward", math.nan),
        steps_per_second=run.env_steps / seconds,
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
    runs_table = table(["agent", "seed"] + [name for name, _ in run_columns], runs)
    agents_table = table(["agent"] + [name for name, _ in agent_columns], agents)
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
python benchmarks/rnd.py --seeds {seeds}{set} --page
```
{overrides}
![RND vs control on MiniGrid-Empty-16x16](rnd.png)
"""


def sitting_results(records: list[dict]) -> dict[str, dict[int, dict]]:
    """agent -> seed -> run, of the newest sitting."""
    from common import sitting

    results: dict[str, dict[int, dict]] = {"RND": {}, "control": {}}
    for record in sitting(records):
        results[record["agent"]][record["seed"]] = record
    return results


def page(records: list[dict]) -> str:
    """docs/results/rnd.md: the newest sitting's tables and verdict."""
    results = sitting_results(records)
    runs = [run for by_seed in results.values() for run in by_seed.values()]
    if not runs:
        return "# Exploration with RND\n\nNo records yet: `python benchmarks/rnd.py --page`.\n"
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
        episodes=EVAL_EPISODES,
        seeds=seeds,
        set=f" --set {' '.join(overrides)}" if overrides else "",
        overrides=f"\nBoth configs run with `{' '.join(overrides)}`.\n" if overrides else "",
    )
    text, _ = report(results, seeds, info)
    return f"{intro}\n{text}\n"


def main(argv: list[str] | None = None) -> int:
    """Runs both agents on every seed, records them and reports; returns 1 on FAIL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per agent")
    parser.add_argument(
        "--steps", type=int, default=204_800, help="training env steps per run (100 rollouts)"
    )
    parser.add_argument("--config", default="minigrid_rnd", help="the RND config")
    parser.add_argument("--set", nargs="*", default=[], help="KEY=VALUE overrides of both agents")
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/rnd.md, rnd.png")
    parser.add_argument("--out", default=DEFAULT_OUT, help="directory of the report and runs")
    args = parser.parse_args(argv)
    from speed_matrix import read_records

    sitting = new_sitting(os.path.dirname(HERE))
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    start = time.perf_counter()
    for agent, name in (("RND", args.config), ("control", CONTROL)):
        for seed in range(args.seeds):
            print(f"{agent} ({name}) seed {seed} ...", file=sys.stderr)
            run_dir = os.path.join(args.out, "runs", f"{name}-seed{seed}")
            begun = time.perf_counter()
            arguments = [name, str(seed), str(args.steps), " ".join(args.set)]
            run = run_child(__file__, arguments, run_dir)
            append_record(
                RECORDS,
                sitting,
                config=args.config,
                overrides=args.set,
                agent=agent,
                seed=seed,
                steps=args.steps,
                wall_s=time.perf_counter() - begun,
                **run,
            )
            elapsed = time.perf_counter() - start
            print(f"  eval {run['eval_mean']:.2f}; {elapsed:.0f} s elapsed", file=sys.stderr)
    records = read_records(RECORDS)
    results = sitting_results(records)
    _, passed = report(results, args.seeds, "")
    directory = os.path.dirname(PAGE) if args.page else args.out
    text = page(records)
    with open(PAGE if args.page else os.path.join(args.out, "rnd.md"), "w") as handle:
        handle.write(text)
    print(text)
    print(f"saved {plots(records, directory)[0].draw()}", file=sys.stderr)
    return 0 if passed else 1


def plots(records: list[dict], directory: str = os.path.dirname(PAGE)) -> list[Plot]:
    """rnd.png in `directory`, drawn from the newest sitting of `records`."""
    results = sitting_results(records)
    config = next(iter(results["RND"].values()))["config"]
    seeds = len(results["RND"])
    title = f"{config} (RND) vs {CONTROL} (control), {seeds} seed(s)"
    path = os.path.join(directory, "rnd.png")
    return [Plot(path, results, lambda: save_plot(results, path, title), code=(save_plot,))]


if __name__ == "__main__":
    run_script(main, child)
