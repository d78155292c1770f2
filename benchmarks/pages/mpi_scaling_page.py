"""docs/results/mpi_scaling.md, from the records of the MPI scaling benchmark's newest sitting."""

from __future__ import annotations

import os
import statistics

from benchmarks import common
from benchmarks.pages import claims

PAGE = os.path.join(common.ROOT, "docs", "results", "mpi_scaling.md")
RECORDS = os.path.join(common.RESULTS, "mpi_scaling.jsonl")

_INTRO = """# MPI scaling

Training env steps per second with 1 and 2 ranks on an env-heavy task, and the return at equal
total env steps. The task is Pendulum-v1 with 200 µs of busy work per env step (about a MuJoCo
locomotion step with its frame skip) and the `pendulum` config. `mpi_batch` says how the ranks
share it ([MPI](../mpi.md)): `per_rank`, every rank steps the config's 16 envs, so each update
sees twice one process's batch and a run at equal env steps makes half the updates; `global`,
the 16 envs are split over the ranks, so every update and the number of updates per env step
are one process's. Throughput counts the env steps of all ranks over the train phases after the
first; the return is the deterministic policy's over 20 episodes after training, as mean and
spread over seeds. Generated from `benchmarks/results/mpi_scaling.jsonl` by:
"""


def _command(seeds: list[int]) -> str:
    """The command that measures a sitting of `seeds` and writes this page."""
    listed = " ".join(str(seed) for seed in seeds)
    return (
        f"\n```sh\npython -m benchmarks.mpi_scaling --seeds {listed} --mpi_batch per_rank global "
        "--page\n```\n"
    )


def page(records: list[dict]) -> str:
    """The page's Markdown: one row per (ranks, batch mode), over the sitting's seeds."""
    rows = common.sitting(records)
    if not rows:
        return _INTRO + _command([0, 1, 2]) + "\nNo sitting recorded yet.\n"
    seeds = sorted({record["seed"] for record in rows})
    groups: dict[tuple[int, str], list[dict]] = {}
    for record in rows:
        groups.setdefault((record["ranks"], record["mpi_batch"]), []).append(record)
    base = claims.median(r["steps_per_second"] for r in groups.get((1, "one process"), rows))
    loads = [record["load"] for record in rows]
    header = (
        f"{rows[0]['date']} to {rows[-1]['date']} | {rows[0]['machine']} | commit "
        f"{rows[0]['commit']} | launches alternating per seed | load "
        f"{min(loads):.1f}-{max(loads):.1f}"
    )
    lines = [
        "| ranks | mpi_batch | seeds | env steps | env steps/s (median) | speed-up "
        "| eval return (mean ± std over seeds) | seeds' returns | wall s (median) |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for (ranks, mode), group in sorted(groups.items()):
        speed = claims.median(r["steps_per_second"] for r in group)
        returns = [r["eval_mean"] for r in group]
        spread = statistics.pstdev(returns) if len(returns) > 1 else 0.0
        lines.append(
            f"| {ranks} | {mode} | {len(group)} | {group[0]['env_steps']:,} | {speed:,.0f} | "
            f"{speed / base:.2f}x | {statistics.fmean(returns):.1f} ± {spread:.1f} | "
            f"{', '.join(f'{value:.0f}' for value in returns)} | "
            f"{claims.median(r['wall'] for r in group):.1f} |"
        )
    return "\n".join([_INTRO + _command(seeds), header, "", *lines, ""])
