"""Speed matrix: env steps/s of steady training calls for every agent family a user can configure.

Each family runs in a fresh child process (as a training run has one agent per process), builds
the session of its config, makes one training call (tracing and compiling) and times more calls
for `--seconds` (at least two). A training call is a whole rollout (`rollout_length` steps of
`num_agents` envs) and the update that follows it, so env steps/s is the rate a user's run trains
at between evaluations.

Families:
  pendulum      feed-forward Gaussian policy (Pendulum-v1)
  cartpole      feed-forward categorical policy (CartPole-v1)
  cheetah       MuJoCo-size networks, 256x256 (HalfCheetah-v5; needs the mujoco extra)
  recurrent     the GRU Gaussian policy on Pendulum-v1 (`network=recurrent_gaussian`)
  minigrid_rnd  the CNN+GRU pixel agent with RND (MiniGrid, 56x56 frames)
  montezuma_rnd the Atari config with RND (84x84x4 frames, `policy_size=normal`)
  mpi2          `pendulum` on 2 MPI ranks (env steps of both ranks; compare with `pendulum`)
  cartpole_native  CartPole as TensorFlow ops: the whole call one XLA program
  minigrid_native_rnd  RND on native MiniGrid's symbolic view (`doorkey16_rnd`, one XLA program)
  minigrid_native_pixels  the pixel agent on native MiniGrid (`minigrid_rnd`, native_env=True)

Every run appends one JSON line per family to `benchmarks/results/speed_matrix.jsonl` with the
commit, the machine (CPU model and cores), the load and the date, and prints the change of each
family against the latest earlier record of the same machine, or, with `--against CHECKOUT`,
against that checkout's `agents` measured alternately in the same run (one child at a time;
which of the two runs first alternates from family to family).
`--quick` (calls timed for 4 s per family) runs the whole matrix in about five minutes on a 2-core
CPU.

Run: `python benchmarks/speed_matrix.py [--quick] [--families pendulum cartpole] [--seconds 20]`
     `python benchmarks/speed_matrix.py --quick --against ../main-worktree --page`
(`--page` rewrites docs/results/speed_matrix.md from the records of the newest sitting.)
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cores, run_script  # noqa: E402
from learning import table  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "results", "speed_matrix.jsonl")
MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")

# Family -> (named config, overrides).
FAMILIES = {
    "pendulum": ("pendulum", {}),
    "cartpole": ("cartpole", {}),
    "cheetah": ("cheetah", {}),
    "recurrent": ("pendulum", {"network": "recurrent_gaussian", "chunk_length": 16}),
    "minigrid_rnd": ("minigrid_rnd", {"rnd_init_steps": 16}),
    "montezuma_rnd": ("montezuma_rnd", {"rnd_init_steps": 16}),
    "mpi2": ("pendulum", {}),
    "cartpole_native": ("cartpole_native", {}),  # CartPole as TF ops: the call one XLA program.
    "minigrid_native_rnd": ("doorkey16_rnd", {}),
    "minigrid_native_pixels": ("minigrid_rnd", {"native_env": True, "rnd_init_steps": 16}),
}
RANKS = {"mpi2": 2}


def child(family: str, seconds: float) -> dict:
    """Times steady training calls of a family in this process for about `seconds` (at least
    two calls; rank 0 prints the measurements)."""
    name, overrides = FAMILIES[family]
    return dict(family=family, **time_calls(name, overrides, seconds))


def time_calls(name: str, overrides: dict, seconds: float) -> dict:
    """Times steady training calls of named config `name` with `overrides` in this process for
    about `seconds` (at least two calls): env steps/s, the first call's seconds, the calls."""
    spawned = time.perf_counter()
    from agents.ppo import compilation
    from agents.runtime import tf_loading
    from agents.scripts import configs

    config = dict(getattr(configs, name)(), **overrides)
    tf_loading.import_tensorflow(onednn=compilation.onednn(config["agent"]))  # As train does.
    from agents.tools import mpi
    from agents.training.run import Run

    world = mpi.init_world()
    mpi.share_cores(world)
    run_dir = world.bcast(tempfile.mkdtemp(prefix="speed_matrix_") if world.is_root else None)
    run = Run(config, run_dir, seed=0, world=world)
    try:
        start = time.perf_counter()
        run.train_call()
        first_end = time.perf_counter()
        first = first_end - start
        times = []
        # Every rank makes the same number of calls (rank 0's count), or MPI ranks would hang.
        while world.bcast(len(times) < 2 or sum(times) < seconds):
            start = time.perf_counter()
            run.train_call()
            times.append(time.perf_counter() - start)
    finally:
        run.close()
    rollouts = config.get("rollouts_per_call", 1)
    steps = config["rollout_length"] * rollouts * config["num_agents"] * world.size
    return dict(
        steps_per_second=steps / statistics.median(times),
        first_call_s=first,
        to_first_call_s=first_end - spawned,  # From the child's first line (imports included).
        calls=len(times),
    )


def measure(family: str, seconds: float, checkout: str, timeout: float) -> dict | None:
    """Runs a family's child process on the `agents` package of `checkout`, with that checkout's
    own copy of this script (which knows its package); None (with a line on stderr) when it
    cannot run here or takes longer than `timeout` seconds."""
    script = os.path.join(checkout, "benchmarks", os.path.basename(__file__))
    command = [sys.executable, script, "--child", family, str(seconds)]
    if family in RANKS:
        command = [MPIRUN, "-n", str(RANKS[family])] + command
    return child_result(command, family, timeout, checkout)


def child_result(command: list[str], label: str, timeout: float, checkout: str) -> dict | None:
    """The JSON result of a child process that measures, on the `agents` package of `checkout`
    and with XLA's persistent cache off (every start compiles, as a first run does); None (with
    a line on stderr naming `label`) when it fails or takes longer than `timeout` seconds."""
    env = dict(os.environ, AGENTS_XLA_CACHE="0")
    env["PYTHONPATH"] = os.pathsep.join([checkout, env.get("PYTHONPATH", "")])
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"{label}: skipped, longer than {timeout:g} s", file=sys.stderr)
        return None
    if result.returncode:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"{label}: skipped, exit {result.returncode}: {last}", file=sys.stderr)
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def machine(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU model and core count, which records of the same machine share.

    A virtual machine may name its CPU only by brand ("AMD EPYC"); CPUs that differ by half in
    speed then share that name, so it gets the CPU's family and model from /proc/cpuinfo.
    """
    model = platform.processor() or platform.machine()
    fields = {}
    try:
        with open(cpuinfo, encoding="utf-8") as file:
            for line in file:
                key, _, value = line.partition(":")
                if not key.strip():
                    break  # The first processor's block ends here.
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = fields.get("model name", model)
    if not any(c.isdigit() for c in model) and "cpu family" in fields and "model" in fields:
        model += f" (family {fields['cpu family']} model {fields['model']})"
    return f"{model}, {cores()} cores"


def commit(checkout: str) -> str:
    """The checkout's commit, `-dirty` when its code differs from it (results and docs aside:
    a benchmark's own records and pages change as it runs)."""
    own = os.path.realpath(checkout) == os.path.realpath(os.path.dirname(HERE))
    if (own and os.environ.get("BENCHMARK_COMMIT")) or not os.path.exists(
        os.path.join(checkout, ".git")
    ):
        # A copy whose history is missing or not its own (an exported tree, a copy sent to another
        # machine) can only be told its commit: the copying side sets BENCHMARK_COMMIT, which
        # names this checkout's commit, never that of a checkout measured `--against` it.
        return os.environ.get("BENCHMARK_COMMIT", "unknown") if own else "unknown"
    result = subprocess.run(
        ["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    revision = result.stdout.strip() or "unknown"
    code = ["agents", "benchmarks/*.py", "setup.py", "pyproject.toml"]
    changed = subprocess.run(["git", "-C", checkout, "diff", "--quiet", "HEAD", "--", *code])
    return revision + ("-dirty" if changed.returncode == 1 else "")


def previous(records: list[dict], family: str, host: str) -> dict | None:
    """The latest record of `family` measured on `host`, or None."""
    for record in reversed(records):
        if record["family"] == family and record["machine"] == host:
            return record
    return None


def read_records(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="time calls for this long per family"
    )
    parser.add_argument("--quick", action="store_true", help="time calls for 4 s per family")
    parser.add_argument(
        "--against",
        metavar="CHECKOUT",
        help="another checkout (e.g. a git worktree of main), measured alternately with this one",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per family at most")
    parser.add_argument("--records", default=RECORDS, help="the JSON-lines file of records")
    parser.add_argument("--no-record", action="store_true", help="print only, append nothing")
    parser.add_argument(
        "--page", action="store_true", help="rewrite docs/results/speed_matrix.md from the records"
    )
    args = parser.parse_args(argv)
    seconds = 4.0 if args.quick else args.seconds
    checkouts = [os.path.dirname(HERE)] + ([os.path.abspath(args.against)] if args.against else [])
    host, revisions = machine(), [commit(checkout) for checkout in checkouts]
    history = read_records(args.records)
    started = time.strftime("%Y-%m-%d %H:%M:%S")  # The sitting whose records make the page.
    rows, records = [], []
    for position, family in enumerate(args.families):
        measured = {}
        pairs = list(enumerate(zip(checkouts, revisions)))
        # Which checkout runs first alternates: the first child of a pair has measured
        # differently from the second (by as much as the changes this compares).
        for index, (checkout, revision) in pairs[:: -1 if position % 2 else 1]:
            load = os.getloadavg()[0]
            result = measure(family, seconds, checkout, args.timeout)
            if result is None:
                continue
            measured[revision] = record = dict(
                result,
                commit=revision,
                machine=host,
                load=round(load, 2),
                date=time.strftime("%Y-%m-%d %H:%M"),
                started=started,
                seconds=seconds,
                against=index == 1,  # Measured as the other checkout of `--against`.
            )
            records.append(record)
            print(f"{family} at {revision}: {record['steps_per_second']:,.0f}", file=sys.stderr)
        if revisions[0] not in measured:
            continue
        record = measured[revisions[0]]
        last = measured.get(revisions[-1]) if args.against else previous(history, family, host)
        change = "new"
        if last is not None:
            ratio = record["steps_per_second"] / last["steps_per_second"]
            change = f"{ratio:.2f}x {last['commit']} ({last['steps_per_second']:,.0f})"
        rows.append(
            [
                family,
                f"{record['steps_per_second']:,.0f}",
                str(record["calls"]),
                f"{record['first_call_s']:.1f}",
                f"{record['load']:.1f}",
                change,
            ]
        )
    if not args.no_record and records:
        os.makedirs(os.path.dirname(args.records), exist_ok=True)
        with open(args.records, "a", encoding="utf-8") as file:
            file.writelines(json.dumps(record) + "\n" for record in records)
    stamp = time.strftime("%Y-%m-%d %H:%M")
    print(f"{stamp} | {host} | commit {revisions[0]} | calls timed for {seconds:g} s\n")
    header = ["family", "train call env steps/s", "calls", "first call s", "load", "against"]
    print(table(header, rows))
    if args.page:
        from speed_matrix_page import PAGE, page

        with open(PAGE, "w", encoding="utf-8") as file:
            file.write(page(read_records(args.records)))
    return 0


if __name__ == "__main__":
    run_script(main, child)
