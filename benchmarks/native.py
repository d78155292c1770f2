"""Native environments: whole-process wall time and the score on gymnasium's own env.

Per config and seed, `python -m agents.scripts.train --config=<config> --seed=<seed>` runs in a
fresh process, timed from spawn to exit as a user meets it (import, XLA compile or cache load,
training, evaluation phases, checkpoints, the curve and the policy export). Then, untimed, the
exported policy plays 20 deterministic episodes of gymnasium's env of the same id (`agents.
evaluate`), so the score is the real env's, not the native one's. `--gym` adds the same configs
with `native_env=False` (gymnasium envs in Python) beside them, alternating.

A sitting starts from an empty XLA compile cache (a fresh `XDG_CACHE_HOME`), so each config's
first run compiles as a user's first run does. Every run (and every steady-state figure) appends a
record to `benchmarks/results/native.jsonl`; `--page` rewrites docs/results/native.md from them.

`--steady` measures instead, in this process, the steady state of `cartpole_native` with 1,024
envs after compiling: the PPO rollout alone (sampling, buffer writes and the env, no update: calls
of one step less than a rollout of 16 or of 128 steps, the buffer emptied between them), and
whole training calls (rollouts with their updates), best of 5 calls each.

Run: `python -m benchmarks.native [--configs cartpole_native pendulum_native] [--seeds 3]
[--gym] [--steady] [--page] [--out benchmarks/out]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

from benchmarks import common
from benchmarks.pages import native_page

EPISODES = 20
CONFIGS = (
    "cartpole_native",
    "cartpole_native_fast",
    "pendulum_native",
    "acrobot_native",
    "mountaincar_native",
    "mountaincar_continuous_native",
)


def run(config: str, seed: int, native: bool, runs_dir: str) -> dict:
    """Train one run in its own process; returns its figures."""
    logdir = os.path.join(runs_dir, f"{config}-{'native' if native else 'gym'}-{seed}")
    shutil.rmtree(logdir, ignore_errors=True)
    command = [sys.executable, "-m", "agents.scripts.train", f"--config={config}"]
    command += [f"--seed={seed}", f"--logdir={logdir}", "--set", f"native_env={native}"]
    os.makedirs(logdir)
    _, seconds = common.timed_process(command, os.path.join(logdir, "stderr.log"))
    (run_dir,) = [os.path.join(logdir, name) for name in os.listdir(logdir) if name != "stderr.log"]
    return dict(run_dir=run_dir, seconds=seconds)


def score(run_dir: str, seed: int) -> dict:
    """The policy's deterministic episodes on gymnasium's env of the run's id."""
    import agents
    from agents.config.files import read_config_file
    from agents.training.metrics_log import read_metrics

    _, config, _ = read_config_file(os.path.join(run_dir, "config.yaml"))
    evaluation = agents.evaluate(run_dir, config["env"], episodes=EPISODES, seed=10_000 + seed)
    steps = max(record["env_steps"] for record in read_metrics(run_dir))
    return dict(env=config["env"], mean=evaluation.mean, std=evaluation.std, env_steps=steps)


def steady(envs: int = 1024) -> list[dict]:
    """Env steps per second of the rollout alone and of whole calls, `cartpole_native`."""
    import tempfile

    from agents.runtime import tf_loading

    tf_loading.import_tensorflow()  # As train does: its TF settings.
    import tensorflow as tf

    from agents import tools
    from agents.scripts import configs
    from agents.training.run import Run

    rows = []
    runs = (
        ("cartpole_native", {"num_agents": envs, "rollouts_per_call": 1}),
        ("cartpole_native", {"num_agents": envs, "rollouts_per_call": 1, "rollout_length": 128}),
        ("cartpole_native", {"num_agents": envs}),
        ("cartpole_native_fast", {}),
    )
    for name, changes in runs:
        config = dict(getattr(configs, name)(), **changes)
        run = Run(config, tempfile.mkdtemp(), seed=0)
        steps = config["rollout_length"] - 1

        def steps_alone(run=run, steps=steps):  # The step loop of a call, without its update.
            with run.agent.deferred_updates():
                return tools.simulate_steps(run.train_env, run.agent, steps)

        rollout = tf.function(steps_alone, autograph=False, jit_compile=True)

        def best(call, after=lambda: None):
            times = []
            for _ in range(6):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
                after()
            return min(times[1:])  # The first compiles.

        count = config["num_agents"]
        per_call = config["rollout_length"] * config["rollouts_per_call"] * count
        whole = per_call / best(run.train_call)
        rollouts, length = config["rollouts_per_call"], config["rollout_length"]
        shape = f"{count} x {length}" if rollouts == 1 else f"{count} x {rollouts} x {length}"
        if config["rollouts_per_call"] == 1:
            alone = steps * count / best(rollout, run.agent.discard_rollout)
            rows.append(dict(config=name, shape=f"{count} x {steps}", what="rollout alone"))
            rows[-1]["steps_per_second"] = alone
        rows.append(dict(config=name, shape=shape, what="whole call (rollouts and updates)"))
        rows[-1]["steps_per_second"] = whole
        run.close()
        print(rows[-1], flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--gym", action="store_true", help="also train on gymnasium's envs")
    parser.add_argument("--steady", action="store_true", help="steady-state speeds instead")
    parser.add_argument("--page", action="store_true", help="rewrite docs/results/native.md")
    parser.add_argument("--out", default=common.DEFAULT_OUT)
    args = parser.parse_args()
    sitting = common.new_sitting()
    kind = "steady" if args.steady else "gym" if args.gym else "native"

    def record(figures: dict) -> None:
        common.append_record(native_page.RECORDS, sitting, kind=kind, **figures)

    if args.steady:
        for row in steady():
            record(row)
    else:
        # An empty compile cache for the sitting: each config's first run compiles.
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="native-xla-")
        runs_dir = os.path.join(args.out, "native")
        for config in args.configs:
            for seed in range(args.seeds):
                for native in (True, False) if args.gym else (True,):
                    figures = run(config, seed, native, runs_dir)
                    figures.update(score(figures.pop("run_dir"), seed))
                    figures.update(config=config, seed=seed, native=native)
                    record(figures)
                    print(
                        f"{config} seed {seed} {'native' if native else 'gymnasium'}: "
                        f"{figures['seconds']:.1f} s, {figures['env_steps']:,} env steps, "
                        f"eval {figures['mean']:.1f} ± {figures['std']:.1f}",
                        flush=True,
                    )
        shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)
    text = native_page.page(common.read_records(native_page.RECORDS))
    if args.page:
        with open(native_page.PAGE, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
