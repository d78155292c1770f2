"""Training-call speed of each env backend (`env_backend`): python, gymnasium-sync,
gymnasium-async and envpool, on the configs where the choice matters.

For each config the backends are measured alternately, `--rounds` times, each in a fresh process
that times steady training calls (a whole rollout and the update after it) as the speed matrix
does. Every measurement appends one JSON line to `benchmarks/results/env_backends.jsonl` (date,
commit, machine, load); `--page` writes `docs/results/env_backends.md` from the records of the
latest run, with each backend's median and its ratio to the python backend.

Run: `python -m benchmarks.env_backends [--configs cartpole cheetah] [--rounds 3] [--page]`.
A backend that cannot run here (no envpool, no mujoco) is skipped with a line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from benchmarks import common
from benchmarks.pages import env_backends_page

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
    return dict(config=config, backend=backend, **common.time_calls(config, overrides, seconds))


def measure(config: str, backend: str, seconds: float, timeout: float) -> dict | None:
    """One child process; None (with a line on stderr) when it cannot run here."""
    command = [sys.executable, "-m", __spec__.name, "--child", config, backend, str(seconds)]
    return common.child_result(command, f"{config} on {backend}", timeout, common.ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument(
        "--backends",
        nargs="+",
        default=list(env_backends_page.BACKENDS),
        choices=env_backends_page.BACKENDS,
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0, help="calls timed per process")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--records", default=env_backends_page.RECORDS)
    parser.add_argument(
        "--page", action="store_true", help=f"write {os.path.relpath(env_backends_page.PAGE)}"
    )
    args = parser.parse_args(argv)
    shared, host = common.new_sitting(), common.machine_line()
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
    text = env_backends_page.page(common.read_records(args.records))
    print(text)
    if args.page:
        with open(env_backends_page.PAGE, "w", encoding="utf-8") as file:
            file.write(text)
    return 0


if __name__ == "__main__":
    common.run_script(main, child)
