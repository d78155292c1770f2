"""Memory of a host process that trains again and again: RSS after each `agents.train` call.

A notebook trains many runs in one kernel, so a call must give back what it took. This process
calls `agents.train(<config>, train_steps=...)` `--calls` times in a row (each a new run in a
temporary logdir, printing nothing) and prints the resident set size after each call, and its
growth over the first call's.

Each run appends one JSON line to `benchmarks/results/api_memory.jsonl` (date, commit, machine,
load, RSS and seconds per call); `--page` rewrites docs/results/api_memory.md from the records of
the newest commit.

Run: `python benchmarks/api_memory.py [--config debug] [--calls 6] [--train_steps 256]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.common import machine_line  # noqa: E402
from benchmarks.speed_matrix import commit, machine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "results", "api_memory.jsonl")
PAGE = os.path.join(os.path.dirname(HERE), "docs", "results", "api_memory.md")


def rss_mb() -> float:
    """Resident set size of this process, MB (from /proc)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="debug")
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--train_steps", type=int, default=256)
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

    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as logdir:
        for call in range(1, args.calls + 1):
            began = time.perf_counter()
            agents.train(args.config, logdir=logdir, verbose=0, train_steps=args.train_steps)
            gc.collect()
            rows.append((call, rss_mb(), time.perf_counter() - began))
    first = rows[0][1]
    record = dict(
        date=time.strftime("%Y-%m-%d %H:%M"),
        commit=commit(os.path.dirname(HERE)),
        machine=machine(),
        load=os.getloadavg()[0],
        config=args.config,
        train_steps=args.train_steps,
        kept_agents=agent_pool.MAX_AGENTS,
        rss_mb=[round(rss, 1) for _, rss, _ in rows],
        seconds=[round(seconds, 2) for _, _, seconds in rows],
    )
    with open(RECORDS, "a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")
    print(
        f"# agents.train({args.config!r}, train_steps={args.train_steps}) x {args.calls}, "
        f"{agent_pool.MAX_AGENTS} agents kept for reuse"
    )
    print(f"# {machine_line(time.perf_counter() - start)}")
    print("| call | RSS (MB) | growth over call 1 (MB) | seconds |")
    print("| ---: | ---: | ---: | ---: |")
    for call, rss, seconds in rows:
        print(f"| {call} | {rss:.0f} | {rss - first:+.0f} | {seconds:.1f} |")
    if args.page:
        with open(PAGE, "w", encoding="utf-8") as file:
            file.write(page(read_records()))


def read_records() -> list[dict]:
    if not os.path.exists(RECORDS):
        return []
    with open(RECORDS, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def newest(records: list[dict]) -> list[dict]:
    """Every record of the newest commit, in the order measured."""
    return [record for record in records if record["commit"] == records[-1]["commit"]]


def page(records: list[dict]) -> str:
    """docs/results/api_memory.md: every record of the newest commit, in the order measured."""
    rows = newest(records)
    loads = [record["load"] for record in rows]
    calls = len(rows[0]["rss_mb"])
    lines = [
        "# Memory of repeated runs in one process",
        "",
        f"The resident set of a process that calls `agents.train(...)` {calls} times in a row",
        "(each a new run, printing nothing), after each call, with the library's pool of ended",
        "runs' agents (`kept agents` 4: a run of the same shapes reuses one and its compiled",
        "update) and without it (0: every run traces and compiles its own update, which",
        "TensorFlow keeps until the process ends). Generated from",
        "`benchmarks/results/api_memory.jsonl` by:",
        "",
        "```sh",
        "python benchmarks/api_memory.py --kept_agents 4 && python benchmarks/api_memory.py \\",
        "    --kept_agents 0 --page   # alternately, as often as wanted",
        "```",
        "",
        f"{rows[0]['date']} to {rows[-1]['date']} | {rows[0]['machine']} | commit "
        f"{rows[0]['commit']} | load {min(loads):.1f}-{max(loads):.1f}",
        "",
        "| config | kept agents | RSS after call 1 (MB) | growth after the last call (MB) "
        "| seconds of call 1 | seconds of the later calls |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for record in rows:
        rss, seconds = record["rss_mb"], record["seconds"]
        later = f"{min(seconds[1:]):.1f}-{max(seconds[1:]):.1f}" if len(seconds) > 1 else "n/a"
        lines.append(
            f"| `{record['config']}` x {len(rss)}, {record['train_steps']} env steps | "
            f"{record['kept_agents']} | {rss[0]:.0f} | {rss[-1] - rss[0]:+.0f} | "
            f"{seconds[0]:.1f} | {later} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
