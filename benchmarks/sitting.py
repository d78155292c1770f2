"""Every results page measured again at one commit on one machine, one benchmark at a time.

`python -m benchmarks.sitting` runs, shortest first, the benchmark behind each records file whose
shown records are not all at the measured checkout's commit and on this machine, then rewrites the
pages from the records (`python -m benchmarks.pages`, which redraws the plots they change) after
each. A whole sitting takes hours on 2 cores; what is done stays done (its records name the commit
and machine), so the same command later resumes it. `--checkout DIR` measures another checkout, a
worktree held at the commit being measured (`git worktree add --detach DIR COMMIT`), with its own
benchmarks, and adds its new records to this checkout's, then puts the checkout's records and pages
back as committed before the next step (the test suite measured there would fail its page checks on
records an earlier step appended); `--collect` only adds them; `--plan` prints what would run. A
step with a command that exits non-zero (a crash, or a benchmark's own checks failing after it
wrote its records) is reported, its records kept, and the next step runs. A step with parts (the
exploration benchmark's tasks, each a sitting of its own on its page) runs only the parts not yet
measured (`--parts` picks some of them), so a step longer than the hours at hand is done over
several. Each step's output goes to `benchmarks/out/sitting/<records>.log`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace

from benchmarks import common
from benchmarks.pages import checks, exploration_runs, readme_timings

PAGES = [sys.executable, "-m", "benchmarks.pages"]  # Run in this checkout.
RESULTS = common.RESULTS  # This checkout's records, which gain the measured checkout's.
LOGS = os.path.join(common.DEFAULT_OUT, "sitting")


@dataclass(frozen=True)
class Parts:
    """A step measured part by part: its records name their part, and a sitting stopped between
    parts (a step longer than the hours at hand) resumes at the parts not done."""

    key: str  # The record field naming a record's part.
    names: tuple[str, ...]
    flag: str  # The benchmark's option that runs only the parts named after it.
    runs: int  # The records one part's sitting writes.


@dataclass(frozen=True)
class Step:
    """The benchmark commands (each a module and its arguments, run as `python -m`) that write
    one records file's sitting."""

    records: str
    page: str
    commands: tuple[tuple[str, ...], ...]
    needs_sb3: bool = False
    # A record field and its values (README's suite: the whole, the quick): done when the
    # newest shown record of each value was measured, older ones being kept on the page.
    newest_of: tuple[str, tuple[str, ...]] | None = None
    duration_key: str | None = None  # A record's own duration in seconds, where dates lack it.
    parts: Parts | None = None


STEPS = (
    Step(
        "env_throughput",
        "docs/results/env_throughput.md",
        (("benchmarks.env_throughput", "--page"),),
    ),
    Step(
        "api_memory",
        "docs/results/api_memory.md",
        (
            ("benchmarks.api_memory", "--kept_agents", "4"),
            ("benchmarks.api_memory", "--kept_agents", "0", "--page"),
        ),
    ),
    Step(
        "minigrid_native",
        "docs/results/minigrid_native.md",
        (("benchmarks.minigrid_native", "--page"),),
    ),
    Step(
        "learning",
        "docs/results/learning.md",
        (
            ("benchmarks.learning", "--tasks", "pendulum", "--seeds", "10", "--page"),
            ("benchmarks.learning", "--tasks", "cartpole", "--seeds", "3", "--page"),
        ),
    ),
    Step(
        "vs_sb3",
        "docs/results/speed.md",
        (
            ("benchmarks.vs_sb3", "--sb3-python", "{sb3}", "--tasks", "pendulum", "cartpole")
            + ("--rounds", "5", "--page"),
        ),
        needs_sb3=True,
    ),
    Step(
        "rnd",
        "docs/results/rnd.md",
        (("benchmarks.rnd", "--seeds", "3", "--set", "native_env=True", "--page"),),
    ),
    Step(
        "speed_matrix",
        "docs/results/speed_matrix.md",
        (("benchmarks.speed_matrix", "--quick", "--page"),),
    ),
    Step(
        "native",
        "docs/results/native.md",
        (
            ("benchmarks.native", "--seeds", "3", "--page"),
            ("benchmarks.native", "--seeds", "1", "--gym", "--page", "--configs")
            + ("cartpole_native", "pendulum_native", "acrobot_native", "mountaincar_native")
            + ("mountaincar_continuous_native",),
            ("benchmarks.native", "--steady", "--page"),
        ),
    ),
    Step(
        "test_suite",
        "README.md",
        (("benchmarks.test_suite",), ("benchmarks.test_suite", "--not-slow")),
        newest_of=("selection", (readme_timings.WHOLE, readme_timings.QUICK)),
        duration_key="seconds",
    ),
    Step(
        "mpi_scaling",
        "docs/results/mpi_scaling.md",
        (
            ("benchmarks.mpi_scaling", "--seeds", *map(str, range(16)))
            + ("--mpi_batch", "per_rank", "global", "--page"),
        ),
    ),
    Step(
        "env_backends",
        "docs/results/env_backends.md",
        (("benchmarks.env_backends", "--rounds", "3", "--seconds", "6", "--page"),),
    ),
    Step(
        "mujoco",
        "docs/results/mujoco.md",
        (("benchmarks.mujoco_scores", "--seeds", "3", "--parallel", "2", "--page"),),
    ),
    Step(
        "exploration",
        "docs/results/exploration.md",
        (
            (
                "benchmarks.exploration",
                *("--seeds", "5", "--episodes", "500", "--jobs", "2", "--page"),
            ),
        ),
        parts=Parts(
            "task",
            exploration_runs.DEFAULT_TASKS,
            "--tasks",
            runs=5 * len(exploration_runs.CORE_ARMS),
        ),
    ),
)


def shell(command: tuple[str, ...]) -> str:
    """A step's command as a user types it (and its page shows it)."""
    return " ".join(["python", "-m", *command])


def _minute(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text[:16], "%Y-%m-%d %H:%M")


def last_minutes(step: Step, shown: list[dict]) -> float | None:
    """How long the shown sitting took, in minutes: per run of the benchmark (records sharing
    `started`, or `run`), from its start to its last record; None when the records cannot say."""
    if step.duration_key:
        found = [r[step.duration_key] for r in _newest(step, shown) if step.duration_key in r]
        return sum(found) / 60 if found else None
    runs: dict[str, list[dict]] = {}
    for record in shown:
        start = record.get("started") or record.get("run")
        if start and record.get("date"):
            runs.setdefault(start, []).append(record)
    if not runs:
        return None
    return sum(
        (max(_minute(r["date"]) for r in rows) - _minute(start)).total_seconds() / 60 + 1
        for start, rows in runs.items()
    )


def _measured(records: list[dict], commit: str, machine: str) -> bool:
    return bool(records) and all(
        r.get("commit") == commit and checks.record_machine(r) == machine for r in records
    )


def _newest(step: Step, shown: list[dict]) -> list[dict]:
    """The shown records a sitting of `step` must have made: all, or where the step keeps older
    runs on its page, the newest of each kind."""
    if step.newest_of is None:
        return shown
    key, values = step.newest_of
    newest = {r.get(key): r for r in shown}
    return [newest[value] for value in values if value in newest]


def done(step: Step, shown: list[dict], commit: str, machine: str) -> bool:
    """Whether the records `step`'s pages show were measured at `commit` on `machine`."""
    if step.parts:
        return not parts_left(step, shown, commit, machine)
    newest = _newest(step, shown)
    if step.newest_of and len(newest) < len(step.newest_of[1]):
        return False  # A kind never measured.
    return _measured(newest, commit, machine)


def parts_left(step: Step, shown: list[dict], commit: str, machine: str) -> tuple[str, ...]:
    """The parts of `step` whose shown records are not all of a part's runs measured at `commit`
    on `machine` (a part that a stopped sitting left half measured is measured again)."""
    if step.parts is None:
        return ()
    key, runs = step.parts.key, step.parts.runs
    mine = {name: [r for r in shown if r.get(key) == name] for name in step.parts.names}
    return tuple(
        name
        for name, records in mine.items()
        if len(records) < runs or not _measured(records, commit, machine)
    )


def part_minutes(
    step: Step, shown: list[dict], left: tuple[str, ...], minutes: float | None
) -> float | None:
    """How long the parts `left` took when last measured: each part's own sitting where every
    part was measured apart, else their share of the step's `minutes`."""
    key = step.parts.key
    sittings = [
        {r.get("started") or r.get("run") for r in shown if r.get(key) == name}
        for name in step.parts.names
    ]
    apart = all(sittings) and len(set().union(*sittings)) == sum(map(len, sittings))
    if apart:
        return sum(
            last_minutes(step, [r for r in shown if r.get(key) == name]) or 0 for name in left
        )
    return None if minutes is None else minutes * len(left) / len(step.parts.names)


def narrowed(step: Step, left: tuple[str, ...]) -> Step:
    """`step` running only the parts `left`, where some of its parts are done."""
    if step.parts is None or set(left) == set(step.parts.names):
        return step
    flag = (step.parts.flag, *left)
    return replace(step, commands=tuple((c[0], *flag, *c[1:]) for c in step.commands))


def plan(
    shown: dict[str, list[dict]], commit: str, machine: str, parts: list[str] | None = None
) -> list[tuple[Step, float | None]]:
    """The steps not yet done at `commit` on `machine`, shortest (by its last sitting) first; a
    step done in part runs its other parts only (of them, those in `parts` where given)."""
    todo = []
    for step in STEPS:
        mine = shown.get(step.records, [])
        if done(step, mine, commit, machine):
            continue
        minutes = last_minutes(step, mine)
        if step.parts:
            left = parts_left(step, mine, commit, machine)
            left = tuple(name for name in left if parts is None or name in parts)
            if not left:
                continue
            minutes = part_minutes(step, mine, left, minutes)
            step = narrowed(step, left)
        todo.append((step, minutes))
    return sorted(todo, key=lambda item: float("inf") if item[1] is None else item[1])


def collect(checkout: str, commit: str) -> list[str]:
    """Adds to this checkout's records files the records of `checkout`'s measured at `commit`
    that they lack (older ones this checkout's pages may have dropped); returns a line per file
    that gained some."""
    lines = []
    for step in STEPS:
        name = f"{step.records}.jsonl"
        theirs = os.path.join(checkout, "benchmarks", "results", name)
        ours = os.path.join(RESULTS, name)
        if os.path.realpath(theirs) == os.path.realpath(ours) or not os.path.exists(theirs):
            continue
        with open(theirs, encoding="utf-8") as file:
            their_lines = [line for line in file.read().splitlines() if line.strip()]
        known = set()
        if os.path.exists(ours):
            with open(ours, encoding="utf-8") as file:
                known = {line.strip() for line in file}
        new = [
            line
            for line in their_lines
            if line.strip() not in known and json.loads(line).get("commit") == commit
        ]
        if new:
            with open(ours, "a", encoding="utf-8") as file:
                file.writelines(line + "\n" for line in new)
            lines.append(f"{name}: {len(new)} new records from {checkout}")
    return lines


def restore(checkout: str) -> list[str]:
    """Puts the records and pages of the measured `checkout` (never this one) back as committed,
    once `collect` has their records: each step then measures the commit as it is (the test
    suite's page checks fail on the records an earlier step appended there). Returns the paths
    restored or removed."""
    if os.path.realpath(checkout) == os.path.realpath(common.ROOT):
        return []
    paths = ["benchmarks/results", "docs", "README.md"]

    def git(*args: str) -> list[str]:
        result = subprocess.run(
            ["git", "-C", checkout, *args], capture_output=True, text=True, check=True
        )
        return result.stdout.split()

    changed = git("diff", "--name-only", "HEAD", "--", *paths)
    if changed:
        git("checkout", "HEAD", "--", *changed)
    added = git("ls-files", "--others", "--exclude-standard", "--", *paths)
    for path in added:
        os.remove(os.path.join(checkout, path))
    return changed + added


def _shown() -> dict[str, list[dict]]:
    return {
        os.path.basename(path)[: -len(".jsonl")]: kept
        for path, (_, kept) in checks.records_and_shown().items()
    }


def _run(step: Step, checkout: str, sb3: str | None, log_path: str) -> int:
    """Runs all of `step`'s commands in `checkout`, importing its own `agents`; the first
    non-zero exit status, or 0 (a benchmark exits non-zero when its own checks fail too, after
    writing its records)."""
    env = common.checkout_env(checkout)
    codes = []
    with open(log_path, "a", encoding="utf-8") as log:
        for command in step.commands:
            argv = [sys.executable, "-m", *(sb3 if part == "{sb3}" else part for part in command)]
            log.write(f"$ {' '.join(argv)}\n")
            log.flush()
            codes.append(
                subprocess.run(argv, cwd=checkout, env=env, stdout=log, stderr=log).returncode
            )
    return next((code for code in codes if code), 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--checkout", default=common.ROOT, help="the checkout measured (default: this)"
    )
    parser.add_argument("--sb3-python", help="the Python of a venv with stable-baselines3")
    parser.add_argument("--only", nargs="+", choices=[s.records for s in STEPS], default=None)
    parser.add_argument("--skip", nargs="+", choices=[s.records for s in STEPS], default=[])
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=[name for step in STEPS if step.parts for name in step.parts.names],
        help="of a step measured part by part, only these parts (e.g. the tasks there is time for)",
    )
    parser.add_argument("--plan", action="store_true", help="print the steps left; run nothing")
    parser.add_argument("--collect", action="store_true", help="only add the checkout's records")
    args = parser.parse_args(argv)
    checkout = os.path.abspath(args.checkout)
    if not os.path.exists(os.path.join(checkout, "benchmarks", "__init__.py")):
        parser.error(
            f"--checkout {args.checkout}: no benchmarks package there (run as `python -m "
            "benchmarks.<name>`); give a checkout of this repository at such a commit"
        )
    target, here = common.commit(checkout), common.machine()
    if target.endswith("-dirty") or target == "unknown":
        parser.error(
            f"--checkout {args.checkout} is at {target}: commit its code first, so records name it"
        )
    if args.collect:
        print("\n".join(collect(checkout, target)) or "no new records")
        return 0
    steps = [
        (step, minutes)
        for step, minutes in plan(_shown(), target, here, args.parts)
        if (args.only is None or step.records in args.only) and step.records not in args.skip
    ]
    total = sum(minutes or 0 for _, minutes in steps)
    print(
        f"{len(steps)} step(s) left at {target} on {here}; their last sittings took {total:.0f} min"
    )
    for step, minutes in steps:
        took = "?" if minutes is None else f"{minutes:.0f} min"
        print(f"  {step.records} (last: {took}): " + " && ".join(map(shell, step.commands)))
    if args.plan or not steps:
        return 0
    if any(step.needs_sb3 for step, _ in steps) and not args.sb3_python:
        parser.error(
            "vs_sb3 needs --sb3-python PATH (a venv's python with stable-baselines3) "
            "or --skip vs_sb3"
        )
    os.makedirs(LOGS, exist_ok=True)
    collect(checkout, target)  # What an earlier, stopped sitting left there, before it goes.
    failed = []
    for index, (step, minutes) in enumerate(steps, 1):
        log_path = os.path.join(LOGS, f"{step.records}.log")
        took = "?" if minutes is None else f"{minutes:.0f}"
        print(
            f"[{index}/{len(steps)}] {time.strftime('%H:%M')} {step.records} "
            f"(last: {took} min), log {log_path}",
            flush=True,
        )
        restore(checkout)
        start = time.perf_counter()
        code = _run(step, checkout, args.sb3_python, log_path)
        spent = (time.perf_counter() - start) / 60
        if code:
            failed.append(step.records)
        for line in collect(checkout, target):
            print(f"    {line}")
        subprocess.run(
            PAGES,
            cwd=common.ROOT,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        state = f"exit {code} (see {log_path})" if code else "done"
        print(f"    {step.records} {state} after {spent:.0f} min; pages rewritten", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
