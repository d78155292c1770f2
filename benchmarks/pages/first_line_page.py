"""The layouts page's section on a native MiniGrid run's start: its first training line on empty
caches, from `benchmarks/results/first_line.jsonl`."""

from __future__ import annotations

from benchmarks import common

TARGET_SECONDS = 60.0  # A run on empty caches should print its first training line by then.


def section(records: list[dict]) -> str:
    """The section's Markdown from the newest sitting of `records` (empty without records)."""
    rows = common.sitting(records)
    if not rows:
        return ""
    loads = [row["load"] for row in rows]
    table = [f"| config | first line (s) | first training line (s) | within {TARGET_SECONDS:g} s |"]
    table.append("| --- | ---: | ---: | --- |")
    for row in rows:
        seconds = row["first_train_line_s"]
        shown = f"{seconds:.1f}" if seconds is not None else f"none in {row['timeout_s']:g}"
        first = f"{row['first_line_s']:.1f}" if row["first_line_s"] is not None else "-"
        met = "yes" if seconds is not None and seconds <= TARGET_SECONDS else "no"
        table.append(f"| `{row['config']}` | {first} | {shown} | {met} |")
    return "\n".join(
        [
            "## The first training line on empty caches",
            "",
            "A run builds the first layouts of its bank before training starts and the rest",
            "in worker processes beside it. Seconds from the command (`python -m",
            "agents.scripts.train --config=<name>`, with the layout banks' and XLA's caches",
            "empty, as on a fresh machine) to the run's first line and to its first training",
            "line (after its first training call), one run per config, one at a time.",
            "Generated from `benchmarks/results/first_line.jsonl` (`python -m",
            "benchmarks.first_line`).",
            "",
            f"{rows[0]['started'][:16]} | {rows[0]['machine']} | commit {rows[0]['commit']} | "
            f"load (1 min) {min(loads):.1f}-{max(loads):.1f}",
            "",
            *table,
            "",
        ]
    )
