"""How the committed pages, plots and records files stand against what the records give: stale
pages and plots, records files that lost records, and where the shown records were measured."""

from __future__ import annotations

import os
import re

from benchmarks import common
from benchmarks.pages import plots, registry, trees

ROOT = common.ROOT


def records_and_shown() -> dict[str, tuple[list[dict], list[dict]]]:
    """Records file -> (all its records, those pages and README show)."""
    found = {}
    for path, view in registry.shown().items():
        records = common.read_records(os.path.join(ROOT, path))
        found[path] = (records, view(records) if records else [])
    return found


def dropped(before: dict[str, str], after: dict[str, str]) -> dict[str, int]:
    """Records file -> how many of its records `before` (path -> text) are not where they were
    in `after`: records are only appended, so `after` must start with `before` whole."""
    found = {}
    for path, old in before.items():
        lines, new = old.splitlines(), after.get(path, "").splitlines()
        if new[: len(lines)] != lines:
            kept = sum(1 for a, b in zip(lines, new, strict=False) if a == b)
            found[path] = len(lines) - kept
    return found


def sittings(shown_records: dict[str, list[dict]]) -> list[str]:
    """Lines naming, per records file, the commits, machines and dates of its `shown_records`,
    then how many commits and machines they span in all."""
    lines, commits, machines = [], set(), set()
    for path, records in shown_records.items():
        if not records:
            lines.append(f"{path}: no records")
            continue
        mine = sorted({str(r.get("commit")) for r in records})
        where = sorted({record_machine(record) for record in records})
        dates = sorted(str(r.get("date", "?")) for r in records)
        commits.update(mine)
        machines.update(where)
        span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
        lines.append(
            f"{path}: {len(records)} records, commit {', '.join(mine)}; {' | '.join(where)}; {span}"
        )
    lines.append(f"In all: {len(commits)} commit(s), {len(machines)} machine line(s).")
    return lines


def record_machine(record: dict) -> str:
    """A record's machine: its `machine`, or the CPU part of an older `machine_line`
    ("2026-11-26 06:22 | 2 CPUs (AMD EPYC), load 0.6, 1.2, 1.4 | Python 3.11.7")."""
    if record.get("machine"):
        return str(record["machine"])
    found = re.search(r"\d+ CPUs \([^)]*\)", str(record.get("machine_line", "")))
    return found.group(0) if found else "not recorded"


def stale_figures() -> list[str]:
    """The plots (relative to the repository) not drawn from their records by their current code."""
    return [os.path.relpath(plot.path, ROOT) for plot in plots.stale(registry.figures())]


def stale() -> list[str]:
    """The pages whose committed text differs from what their records give (the moving count of
    `agents/` files changed since an older tree aside: `trees.steady`)."""
    found = []
    for path, render in registry.pages().items():
        try:
            with open(os.path.join(ROOT, path), encoding="utf-8") as file:
                committed = file.read()
        except FileNotFoundError:
            committed = None
        if committed is None or trees.steady(committed) != trees.steady(render()):
            found.append(path)
    return found
