"""Memory of a host process that trains again and again: RSS after each `agents.train` call.

A notebook trains many runs in one kernel, so a call must give back what it took. This process
calls `agents.train(<config>, train_steps=..., seed=<call number>)` `--calls` times in a row
(each a new run of its own seed in a temporary logdir, printing nothing, as a notebook's sweep
does) and prints the resident set size after each call, and its
growth over the first call's.

Each run appends one JSON line to `benchmarks/results/api_memory.jsonl` (date, commit, machine,
load, RSS and seconds per call); `--page` rewrites docs/results/api_memory.md from the records of
the newest commit.

Run: `python -m benchmarks.api_memory [--config debug] [--calls 6] [--train_steps N]` (default:
the config's own budget).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import time

from benchmarks import common
from benchmarks.pages import api_memory_page


def rss_mb() -> float:
    """Resident set size of this process, MB (from /proc)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--config", default="debug")
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument(
        "--train_steps", type=int, default=None, help="Per call (default: the config's own)."
    )
    parser.add_argument(
        "--kept_agents",
        type=int,
        default=None,
        help="Agents kept for reuse between runs (default: the library's; 0: none).",
    )
    parser.add_argument("--page", action="store_true", help="Rewrite the results page.")
    args = parser.parse_args()
    import agents
    from agents.training import agent_pool

    if args.kept_agents is not None:
        agent_pool.MAX_AGENTS = args.kept_agents
    if args.train_steps is None:
        from agents.scripts import configs

        args.train_steps = getattr(configs, args.config)()["train_steps"]

    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as logdir:
        for call in range(1, args.calls + 1):
            began = time.perf_counter()
            agents.train(
                args.config, logdir=logdir, verbose=0, train_steps=args.train_steps, seed=call
            )
            gc.collect()
            rows.append((call, rss_mb(), time.perf_counter() - began))
    first = rows[0][1]
    record = dict(
        date=time.strftime("%Y-%m-%d %H:%M"),
        commit=common.commit(),
        machine=common.machine(),
        load=os.getloadavg()[0],
        config=args.config,
        train_steps=args.train_steps,
        seeds="call number",
        kept_agents=agent_pool.MAX_AGENTS,
        rss_mb=[round(rss, 1) for _, rss, _ in rows],
        seconds=[round(seconds, 2) for _, _, seconds in rows],
    )
    with open(api_memory_page.RECORDS, "a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")
    print(
        f"# agents.train({args.config!r}, train_steps={args.train_steps}, seed=call) x "
        f"{args.calls}, "
        f"{agent_pool.MAX_AGENTS} agents kept for reuse"
    )
    print(f"# {common.machine_line(time.perf_counter() - start)}")
    print("| call | RSS (MB) | growth over call 1 (MB) | seconds |")
    print("| ---: | ---: | ---: | ---: |")
    for call, rss, seconds in rows:
        print(f"| {call} | {rss:.0f} | {rss - first:+.0f} | {seconds:.1f} |")
    if args.page:
        with open(api_memory_page.PAGE, "w", encoding="utf-8") as file:
            file.write(api_memory_page.page(common.read_records(api_memory_page.RECORDS)))


if __name__ == "__main__":
    main()
