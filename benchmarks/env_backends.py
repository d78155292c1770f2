"""Training-call speed of each env backend (`env_backend`): python, gymnasium-sync,
gymnasium-async and envpool, on the configs where the choice matters.

For each config the backends are measured alternately, `--rounds` times, each in a fresh process
that times steady training calls (a whole rollout and the update after it) as the speed matrix
does. Every measurement appends one JSON line to `benchmarks/results/env_backends.jsonl` (date,
commit, machine, load); `--page` writes `docs/results/env_backends.md` from the records of the
latest run, with each backend's median and its ratio to the python backend.

Run: `python benchmarks/env_backends.py [--configs cartpole cheetah] [--rounds 3] [--page]`.
A backend that cannot run here (no envpool, no mujoco) is skipped with a line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_line, new_sitting, run_script  # noqa: E402
from learning import table  # noqa: E402
from speed_matrix import child_result, read_records, time_calls  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RECORDS = os.path.join(HERE, "results", "env_backends.jsonl")
PAGE = os.path.join(ROOT, "docs", "results", "env_backends.md")
BACKENDS = ("python", "gymnasium-sync", "gymnasium-async", "envpool")
# Config -> overrides: RND's random start shortened (it is not a training call).
CONFIGS = {
    "pendulum": {},
    "cartpole": {},
    "cheetah": {},
    "montezuma_rnd": {"rnd_init_steps": 16},
}


def child(config: str, backend: str, seconds: float) -> dict:
    """Times the training calls of `config` on `backend` in this process."""
    overrides = dict(CONFIGS[config], env_backend=backend)
    return dict(config=config, backend=backend, **time_calls(config, overrides, seconds))


def measure(config: str, backend: str, seconds: float, timeout: float) -> dict | None:
    """One child process; None (with a line on stderr) when it cannot run here."""
    command = [sys.executable, os.path.abspath(__file__), "--child", config, backend, str(seconds)]
    return child_result(command, f"{config} on {backend}", timeout, ROOT)


def latest(records: list[dict]) -> list[dict]:
    """For each config, the records of the latest run that measured it."""
    found = []
    for config in dict.fromkeys(record["config"] for record in records):
        mine = [record for record in records if record["config"] == config]
        found += [record for record in mine if record["run"] == mine[-1]["run"]]
    return found


def page(records: list[dict]) -> str:
    """The results page: for each config, the records of the latest run that measured it."""
    latest_runs = latest(records)
    rows, lines = [], []
    for config in dict.fromkeys(record["config"] for record in latest_runs):
        mine = [record for record in latest_runs if record["config"] == config]
        speeds = {
            backend: [r["steps_per_second"] for r in mine if r["backend"] == backend]
            for backend in BACKENDS
        }
        base = statistics.median(speeds["python"]) if speeds["python"] else None
        cells = [config]
        for backend in BACKENDS:
            if not speeds[backend]:
                cells.append("n/a")
                continue
            median = statistics.median(speeds[backend])
            ratio = f" ({median / base:.2f}x)" if base and backend != "python" else ""
            cells.append(f"{median:,.0f}{ratio}")
        rows.append(cells)
        loads = [r["load"] for r in mine]
        rounds = max(sum(1 for r in mine if r["backend"] == b) for b in BACKENDS)
        host = re.sub(r"^[^|]*\| |, load [^|]*?(?= \|)", "", mine[0]["machine_line"])  # Own load.
        if mine[0].get("machine"):  # The CPU's family and model, where the record has them.
            host = re.sub(r"^\d+ CPUs \([^)]*\)", mine[0]["machine"], host)
        lines.append(
            f"- `{config}`: {mine[0]['run']} | {host} | commit "
            f"{mine[0]['commit']} | {rounds} rounds of {mine[0]['seconds']:g} s per backend | "
            f"load {min(loads):.1f}-{max(loads):.1f}"
        )
    return "\n".join(
        [
            "# Env backends",
            "",
            "Env steps per second of steady training calls (a whole rollout and the update after",
            "it) with each `env_backend`, each measured in a fresh process, the backends of a",
            "config alternating; the median of the rounds, and its ratio to the python backend.",
            "Generated from `benchmarks/results/env_backends.jsonl` by:",
            "",
            "```sh",
            "python benchmarks/env_backends.py --rounds 3 --seconds 6 --page",
            "```",
            "",
            *lines,
            "",
            table(["config", *BACKENDS], rows),
            "",
            "`n/a`: the backend could not run here (EnvPool lacks the env, or its package is",
            "missing). See [Bringing your environments](../bring-your-envs.md) for what each",
            "backend supports.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0, help="calls timed per process")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--records", default=RECORDS)
    parser.add_argument("--page", action="store_true", help=f"write {os.path.relpath(PAGE)}")
    args = parser.parse_args(argv)
    shared, host = new_sitting(ROOT), machine_line()
    run = shared["started"][:16]  # Minutes, as the records before `started` named their run.
    os.makedirs(os.path.dirname(args.records), exist_ok=True)
    for config in args.configs:
        for round_ in range(args.rounds):
            for backend in args.backends:
                load = os.getloadavg()[0]
                result = measure(config, backend, args.seconds, args.timeout)
                if result is None:
                    continue
                record = dict(
                    result,
                    **shared,
                    run=run,
                    round=round_,
                    seconds=args.seconds,
                    machine_line=host,
                    load=round(load, 2),
                    date=time.strftime("%Y-%m-%d %H:%M"),
                )
                with open(args.records, "a", encoding="utf-8") as file:
                    file.write(json.dumps(record) + "\n")
                speed = record["steps_per_second"]
                print(f"{config} {backend} round {round_}: {speed:,.0f}", file=sys.stderr)
    text = page(read_records(args.records))
    print(text)
    if args.page:
        with open(PAGE, "w", encoding="utf-8") as file:
            file.write(text)
    return 0


if __name__ == "__main__":
    run_script(main, child)
