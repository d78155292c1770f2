"""docs/results/api_memory.md, from the memory benchmark's records (the newest commit's)."""

from __future__ import annotations

import os

from benchmarks import common

PAGE = os.path.join(common.ROOT, "docs", "results", "api_memory.md")
RECORDS = os.path.join(common.RESULTS, "api_memory.jsonl")


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
        "python -m benchmarks.api_memory --kept_agents 4 && python -m benchmarks.api_memory \\",
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
