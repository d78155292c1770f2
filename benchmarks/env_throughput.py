"""Environment throughput of the batching layers, in env steps/s and as a ratio to a raw loop.

Rows, for Pendulum-v1 and CartPole-v1 with `--envs` environments each:

- raw loop: `gymnasium.make` envs stepped one after another in a Python loop; the baseline.
- BatchEnv: `tools.BatchEnv(envs, blocking=True)` in this process; adds stacking and action checks.
- BatchEnv+ExternalProcess: one child process per env, stepped in parallel (`blocking=False`);
  adds a pipe round trip per env and step, gains parallelism only with spare cores.
- simulate, tf loop: `tools.simulate` with `tools.MockAlgorithm` in an autograph `tf.range` loop
  inside one `tf.function`; adds `tf.numpy_function` calls and variable updates per step.
- simulate, call/step: one `tf.function` call per simulate step from Python, as a Python training
  loop calls it; adds the per-call dispatch cost.

Actions of the first three rows are sampled before timing; finished episodes are reset inside the
timed loop (`simulate` resets them itself). Each figure is the median of `--repeats` timed runs of
`--steps` batch steps after a short warm-up (tf.function tracing excluded); steps/s counts single
env steps, i.e. batch steps times `--envs`.

Each run appends one record per row to `benchmarks/results/env_throughput.jsonl` (rate, ratio,
commit, machine, load, date); `--page` rewrites docs/results/env_throughput.md from the records
of the newest sitting.

Run: `python -m benchmarks.env_throughput [--envs 8] [--steps 2000] [--repeats 3] [--markdown]
[--page]`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator

import gymnasium
import numpy as np

from agents import tools
from benchmarks import common
from benchmarks.pages import env_throughput_page

# TensorFlow is imported inside functions: ExternalProcess spawns its children, which re-import this
# script as a module, and a top-level TensorFlow import would cost every child seconds and memory.

ENV_IDS = ("Pendulum-v1", "CartPole-v1")
WARMUP_STEPS = 20
Runner = Callable[[int], None]  # Runs the given number of batch steps.


def _sample_actions(env_id: str, envs: int, steps: int) -> np.ndarray:
    """Pre-sampled random actions of shape [steps, envs, *action_shape]."""
    with gymnasium.make(env_id) as env:
        space = env.action_space
    space.seed(0)
    return np.asarray([[space.sample() for _ in range(envs)] for _ in range(steps)])


@contextlib.contextmanager
def _raw_loop(env_id: str, actions: np.ndarray) -> Iterator[Runner]:
    """Plain gymnasium envs stepped in a Python loop."""
    with contextlib.ExitStack() as stack:
        envs = [stack.enter_context(gymnasium.make(env_id)) for _ in range(actions.shape[1])]
        for index, env in enumerate(envs):
            env.reset(seed=index)

        def run(steps: int) -> None:
            for batch in actions[:steps]:
                for env, action in zip(envs, batch):
                    _, _, terminated, truncated, _ = env.step(action)
                    if terminated or truncated:
                        env.reset()

        yield run


@contextlib.contextmanager
def _batch_env(env_id: str, actions: np.ndarray, external: bool) -> Iterator[Runner]:
    """BatchEnv of in-process envs stepped in turn, or of ExternalProcess envs in parallel."""
    with contextlib.ExitStack() as stack:
        make = functools.partial(gymnasium.make, env_id)
        env = functools.partial(tools.ExternalProcess, make) if external else make
        batch = tools.BatchEnv(
            [stack.enter_context(env()) for _ in range(actions.shape[1])], blocking=not external
        )
        batch.reset(seed=0)

        def run(steps: int) -> None:
            for action in actions[:steps]:
                _, _, terminated, truncated, _ = batch.step(action)
                done = terminated | truncated
                if done.any():
                    batch.reset(np.flatnonzero(done))

        yield run


@contextlib.contextmanager
def _simulate(env_id: str, actions: np.ndarray, per_call: bool) -> Iterator[Runner]:
    """simulate with MockAlgorithm: all steps in one tf.function call, or one call per step."""
    import tensorflow as tf

    batch = tools.BatchEnv([gymnasium.make(env_id) for _ in range(actions.shape[1])], True)
    batch_env = tools.InGraphBatchEnv(batch)
    algo = tools.MockAlgorithm(batch_env)
    step = tf.function(lambda: tools.simulate(batch_env, algo, log=False))

    @tf.function
    def loop(steps: tf.Tensor) -> None:
        for _ in tf.range(steps):  # Autograph turns this into a tf.while_loop.
            tools.simulate(batch_env, algo, log=False)

    def call_per_step(steps: int) -> None:
        for _ in range(steps):
            step()

    with contextlib.closing(batch_env):
        # The loop gets a tensor, so that calls with other step counts do not retrace.
        yield call_per_step if per_call else lambda steps: loop(tf.constant(steps))


MODES = {
    "raw loop": _raw_loop,
    "BatchEnv": functools.partial(_batch_env, external=False),
    "BatchEnv+ExternalProcess": functools.partial(_batch_env, external=True),
    "simulate, tf loop": functools.partial(_simulate, per_call=False),
    "simulate, call/step": functools.partial(_simulate, per_call=True),
}


def _rate(run: Runner, steps: int, envs: int, repeats: int) -> float:
    """Median env steps/s over `repeats` timed runs, after a warm-up run."""
    run(WARMUP_STEPS)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(steps)
        rates.append(steps * envs / (time.perf_counter() - start))
    return statistics.median(rates)


def _machine_info() -> str:
    import tensorflow as tf

    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"{datetime.datetime.now():%Y-%m-%d %H:%M} | {common.cores()} CPUs (load {load}) | "
        f"Python {platform.python_version()} | TF {tf.__version__} | "
        f"gymnasium {gymnasium.__version__}"
    )


def _format(rows: list[tuple[str, ...]], markdown: bool) -> str:
    """Rows as an aligned plain-text or markdown table; the first row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = [False, False, True, True]
    cells = [
        [cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right)]
        for row in rows
    ]
    if not markdown:
        rule = ["-" * w for w in widths]
        return "\n".join("  ".join(row).rstrip() for row in [cells[0], rule, *cells[1:]])
    rule = ["-" * (w - 1) + (":" if r else "-") for w, r in zip(widths, right)]
    return "\n".join("| " + " | ".join(row) + " |" for row in [cells[0], rule, *cells[1:]])


def main(argv: list[str] | None = None) -> None:
    """Runs every mode for every environment and prints the table."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--envs", type=int, default=8, help="environments per batch")
    parser.add_argument("--steps", type=int, default=2000, help="timed batch steps per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table")
    parser.add_argument("--page", action="store_true", help="rewrite the results page")
    args = parser.parse_args(argv)
    started, revision, host = time.strftime("%Y-%m-%d %H:%M:%S"), common.commit(), common.machine()
    records = []
    rows = [("env", "mode", "steps/s", "ratio to raw")]
    for env_id in ENV_IDS:
        actions = _sample_actions(env_id, args.envs, max(args.steps, WARMUP_STEPS))
        baseline = None
        for name, mode in MODES.items():
            print(f"{env_id}: {name} ...", file=sys.stderr, flush=True)
            load = round(os.getloadavg()[0], 2)
            with mode(env_id, actions) as run:
                rate = _rate(run, args.steps, args.envs, args.repeats)
            baseline = baseline or rate
            rows.append((env_id, name, f"{rate:,.0f}", f"{rate / baseline:.2f}x"))
            records.append(
                dict(started=started, date=started[:16], commit=revision, machine=host, load=load)
            )
            records[-1].update(
                env=env_id, mode=name, envs=args.envs, steps=args.steps, repeats=args.repeats
            )
            records[-1].update(steps_per_second=rate, ratio=rate / baseline)
    with open(env_throughput_page.RECORDS, "a", encoding="utf-8") as file:
        file.writelines(json.dumps(record) + "\n" for record in records)
    if args.page:
        with open(env_throughput_page.PAGE, "w", encoding="utf-8") as file:
            file.write(env_throughput_page.page(common.read_records(env_throughput_page.RECORDS)))
    info = f"{_machine_info()} | {args.envs} envs, {args.steps} steps, median of {args.repeats}"
    print(info, _format(rows, markdown=False), sep="\n")
    if args.markdown:
        print("", info, "", _format(rows, markdown=True), sep="\n")


if __name__ == "__main__":
    main()
