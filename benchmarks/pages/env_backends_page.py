"""docs/results/env_backends.md, from the env backends benchmark's records (per config, the
latest run that measured it)."""

from __future__ import annotations

import os
import re

from benchmarks import common
from benchmarks.pages import claims

PAGE = os.path.join(common.ROOT, "docs", "results", "env_backends.md")
RECORDS = os.path.join(common.RESULTS, "env_backends.jsonl")
BACKENDS = ("python", "gymnasium-sync", "gymnasium-async", "envpool")


def latest(records: list[dict]) -> list[dict]:
    """For each config, the records of the newest sitting that measured it."""
    found = []
    for config in dict.fromkeys(record["config"] for record in records):
        found += common.sitting([record for record in records if record["config"] == config])
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
        base = claims.median(speeds["python"]) if speeds["python"] else None
        cells = [config]
        for backend in BACKENDS:
            if not speeds[backend]:
                cells.append("n/a")
                continue
            median = claims.median(speeds[backend])
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
            "python -m benchmarks.env_backends --rounds 3 --seconds 6 --page",
            "```",
            "",
            *lines,
            "",
            common.table(["config", *BACKENDS], rows),
            "",
            "`n/a`: the backend could not run here (EnvPool lacks the env, or its package is",
            "missing). See [Bringing your environments](../bring-your-envs.md) for what each",
            "backend supports.",
            "",
        ]
    )
