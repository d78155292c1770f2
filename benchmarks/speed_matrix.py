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
  minigrid_native_noveld  NovelD there (`doorkey16_noveld`: RND and the episodic visits table)
  minigrid_native_count  the episodic count bonus there (`bonus=count`: no RND)
  minigrid_native_e3b  E3B there (`bonus=e3b`: an embedding, inverse dynamics, no RND)
  minigrid_native_pixels  the pixel agent on native MiniGrid (`minigrid_rnd`, native_env=True)

Every run appends one JSON line per family to `benchmarks/results/speed_matrix.jsonl` with the
commit, the machine (CPU model and cores), the load and the date, and prints the change of each
family against the latest earlier record of the same machine, or, with `--against CHECKOUT`,
against that checkout's `agents` measured alternately in the same run (one child at a time;
which of the two runs first alternates from family to family).
`--quick` (calls timed for 4 s per family) runs the whole matrix in about five minutes on a 2-core
CPU. To compare two trees on the native MiniGrid families, time 60 s (`--seconds 60`): their calls
take longer or shorter as episodes lengthen or end (1.7-3.5 s within one NovelD run on a 2-core
CPU), and two trees' runs draw other layouts, so 20 s windows of one pair spread by +-20%.

Run: `python -m benchmarks.speed_matrix [--quick] [--families pendulum cartpole] [--seconds 20]`
     `python -m benchmarks.speed_matrix --quick --against ../main-worktree --page`
(`--page` rewrites docs/results/speed_matrix.md from the records of the newest sitting.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from benchmarks import common
from benchmarks.pages import speed_matrix_page

MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")

# Family -> (named config, overrides).
_MLP_DOORKEY = {"network": "auto", "chunk_length": 1, "num_minibatches": 8}
FAMILIES = {
    "pendulum": ("pendulum", {}),
    "cartpole": ("cartpole", {}),
    "cheetah": ("cheetah", {}),
    "recurrent": ("pendulum", {"network": "recurrent_gaussian", "chunk_length": 16}),
    "minigrid_rnd": ("minigrid_rnd", {"rnd_init_steps": 16}),
    "montezuma_rnd": ("montezuma_rnd", {"rnd_init_steps": 16}),
    "mpi2": ("pendulum", {}),
    "cartpole_native": ("cartpole_native", {}),  # CartPole as TF ops: the call one XLA program.
    # DoorKey-16x16 as the records before its config took a GRU and 32 minibatches had it.
    "minigrid_native_rnd": ("doorkey16_rnd", _MLP_DOORKEY),
    "minigrid_native_noveld": ("doorkey16_noveld", _MLP_DOORKEY),
    "minigrid_native_count": ("doorkey16_rnd", dict(_MLP_DOORKEY, bonus="count")),
    "minigrid_native_e3b": ("doorkey16_rnd", dict(_MLP_DOORKEY, bonus="e3b")),
    "minigrid_native_pixels": ("minigrid_rnd", {"native_env": True, "rnd_init_steps": 16}),
}
RANKS = {"mpi2": 2}


def child(family: str, seconds: float) -> dict:
    """Times steady training calls of a family in this process for about `seconds` (at least
    two calls; rank 0 prints the measurements)."""
    name, overrides = FAMILIES[family]
    return dict(family=family, **common.time_calls(name, overrides, seconds))


def measure(family: str, seconds: float, checkout: str, timeout: float) -> dict | None:
    """Runs a family's child process on the `agents` package of `checkout`, with that checkout's
    own copy of this benchmark (which knows its package); None (with a line on stderr) when it
    cannot run here or takes longer than `timeout` seconds."""
    arguments = ["--child", family, str(seconds)]
    if os.path.exists(os.path.join(checkout, "benchmarks", "__init__.py")):
        command = [sys.executable, "-m", __spec__.name, *arguments]
    else:  # An older checkout, whose benchmarks are scripts, runs this one by path.
        command = [sys.executable, os.path.join(checkout, "benchmarks", "speed_matrix.py")]
        command += arguments
    if family in RANKS:
        command = [MPIRUN, "-n", str(RANKS[family])] + command
    return common.child_result(command, family, timeout, checkout)


def previous(records: list[dict], family: str, host: str) -> dict | None:
    """The latest record of `family` measured on `host`, or None."""
    for record in reversed(records):
        if record["family"] == family and record["machine"] == host:
            return record
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
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
    parser.add_argument(
        "--records", default=speed_matrix_page.RECORDS, help="the JSON-lines file of records"
    )
    parser.add_argument("--no-record", action="store_true", help="print only, append nothing")
    parser.add_argument(
        "--page", action="store_true", help="rewrite docs/results/speed_matrix.md from the records"
    )
    args = parser.parse_args(argv)
    seconds = 4.0 if args.quick else args.seconds
    checkouts = [common.ROOT] + ([os.path.abspath(args.against)] if args.against else [])
    host, revisions = common.machine(), [common.commit(checkout) for checkout in checkouts]
    history = common.read_records(args.records)
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
    print(common.table(header, rows))
    if args.page:
        with open(speed_matrix_page.PAGE, "w", encoding="utf-8") as file:
            file.write(speed_matrix_page.page(common.read_records(args.records)))
    return 0


if __name__ == "__main__":
    common.run_script(main, child)
