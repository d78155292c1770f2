"""Ours beside NAVIX, a JAX MiniGrid with its own PPO: env-only stepping and PPO training on the
same cores, one whole process at a time.

NAVIX (`navix.agents.PPO`, `benchmarks/navix_driver.py`) runs in a venv of its own; measured with
navix 0.7.4 (the newest for Python 3.11), jax and jaxlib 0.10.2, flax 0.12.8, optax 0.2.8,
distrax 0.1.9 and rlax 0.1.9 on CPU (`python3 -m venv /tmp/navix-venv &&
/tmp/navix-venv/bin/pip install navix==0.7.4`); each record names the versions it ran.

- Env only: `--envs` envs of each id take `--steps` batch steps of uniformly random actions in one
  compiled call (ours: one XLA program of `NativeBatchEnv`, finished episodes restarted from the
  layout bank; NAVIX: `jax.jit` of a `lax.scan` over `jax.vmap(env.step)`, its autoreset
  included); the figure is the median env steps/s of 5 calls after a compiling one, whose
  seconds are kept apart.
- PPO: `--budget` env steps on DoorKey-8x8, each side's own PPO with its own defaults (ours:
  `--config=doorkey_native` on the 8x8 id, 128 envs x 128 steps, 4 epochs of 8 minibatches,
  128-unit MLPs; NAVIX: `PPOHparams`' 16 envs x 128 steps, 1 epoch of 8 minibatches, 64-unit
  MLPs), and ours again at NAVIX's sizes (`ours-navix-sizes`). Ours starts from an empty XLA
  cache, as NAVIX compiles in every process. Figures: the process from spawn to exit, the env
  steps/s of the compiled training calls (ours: the median of its training reports; NAVIX: the
  whole `train` call after compiling), and the sampled training policy's success rate and mean
  return over the episodes that ended in the last 65,536 env steps (ours: its last training
  report, one call of that many steps; NAVIX: its last 32 updates, `navix_driver.FINAL_WINDOW`).

MiniGrid's layout banks of ours are the machine's, built before anything is timed, as a user's
first run of an id builds them. Sides alternate which goes first from round to round. Appends a
record per measurement to `benchmarks/results/navix.jsonl`; `--page` rewrites
`docs/results/navix.md`.

Run: `python -m benchmarks.navix_peer --navix-python /tmp/navix-venv/bin/python [--rounds 1]
[--budget 2097152] [--page]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
from importlib import metadata

from benchmarks import common
from benchmarks.pages import navix_page

RECORDS = navix_page.RECORDS
IDS = ("MiniGrid-DoorKey-8x8-v0", "MiniGrid-DoorKey-16x16-v0")
PPO_ID = "MiniGrid-DoorKey-8x8-v0"
PPO_CONFIG = "doorkey_native"
REPEATS = 5
# NAVIX's PPOHparams defaults in our config's keys (its learning rate anneals linearly to 0); a
# call of 32 rollouts keeps ours' 65,536 env steps a training report.
NAVIX_SIZES = (
    "num_agents=16", "rollout_length=128", "rollouts_per_call=32", "update_epochs=1",
    "num_minibatches=8",
    "policy_layers=[64,64]", "value_layers=[64,64]", "learning_rate=2.5e-4",
    "learning_rate_schedule=linear", "entropy_coef=0.01",
)  # fmt: skip
DRIVER_KEYS = {
    "step": ("steps_per_second", "compile_seconds", "versions"),
    "ppo": ("steps", "compile_seconds", "train_seconds", "final_success", "final_return"),
}


def driver_result(stdout: str, mode: str) -> dict:
    """The JSON line NAVIX's driver printed last in `mode` ("step" or "ppo").

    Raises:
        ValueError: No JSON object on the last line, or one without the mode's figures.
    """
    lines = stdout.strip().splitlines()
    try:
        found = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        found = None
    if not isinstance(found, dict):
        last = lines[-1][-200:] if lines else ""
        raise ValueError(f"NAVIX's driver printed no JSON object last: {last!r}")
    missing = [key for key in DRIVER_KEYS[mode] if key not in found]
    if missing:
        raise ValueError(f"NAVIX's driver result in mode {mode!r} lacks {', '.join(missing)}")
    return found


def ours_step(env_id: str, envs: int, steps: int, seed: int) -> dict:
    """Median env steps/s of `envs` native envs over `REPEATS` calls of `steps` random batch
    steps, and the seconds of the first (compiling) call; runs in a child process."""
    result = common.native_random_steps(env_id, envs, steps, REPEATS, seed)
    return dict(
        steps_per_second=result["steps_per_second"],
        compile_seconds=result["compile_seconds"],
        repeats=REPEATS,
        versions={"tensorflow": result["tensorflow"]},
    )


def _process(command: list[str], directory: str, name: str, **env: str) -> tuple[str, float]:
    return common.timed_process(
        command, os.path.join(directory, f"{name}.log"), cwd=common.ROOT,
        env=common.checkout_env(**env),
    )  # fmt: skip


def measure_step(side: str, python: str, env_id: str, envs: int, steps: int, seed: int,
                 directory: str) -> dict:  # fmt: skip
    """One side's env-only process on `env_id`: its figures and its seconds from spawn to exit."""
    args = [env_id, str(envs), str(steps), str(seed)]
    if side == "ours":
        command = [sys.executable, "-m", "benchmarks.navix_peer", "--child", *args]
        stdout, seconds = _process(command, directory, f"ours-step-{env_id}")
        found = common.last_json(stdout)
    else:
        command = [python, "-m", "benchmarks.navix_driver", "step", *args]
        stdout, seconds = _process(command, directory, f"navix-step-{env_id}")
        found = driver_result(stdout, "step")
    return dict(found, envs=envs, batch_steps=steps, process_seconds=seconds)


def measure_navix_ppo(python: str, env_id: str, budget: int, seed: int, directory: str) -> dict:
    """NAVIX's PPO process: its driver's figures and the process's seconds."""
    command = [python, "-m", "benchmarks.navix_driver", "ppo", env_id, str(budget), str(seed)]
    stdout, seconds = _process(command, directory, "navix-ppo")
    found = driver_result(stdout, "ppo")
    return dict(
        found,
        process_seconds=seconds,
        train_steps_per_second=found["steps"] / found["train_seconds"],
    )


def measure_ours_ppo(side: str, env_id: str, budget: int, seed: int, directory: str) -> dict:
    """Our training process (`side` "ours" or "ours-navix-sizes") from an empty XLA cache."""
    from agents.envs.gridworld import layouts  # Plain numpy: no TensorFlow.

    logdir, cache = os.path.join(directory, f"{side}-logdir"), os.path.join(directory, "xla")
    shutil.rmtree(cache, ignore_errors=True)
    overrides = [f"env={env_id}", f"train_steps={budget}"]
    overrides += list(NAVIX_SIZES) if side == "ours-navix-sizes" else []
    command = [sys.executable, "-m", "agents.scripts.train", f"--config={PPO_CONFIG}"]
    command += [f"--logdir={logdir}", f"--seed={seed}", "--set", *overrides]
    stdout, seconds = _process(
        command, directory, side, XDG_CACHE_HOME=cache, AGENTS_CACHE=str(layouts.cache_dir())
    )
    done = re.search(r"Done: ([\d,]+) env steps in (.+)\.$", stdout, re.MULTILINE)
    if not done:
        raise RuntimeError(f"{' '.join(command)} printed no 'Done:' line")
    return dict(ours_ppo_figures(done.group(2)), process_seconds=seconds, overrides=overrides)


def ours_ppo_figures(run_dir: str) -> dict:
    """Env steps, training-call env steps/s (median of the training reports) and the last
    training report's success rate, mean return and episodes (None where no episode ended in
    it), from a run's metrics.jsonl."""
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as file:
        rows = [json.loads(line) for line in file if line.strip()]
    train = [row for row in rows if row.get("phase") == "train"]
    evals = [row for row in rows if row.get("phase") == "eval"]
    last = train[-1]
    return dict(
        steps=last["env_steps"],
        train_steps_per_second=statistics.median(r["env_steps_per_second"] for r in train),
        final_success=last.get("success_rate"),
        final_return=last.get("score"),
        episodes=last["episodes"],
        eval_success=evals[-1]["success_rate"] if evals else None,
    )


def prepare_banks(ids: list[str], budget: int) -> None:
    """Builds the layout banks our processes read (each id's own bank, and the bank the PPO run
    sizes by its budget) where the cache holds neither them nor a larger bank of the id."""
    from agents.config import budget as budgets
    from agents.envs.gridworld import layouts
    from agents.scripts.configs import CONFIGS  # Plain data: no TensorFlow.

    config = dict(CONFIGS[PPO_CONFIG](), env=PPO_ID, train_steps=budget)
    sizes = {(env_id, layouts.default_size(env_id)) for env_id in ids}
    sizes.add((PPO_ID, layouts.size_for(PPO_ID, budgets.layout_draws(config))))
    for env_id, size in sorted(sizes):
        if layouts.open_bank(env_id, size).rest is not None:  # Not all cached: build it whole.
            layouts.bank(env_id, size)


def order(round_: int) -> tuple[str, str]:
    """Which side goes first in round `round_`: ours in even rounds, NAVIX in odd ones."""
    return ("ours", "navix") if round_ % 2 == 0 else ("navix", "ours")


def run_steps(args: argparse.Namespace, sitting: dict) -> None:
    """The env-only processes of every round, id and side; a record each."""
    for round_ in range(args.rounds):
        seed = args.seed + round_
        for env_id in IDS:
            for side in order(round_):
                found = measure_step(
                    side, args.navix_python, env_id, args.envs, args.steps, seed, args.out
                )
                common.append_record(RECORDS, sitting, kind="step", side=side, round=round_,
                                     env_id=env_id, seed=seed, **found)  # fmt: skip
                rate, compiling = found["steps_per_second"], found["compile_seconds"]
                print(f"step {env_id} {side}: {rate:,.0f} env steps/s, compile {compiling:.1f} s")


def run_ppo(args: argparse.Namespace, sitting: dict) -> None:
    """The PPO processes of every round and side; a record each."""
    for round_ in range(args.ppo_rounds):
        seed = args.seed + round_
        for side in (*order(round_), "ours-navix-sizes"):
            if side == "navix":
                found = measure_navix_ppo(args.navix_python, PPO_ID, args.budget, seed, args.out)
            else:
                found = measure_ours_ppo(side, PPO_ID, args.budget, seed, args.out)
            seconds, success = found["process_seconds"], found["final_success"]
            rate = found["steps"] / seconds
            common.append_record(RECORDS, sitting, kind="ppo", side=side, round=round_,
                                 env_id=PPO_ID, seed=seed, budget=args.budget,
                                 steps_per_second=rate, **found)  # fmt: skip
            print(f"ppo {side}: {found['steps']:,} env steps in {seconds:.1f} s ({rate:,.0f}/s), "
                  f"final success {success if success is None else round(success, 2)} over "
                  f"{found['episodes']} episodes")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--navix-python", required=True, help="a Python with navix installed")
    parser.add_argument("--envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100, help="batch steps per timed call")
    parser.add_argument("--rounds", type=int, default=1, help="env-only rounds, sides alternating")
    parser.add_argument("--budget", type=int, default=2**21, help="PPO env steps of each side")
    parser.add_argument("--ppo-rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "navix"))
    parser.add_argument("--page", action="store_true", help="Rewrite docs/results/navix.md.")
    args = parser.parse_args(argv)
    for name in ("envs", "steps", "rounds", "budget", "ppo_rounds"):
        if getattr(args, name) < 1:
            parser.error(
                f"--{name.replace('_', '-')} must be at least 1, not {getattr(args, name)}"
            )
    if not os.path.exists(args.navix_python):
        parser.error(f"--navix-python {args.navix_python} does not exist")
    prepare_banks(list(IDS), args.budget)
    sitting = dict(common.new_sitting(), tensorflow=metadata.version("tensorflow"))
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    run_steps(args, sitting)
    run_ppo(args, sitting)
    if args.page:
        with open(navix_page.PAGE, "w", encoding="utf-8") as file:
            file.write(navix_page.page(common.read_records(RECORDS)))
    return 0


if __name__ == "__main__":
    common.run_script(main, ours_step)
