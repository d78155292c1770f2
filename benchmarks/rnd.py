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

Run: `python -m benchmarks.rnd [--seeds 3] [--steps N] [--config minigrid_rnd] [--set KEY=VALUE
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

from benchmarks import common
from benchmarks.pages import rnd_page

REPORTS = 10  # Train reports per run, give or take one.


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
    from agents.training.loop import phases
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
        for report in phases(run):
            if report.phase == "train":
                metrics = report.metrics
                cells = metrics.get("visited_cells", math.nan)
                curve.append((metrics["env_steps"], report.score, cells))
                success = statistics.fmean(r > 0 for r in episodes) if episodes else math.nan
                episodes.clear()
        seconds = time.perf_counter() - start
        scores = run.evaluate(common.EVAL_EPISODES)
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


def main(argv: list[str] | None = None) -> int:
    """Runs both agents on every seed, records them and reports; returns 1 on FAIL."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per agent")
    parser.add_argument(
        "--steps", type=int, default=204_800, help="training env steps per run (100 rollouts)"
    )
    parser.add_argument("--config", default="minigrid_rnd", help="the RND config")
    parser.add_argument("--set", nargs="*", default=[], help="KEY=VALUE overrides of both agents")
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/rnd.md, rnd.png")
    parser.add_argument(
        "--out", default=common.DEFAULT_OUT, help="directory of the report and runs"
    )
    args = parser.parse_args(argv)
    sitting = common.new_sitting()
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    start = time.perf_counter()
    for agent, name in (("RND", args.config), ("control", rnd_page.CONTROL)):
        for seed in range(args.seeds):
            print(f"{agent} ({name}) seed {seed} ...", file=sys.stderr)
            run_dir = os.path.join(args.out, "runs", f"{name}-seed{seed}")
            begun = time.perf_counter()
            arguments = [name, str(seed), str(args.steps), " ".join(args.set)]
            run = common.run_child(__spec__.name, arguments, run_dir)
            common.append_record(
                rnd_page.RECORDS,
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
    records = common.read_records(rnd_page.RECORDS)
    results = rnd_page.sitting_results(records)
    _, passed = rnd_page.report(results, args.seeds, "")
    directory = os.path.dirname(rnd_page.PAGE) if args.page else args.out
    text = rnd_page.page(records)
    with open(rnd_page.PAGE if args.page else os.path.join(args.out, "rnd.md"), "w") as handle:
        handle.write(text)
    print(text)
    print(f"saved {rnd_page.plots(records, directory)[0].draw()}", file=sys.stderr)
    return 0 if passed else 1


if __name__ == "__main__":
    common.run_script(main, child)
