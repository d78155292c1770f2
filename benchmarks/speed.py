"""Speed of the compiled hot path: start-up, tracing, rollout step and gradient step.

Each task runs in a fresh child process (`--child`), so start-up is measured as a user meets it:
from the process being spawned to the end of the first training call. The child builds two
Runs of the task's config that differ only in `update_epochs` (the config's E and 1) and times
their compiled training calls (a whole rollout, then the update) after tracing. With R rollout
steps and M minibatches per epoch, a call costs R * rollout + E * M * gradient + targets, so

    gradient step = (T(E) - T(1)) / ((E - 1) * M)

A third `Run` object, in a second fresh child (as a training run has one per process), has a
rollout longer than the calls timed and runs R simulation steps per call without an update: its
time per step is the rollout step. What remains of T(1) is the fixed cost of an update (GAE
targets, the XLA call, metrics):

    update overhead = T(1) - R * rollout step - M * gradient step

Prints one table row per task: seconds to import TensorFlow and the package, to build the
Run, to the end of the first training call (tracing and compiling included), tracing alone
(first call minus a steady call), the rollout and gradient step in ms, and env steps/s of steady
training calls.

XLA's persistent compilation cache is off unless `--xla-cache` (then a second run shows what a
user's second start of the same config costs).

Run: `python -m benchmarks.speed [--tasks pendulum cartpole] [--calls 8] [--xla-cache]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import common

COLUMNS = (
    ("import s", "{import_s:.1f}"),
    ("session s", "{session_s:.1f}"),
    ("to 1st step s", "{first_step_s:.1f}"),
    ("trace+compile s", "{trace_s:.2f}"),
    ("rollout step ms", "{rollout_ms:.3f}"),
    ("gradient step ms", "{gradient_ms:.3f}"),
    ("update overhead ms", "{overhead_ms:.1f}"),
    ("train call steps/s", "{steps_per_second:,.0f}"),
)


def _timed_calls(call, calls: int) -> tuple[float, float]:
    """(seconds of the first call, median seconds of `calls` later calls)."""
    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def child(task: str, calls: int, part: str, spawned: float) -> dict[str, float]:
    """Measures one part of a task in this process; `spawned` is the parent's time.time().

    `part` "update" times start-up and the training calls of the config and of its one-epoch
    variant; "rollout" times calls of rollout steps alone. Each part runs in a fresh process, as
    a training run does: timed after two other Runs in the same process, the rollout step of
    Pendulum measured 0.74-0.80 ms against 0.62 ms first (alternating, two rounds each).
    """
    from agents.runtime import tf_loading

    tf_loading.import_tensorflow()  # As train does: quiet, with XLA's cache unless it is off.
    import tensorflow as tf

    from agents import tools
    from agents.scripts import configs
    from agents.training.run import Run

    imported = time.time()  # Read by the "update" part.
    config = getattr(configs, task)()
    with tempfile.TemporaryDirectory() as tmp:
        if part == "rollout":
            # Calls of R steps into a rollout of (calls + 2) * R steps: no update in the calls.
            no_update = dict(config, rollout_length=(calls + 2) * config["rollout_length"])
            run = Run(no_update, os.path.join(tmp, "rollout"), seed=0)
            steps = config["rollout_length"]
            rollout = tf.function(
                lambda: tools.simulate_steps(run.train_env, run.agent, steps), autograph=False
            )
            _, rollout_call = _timed_calls(rollout, calls)
            run.close()
            return dict(rollout_call=rollout_call)
        run = Run(config, os.path.join(tmp, "full"), seed=0)
        built = time.time()
        first, full = _timed_calls(run.train_call, calls)
        first_step = time.time()
        run.close()
        one_epoch = dict(config, update_epochs=1)
        run = Run(one_epoch, os.path.join(tmp, "one"), seed=0)
        _, single = _timed_calls(run.train_call, calls)
        run.close()
    return dict(
        import_s=imported - spawned,
        session_s=built - imported,
        first_step_s=first_step - spawned,
        trace_s=first - full,
        full=full,
        single=single,
    )


def measure(task: str, calls: int, env: dict) -> dict[str, float]:
    """Both parts of a task, each in a fresh child process; the table's measurements."""
    from agents.scripts import configs

    measured = {}
    for part in ("update", "rollout"):
        command = [sys.executable, "-m", __spec__.name, "--child", task, str(calls), part]
        result = subprocess.run(
            command + [repr(time.time())], stdout=subprocess.PIPE, text=True, check=True, env=env
        )
        measured.update(json.loads(result.stdout.strip().splitlines()[-1]))
    config = getattr(configs, task)()
    epochs, minibatches = config["update_epochs"], config["num_minibatches"]
    rollout, envs = config["rollout_length"], config["num_agents"]
    full, single, rollout_call = measured["full"], measured["single"], measured["rollout_call"]
    gradient = (full - single) / ((epochs - 1) * minibatches)
    return dict(
        import_s=measured["import_s"],
        session_s=measured["session_s"],
        first_step_s=measured["first_step_s"],
        trace_s=measured["trace_s"],
        rollout_ms=1e3 * rollout_call / rollout,
        gradient_ms=1e3 * gradient,
        overhead_ms=1e3 * (single - rollout_call - minibatches * gradient),
        steps_per_second=rollout * envs / full,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--tasks", nargs="+", default=["pendulum", "cartpole"])
    parser.add_argument("--calls", type=int, default=8, help="timed calls after the first")
    parser.add_argument(
        "--xla-cache",
        action="store_true",
        help="use XLA's persistent cache, as train does (default: off, every start compiles)",
    )
    args = parser.parse_args(argv)
    env = common.checkout_env()
    if not args.xla_cache:
        env["AGENTS_XLA_CACHE"] = "0"
    rows = []
    for task in args.tasks:
        measured = measure(task, args.calls, env)
        rows.append([task] + [form.format(**measured) for _, form in COLUMNS])
        print(f"{task}: {measured}", file=sys.stderr)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')} | {common.cores()} CPUs (load {load}) | "
        f"Python {platform.python_version()} | XLA cache {'on' if args.xla_cache else 'off'}\n"
    )
    print(common.table(["task"] + [name for name, _ in COLUMNS], rows))
    return 0


if __name__ == "__main__":
    common.run_script(main, child)
