"""A run's fixed cost: a short training run's whole process against importing TensorFlow alone.

Per round, alternating, each a fresh process timed from spawn to exit:

- import: `python -c "import tensorflow, tensorflow_probability, keras"`;
- run: `python -m agents.scripts.train --config=<config> --set train_steps=<steps>` into a
  scratch logdir, on a warm XLA cache (an untimed run of the same command fills it first), as a
  user's second start of a config.

The run's excess over the import is what the library adds to a short run: building envs and
agent, tracing, the evaluations, the checkpoint, the learning curve and the policy export. A
last, untimed run under cProfile (`--child`) splits the run's process into those parts
(cumulative seconds of the functions named in `PARTS`).

Appends a record per round and one for the profile to `benchmarks/results/fixed_cost.jsonl`
and prints the medians.

Run: `python -m benchmarks.fixed_cost [--config pendulum] [--steps 1024] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

from benchmarks import common

RECORDS = os.path.join(common.RESULTS, "fixed_cost.jsonl")
IMPORT = "import tensorflow, tensorflow_probability, keras"
# (label, module, qualified name) of the functions whose cumulative time the profile reports.
PARTS = (
    ("import TensorFlow (train's)", "agents/runtime/tf_loading.py", "import_tensorflow"),
    ("build the run", "agents/training/run.py", "Run.__init__"),
    ("training calls", "agents/training/run.py", "Run.train_call"),
    ("evaluations", "agents/training/run.py", "Run.eval_phase"),
    ("checkpoints", "agents/training/run.py", "Run.save"),
    ("learning curve", "agents/training/curves.py", "plot_run"),
    ("policy export", "agents/ppo/export.py", "export_policy"),
)


def _train_command(config: str, steps: int, logdir: str) -> list[str]:
    return [
        sys.executable, "-m", "agents.scripts.train", f"--config={config}",
        f"--logdir={logdir}", "--set", f"train_steps={steps}",
    ]  # fmt: skip


def child(config: str, steps: int, logdir: str) -> dict[str, float]:
    """One training run under cProfile in this process; seconds per part of `PARTS`."""
    import cProfile
    import pstats

    from agents.scripts import train

    profile = cProfile.Profile()
    profile.enable()
    code = train.main([f"--config={config}", f"--logdir={logdir}", "--set", f"train_steps={steps}"])
    profile.disable()
    if code:
        raise RuntimeError(f"train exited with {code}")
    stats = pstats.Stats(profile).stats
    found = {}
    for label, path, name in PARTS:
        found[label] = sum(
            row[3] for (file, _, function), row in stats.items()
            if file.endswith(path) and function == name.split(".")[-1]
        )  # fmt: skip
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--config", default="pendulum")
    parser.add_argument("--steps", type=int, default=1024, help="train_steps of each run")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    sitting = common.new_sitting()
    with tempfile.TemporaryDirectory(prefix="fixed-cost-") as scratch:
        log = os.path.join(scratch, "log")
        common.timed_process(_train_command(args.config, args.steps, scratch + "/warm"), log)
        imports, runs = [], []
        for index in range(args.rounds):
            _, seconds = common.timed_process([sys.executable, "-c", IMPORT], log)
            imports.append(seconds)
            logdir = os.path.join(scratch, f"round{index}")
            _, run = common.timed_process(_train_command(args.config, args.steps, logdir), log)
            runs.append(run)
            common.append_record(
                RECORDS, sitting, kind="round", config=args.config, train_steps=args.steps,
                round=index, import_seconds=seconds, run_seconds=run,
            )  # fmt: skip
            print(f"round {index}: import {seconds:.2f} s, run {run:.2f} s", file=sys.stderr)
        parts = common.run_child(
            __spec__.name, [args.config, str(args.steps)], os.path.join(scratch, "profiled")
        )
    common.append_record(
        RECORDS, sitting, kind="profile", config=args.config, train_steps=args.steps, parts=parts
    )
    low, high = statistics.median(imports), statistics.median(runs)
    rows = [[label, f"{seconds:.2f}"] for label, seconds in parts.items()]
    print(common.machine_line())
    print(
        f"{args.config}, train_steps={args.steps}, medians of {args.rounds} rounds: import "
        f"{low:.2f} s, whole run {high:.2f} s, excess {high - low:.2f} s"
    )
    print(common.table(["part of the profiled run", "seconds"], rows))
    return 0


if __name__ == "__main__":
    common.run_script(main, child)
