"""Exploration's shown runs of a task scored again on minigrid's env, from their saved policies.

Training is the costly part of an exploration sitting; its score is a sample: over 100 episodes a
success rate near the 0.9 line has a standard error of 3 points. This plays each shown run's
exported policy (from the run directories the sitting left under `--runs`) over `--episodes`
fresh episodes, as `python -m benchmarks.exploration` scores, and rewrites those records' scores
with `episodes` and `rescored` (date, commit and machine of the scoring); training figures, curves
and the sitting's commit stay. The page says which scores were taken again.

Run: `python -m benchmarks.exploration_rescore --task keycorridor --runs DIR [--episodes 500]
[--page]` (DIR: the sitting's `--out`, holding `<task>/<arm>/<time>-<config>-s<seed>`).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

from benchmarks import common
from benchmarks.pages import exploration_page, exploration_runs


def _run_time(date: str) -> str:
    """A record's "YYYY-MM-DD HH:MM[:SS]" as run directories name their start: YYYYMMDDTHHMM[SS]."""
    return date.replace("-", "").replace(":", "").replace(" ", "T")


def run_dir(runs: str, record: dict) -> str:
    """The run directory under `runs` that trained `record` (named by the time it started, within
    the record's sitting: from `started` to the minute of `date`); exits naming what was found."""
    pattern = os.path.join(
        runs, record["task"], record["arm"], f"*-{record['config']}-s{record['seed']}"
    )
    begun, ended = _run_time(record["started"]), _run_time(record["date"]) + "59"
    found = sorted(
        path
        for path in glob.glob(pattern)
        if os.path.isdir(path) and begun <= os.path.basename(path)[: len(begun)] <= ended
    )
    if len(found) != 1:
        sys.exit(f"--runs {runs}: {len(found)} run directories match {pattern}; need exactly 1")
    return found[0]


def rescore(records: list[dict], task: str, runs: str, episodes: int) -> list[dict]:
    """`records` with the shown runs of `task` scored again over `episodes` episodes."""
    shown = {id(record) for record in exploration_page.tabled(records) if record["task"] == task}
    if not shown:
        sys.exit(f"--task {task}: no shown records; tasks with some: {exploration_runs.TASKS}")
    scoring = common.new_sitting()
    stamp = dict(
        date=time.strftime("%Y-%m-%d %H:%M"), **{k: scoring[k] for k in ("commit", "machine")}
    )
    result = []
    for record in records:
        if id(record) in shown:
            directory = run_dir(runs, record)
            scores = common.score_on_minigrid(directory, record["env_id"], episodes)
            record = dict(record, **scores, episodes=episodes, rescored=stamp)
            print(
                f"{record['arm']} seed {record['seed']}: success "
                f"{record['success_stochastic']:.3f} (mode {record['success_mode']:.3f})",
                flush=True,
            )
        result.append(record)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--task", required=True, choices=exploration_runs.TASKS)
    parser.add_argument("--runs", required=True, help="the sitting's --out directory")
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--page", action="store_true", help="rewrite the results page")
    args = parser.parse_args(argv)
    records = rescore(
        common.read_records(exploration_page.RECORDS), args.task, args.runs, args.episodes
    )
    with open(exploration_page.RECORDS, "w", encoding="utf-8") as file:
        file.writelines(json.dumps(record) + "\n" for record in records)
    if args.page:
        exploration_page.write(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
