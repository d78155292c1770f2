"""The results pages (and README's numbers) that benchmarks' records make, written again.

`python -m benchmarks.pages` rewrites every such page, redraws the plots that do not show their
records as their code draws them (`plots.py`: each PNG is stamped with a digest of both;
`--figures` redraws every plot) and drops from each records file the records no page shows
(older sittings: git keeps them);
`python -m benchmarks.pages --check` only says which committed page or plot differs from what
its records give, or which records file holds records no page shows (tests/test_pages.py runs
the same checks); `--sittings` says at which commits, on which machines and when the records the
pages show were measured, so that a page left from another commit or machine is seen. Each
benchmark's own `--page` writes its page in the same way after a run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)  # The benchmarks import their helpers by module name.
sys.path.insert(0, ROOT)


def pages() -> dict[str, Callable[[], str]]:
    """Page path (relative to the repository) -> the text its records give."""
    from benchmarks import (
        api_memory,
        env_backends,
        env_throughput_page,
        exploration,
        learning_page,
        minigrid_native,
        mpi_scaling_page,
        mujoco_scores,
        native_page,
        readme_numbers,
        rnd,
        speed_matrix,
        speed_matrix_page,
        speed_page,
    )

    return {
        "README.md": readme_numbers.readme,
        "docs/results/api_memory.md": lambda: api_memory.page(api_memory.read_records()),
        "docs/results/env_backends.md": lambda: env_backends.page(
            speed_matrix.read_records(env_backends.RECORDS)
        ),
        "docs/results/env_throughput.md": lambda: env_throughput_page.page(
            speed_matrix.read_records(env_throughput_page.RECORDS)
        ),
        "docs/results/exploration.md": lambda: exploration.page(exploration.read_records()) + "\n",
        "docs/results/learning.md": lambda: learning_page.page(
            speed_matrix.read_records(learning_page.RECORDS)
        ),
        "docs/results/minigrid_native.md": lambda: (
            minigrid_native.page(minigrid_native.read_records()) + "\n"
        ),
        "docs/results/mpi_scaling.md": lambda: mpi_scaling_page.page(
            speed_matrix.read_records(os.path.join(HERE, "results", "mpi_scaling.jsonl"))
        ),
        "docs/results/mujoco.md": lambda: mujoco_scores.page(
            speed_matrix.read_records(mujoco_scores.RECORDS)
        ),
        "docs/results/native.md": lambda: native_page.page(
            speed_matrix.read_records(native_page.RECORDS)
        ),
        "docs/results/rnd.md": lambda: rnd.page(speed_matrix.read_records(rnd.RECORDS)),
        "docs/results/speed.md": lambda: speed_page.page(
            speed_matrix.read_records(speed_page.RECORDS)
        ),
        "docs/results/speed_matrix.md": lambda: speed_matrix_page.page(
            speed_matrix.read_records(speed_matrix.RECORDS)
        ),
    }


def shown() -> dict[str, Callable[[list[dict]], list[dict]]]:
    """Records file (relative to the repository) -> the records of it that pages and README show."""
    from common import sitting

    from benchmarks import (
        api_memory,
        env_backends,
        exploration,
        learning_page,
        mujoco_scores,
        native_page,
        readme_numbers,
    )

    def per(key: str, newest: Callable[[list[dict], str], list[dict]]) -> Callable:
        return lambda records: [
            record
            for value in dict.fromkeys(r.get(key) for r in records)
            for record in newest(records, value)
        ]

    views = {
        "api_memory": api_memory.newest,
        "env_backends": env_backends.latest,
        "env_throughput": sitting,
        "exploration": exploration.shown,
        "learning": per("task", learning_page.newest),
        "minigrid_native": sitting,
        "mpi_scaling": sitting,
        "mujoco": mujoco_scores.shown,
        "native": per("kind", native_page.newest),
        "rnd": sitting,
        "speed_matrix": sitting,
        "test_suite": readme_numbers.shown_suites,
        "vs_sb3": sitting,
    }
    return {f"benchmarks/results/{name}.jsonl": view for name, view in views.items()}


def records_and_shown() -> dict[str, tuple[list[dict], list[dict]]]:
    """Records file -> (all its records, those pages and README show)."""
    from benchmarks import speed_matrix

    found = {}
    for path, view in shown().items():
        records = speed_matrix.read_records(os.path.join(ROOT, path))
        found[path] = (records, view(records) if records else [])
    return found


def unshown() -> dict[str, tuple[list[dict], list[dict]]]:
    """Records file -> (all its records, those shown), for files holding records not shown."""
    return {
        path: (records, kept)
        for path, (records, kept) in records_and_shown().items()
        if len(kept) < len(records)
    }


def prune() -> None:
    """Rewrites each records file to the records its pages show, in their order."""
    for path, (records, kept) in unshown().items():
        ids = {id(record) for record in kept}
        with open(os.path.join(ROOT, path), "w", encoding="utf-8") as file:
            file.writelines(json.dumps(r) + "\n" for r in records if id(r) in ids)
        print(f"kept {len(kept)} of {len(records)} records in {path}")


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


def figures() -> list:
    """The results pages' plots (`plots.Plot`), each with the records it is drawn from."""
    from benchmarks import exploration, learning, learning_page, mujoco_scores, rnd, speed_matrix

    return [
        *exploration.plots(exploration.read_records()),
        *learning.plots(speed_matrix.read_records(learning_page.RECORDS)),
        *rnd.plots(speed_matrix.read_records(rnd.RECORDS)),
        *mujoco_scores.plots(speed_matrix.read_records(mujoco_scores.RECORDS)),
    ]


def stale_figures() -> list[str]:
    """The plots (relative to the repository) not drawn from their records by their current code."""
    from benchmarks import plots

    return [os.path.relpath(plot.path, ROOT) for plot in plots.stale(figures())]


def stale() -> list[str]:
    """The pages whose committed text differs from what their records give."""
    found = []
    for path, render in pages().items():
        try:
            with open(os.path.join(ROOT, path), encoding="utf-8") as file:
                committed = file.read()
        except FileNotFoundError:
            committed = None
        if committed != render():
            found.append(path)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument(
        "--figures", action="store_true", help="redraw every plot, not only those out of date"
    )
    parser.add_argument(
        "--sittings",
        action="store_true",
        help="write nothing; say where the shown records come from",
    )
    args = parser.parse_args(argv)
    if args.sittings:
        print("\n".join(sittings({p: kept for p, (_, kept) in records_and_shown().items()})))
        return 0
    if args.check:
        found = stale()
        for path in found:
            print(f"{path} differs from what its records give", file=sys.stderr)
        for path in stale_figures():
            found.append(path)
            print(f"{path} is not drawn from its records by its code", file=sys.stderr)
        for path, (records, kept) in unshown().items():
            found.append(path)
            print(f"{path}: {len(records) - len(kept)} records no page shows", file=sys.stderr)
        return 1 if found else 0
    for path, render in pages().items():
        text = render()  # Before the file is opened for writing: README's is read to render.
        with open(os.path.join(ROOT, path), "w", encoding="utf-8") as file:
            file.write(text)
        print(f"wrote {path}")
    prune()
    from benchmarks import plots

    for plot in figures() if args.figures else plots.stale(figures()):
        print(f"drew {os.path.relpath(plot.draw(), ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
