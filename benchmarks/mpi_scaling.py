"""MPI scaling: training env steps/s with 1 and 2 ranks on an env-heavy task, and the final return.

The task is `SlowPendulum-v0`: Pendulum-v1 whose step also spins the CPU for `--env_cost_us`
(default 200 µs, about a MuJoCo locomotion step with its frame skip). MuJoCo need not be installed,
and plain Pendulum (~20 µs a step) would leave the time to TensorFlow's per-step overhead, which
is no test of environment-bound scaling. Every rank runs the `pendulum` config unchanged (16 envs
in-process, rollouts of 128 steps, 10 epochs of 32 minibatches), TensorFlow limited to its share of
the cores (`mpi.share_cores`). All runs train the same total env steps (`--steps`), so K ranks do
1/K as many updates of K times the batch.

Throughput is the env steps of all ranks over the wall time of the train phases after the first
(whose time includes tf.function tracing), timed on rank 0 between the loop's reports; the
evaluation phases in between are not counted. The final return is that of the deterministic policy
on 20 fresh episodes, shared among the ranks. Each run starts with `mpirun -n K` (K=1 too, so that
both pay the same launcher); the load average is printed, as other processes skew the timings.

Run: `python benchmarks/mpi_scaling.py [--ranks 1 2] [--steps 98304] [--env_cost_us 200]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import gymnasium

PHASES = 4  # Train phases, each followed by a short evaluation.
EVAL_EPISODES = 20
MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")


class _Spin(gymnasium.Wrapper):
    """Adds a fixed CPU cost to every step (a busy wait, as a physics engine would compute)."""

    def __init__(self, env: gymnasium.Env, seconds: float) -> None:
        super().__init__(env)
        self._seconds = seconds

    def step(self, action):
        deadline = time.perf_counter() + self._seconds
        while time.perf_counter() < deadline:
            pass
        return self.env.step(action)


def _register(cost_us: float) -> None:
    from gymnasium.envs.classic_control.pendulum import PendulumEnv

    gymnasium.register(
        "SlowPendulum-v0",
        entry_point=lambda **kwargs: _Spin(PendulumEnv(**kwargs), cost_us * 1e-6),
        max_episode_steps=200,
    )


def worker(steps: int, cost_us: float, seed: int) -> None:
    """One rank of a run; rank 0 prints the measurements as a JSON line."""
    from agents.scripts import configs
    from agents.tools import mpi
    from agents.training.run import Run

    world = mpi.init_world()
    threads = mpi.share_cores(world)
    _register(cost_us)
    config = configs.pendulum()
    config.update(
        env="SlowPendulum-v0",
        train_steps=steps,
        train_every=steps // PHASES,
        eval_episodes=1,  # The shortest evaluation between phases.
        checkpoint_every=10 * steps,
    )
    run_dir = world.bcast(tempfile.mkdtemp(prefix="mpi_scaling_") if world.is_root else None)
    run = Run(config, run_dir, seed, world)
    try:
        marks = [(time.perf_counter(), "start", 0)]
        for report in run.loop():
            marks.append((time.perf_counter(), report.phase, report.metrics["env_steps"]))
        scores = run.evaluate(EVAL_EPISODES)
    finally:
        run.close()
        if world.is_root:
            shutil.rmtree(run_dir, ignore_errors=True)
    # A train phase runs from the previous mark (an eval report, or the start) to its report.
    phases = [(b[0] - a[0], b[2] - a[2]) for a, b in zip(marks, marks[1:]) if b[1] == "train"]
    seconds = sum(s for s, _ in phases[1:])
    if world.is_root:
        result = dict(
            ranks=world.size,
            threads=threads,
            env_steps=run.env_steps,
            seconds=seconds,
            steps_per_second=sum(n for _, n in phases[1:]) / seconds,
            eval_mean=statistics.fmean(scores),
            eval_std=statistics.pstdev(scores),
            wall=marks[-1][0] - marks[0][0],
        )
        print(json.dumps(result), flush=True)


def launch(ranks: int, args: argparse.Namespace) -> dict:
    command = [MPIRUN, "-n", str(ranks), sys.executable, os.path.abspath(__file__), "--worker"]
    command += [f"--steps={args.steps}", f"--env_cost_us={args.env_cost_us}", f"--seed={args.seed}"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode:
        raise RuntimeError(
            f"{ranks} ranks exited with {result.returncode}:\n{result.stderr[-3000:]}"
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def table(runs: list[dict]) -> str:
    header = ["ranks", "env steps", "train s", "env steps/s", "speed-up", "eval return", "wall s"]
    rows = [header]
    for run in runs:
        speedup = run["steps_per_second"] / runs[0]["steps_per_second"]
        rows.append(
            [
                str(run["ranks"]),
                f"{run['env_steps']:,}",
                f"{run['seconds']:.1f}",
                f"{run['steps_per_second']:,.0f}",
                f"{speedup:.2f}x",
                f"{run['eval_mean']:.1f} ± {run['eval_std']:.1f}",
                f"{run['wall']:.1f}",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(c.rjust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "| " + " | ".join("-" * (w - 1) + ":" for w in widths) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=98_304, help="Total training env steps.")
    parser.add_argument("--env_cost_us", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.steps, args.env_cost_us, args.seed)
        return
    call = 16 * 128 * max(args.ranks)  # Env steps of one training call of the widest run.
    if args.steps % (PHASES * call):
        parser.error(f"--steps must be a multiple of {PHASES * call} (whole calls per phase).")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load {load}; SlowPendulum-v0 (+{args.env_cost_us:g} µs/step)")
    runs = [launch(ranks, args) for ranks in args.ranks]
    print(table(runs))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"TF threads per rank: {[run['threads'] for run in runs]}; load after: {load}")


if __name__ == "__main__":
    main()
