"""MPI scaling: training env steps/s with 1 and 2 ranks on an env-heavy task, and the final return.

The task is `SlowPendulum-v0`: Pendulum-v1 whose step also spins the CPU for `--env_cost_us`
(default 200 µs, about a MuJoCo locomotion step with its frame skip). MuJoCo need not be installed,
and plain Pendulum (~20 µs a step) would leave the time to TensorFlow's per-step overhead, which
is no test of environment-bound scaling. Every rank runs the `pendulum` config (its 16 envs
in-process, as `configs.pendulum` sets its rollouts and minibatches), TensorFlow limited to its
share of the cores (`collectives.share_cores`). All runs train the same total env steps (`--steps`):
with `--mpi_batch per_rank` K ranks do 1/K as many updates of K times the batch; with `global`
the 16 envs are split over the ranks, so every run makes one process's updates.

Throughput is the env steps of all ranks over the wall time of the train phases after the first
(whose time includes tf.function tracing), timed on rank 0 between the loop's reports; the
evaluation phases in between are not counted. The final return is that of the deterministic policy
on 20 fresh episodes, shared among the ranks. Each run starts with `mpirun -n K` (K=1 too, so that
both pay the same launcher); the load average is printed, as other processes skew the timings.

Each run appends a record per launch to `benchmarks/results/mpi_scaling.jsonl` (figures, seed,
batch mode, commit, machine, load, date); `--page` rewrites docs/results/mpi_scaling.md from the
records of the newest sitting.

Run: `python -m benchmarks.mpi_scaling [--ranks 1 2] [--seeds 0 1 2] [--mpi_batch per_rank global]
[--steps 98304] [--env_cost_us 200] [--page]`.
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

from benchmarks import common
from benchmarks.pages import mpi_scaling_page

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


def worker(steps: int, cost_us: float, seed: int, mpi_batch: str) -> None:
    """One rank of a run; rank 0 prints the measurements as a JSON line."""
    from agents.scripts import configs
    from agents.tools import collectives, mpi
    from agents.training.loop import phases
    from agents.training.run import Run

    world = mpi.init_world()
    threads = collectives.share_cores(world)
    _register(cost_us)
    config = configs.pendulum()
    config.update(
        env="SlowPendulum-v0",
        train_steps=steps,
        train_every=steps // PHASES,
        eval_episodes=1,  # The shortest evaluation between phases.
        checkpoint_every=10 * steps,
        mpi_batch=mpi_batch,
    )
    run_dir = world.bcast(tempfile.mkdtemp(prefix="mpi_scaling_") if world.is_root else None)
    run = Run(config, run_dir, seed, world)
    try:
        marks = [(time.perf_counter(), "start", 0)]
        for report in phases(run):
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


def launch(ranks: int, seed: int, mpi_batch: str, args: argparse.Namespace) -> dict:
    command = [MPIRUN, "-n", str(ranks), sys.executable, "-m", __spec__.name, "--worker"]
    command += [f"--steps={args.steps}", f"--env_cost_us={args.env_cost_us}", f"--seed={seed}"]
    command += ["--mpi_batch", mpi_batch]
    env = common.checkout_env(TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode:
        raise RuntimeError(
            f"{ranks} ranks exited with {result.returncode}:\n{result.stderr[-3000:]}"
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=98_304, help="Total training env steps.")
    parser.add_argument("--env_cost_us", type=float, default=200.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument(
        "--mpi_batch", nargs="+", default=["per_rank"], choices=["per_rank", "global"]
    )
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)  # The worker's.
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--page", action="store_true", help="Rewrite the results page.")
    args = parser.parse_args()
    if args.worker:
        worker(args.steps, args.env_cost_us, args.seed, args.mpi_batch[0])
        return
    from agents.scripts import configs  # Plain data: no TensorFlow.

    rollout = dict(configs.pendulum())["rollout_length"]
    call = 16 * rollout * max(args.ranks)  # Env steps of one training call of the widest run.
    if args.steps % (PHASES * call):
        parser.error(f"--steps must be a multiple of {PHASES * call} (whole calls per phase).")
    host, revision = common.machine(), common.commit()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    print(f"{common.machine_line()}; SlowPendulum-v0 (+{args.env_cost_us:g} µs/step)", flush=True)
    for seed in args.seeds:
        for mpi_batch in args.mpi_batch:
            for ranks in args.ranks:  # Alternating, so that load affects every run alike.
                if ranks == 1 and mpi_batch != args.mpi_batch[0]:
                    continue  # One process has one batch whatever the mode.
                load = os.getloadavg()[0]
                result = launch(ranks, seed, mpi_batch, args)
                record = dict(
                    started=started,
                    date=time.strftime("%Y-%m-%d %H:%M"),
                    commit=revision,
                    machine=host,
                    load=round(load, 2),
                    seed=seed,
                    mpi_batch=mpi_batch if ranks > 1 else "one process",
                    env_cost_us=args.env_cost_us,
                    **result,
                )
                with open(mpi_scaling_page.RECORDS, "a", encoding="utf-8") as file:
                    file.write(json.dumps(record) + "\n")
                print(
                    f"seed {seed}, {ranks} rank(s), {record['mpi_batch']}: "
                    f"{result['steps_per_second']:,.0f} env steps/s, "
                    f"eval {result['eval_mean']:.1f}",
                    flush=True,
                )
    text = mpi_scaling_page.page(common.read_records(mpi_scaling_page.RECORDS))
    print(text)
    if args.page:
        with open(mpi_scaling_page.PAGE, "w", encoding="utf-8") as file:
            file.write(text)


if __name__ == "__main__":
    main()
