"""The test suite's wall time: README's test command, timed, with its outcome.

Runs README's test command (read from README.md, e.g. `python -m pytest -q -n 2 --dist loadfile
tests`, with `--durations=0` to time every test; `--not-slow` deselects the tests marked slow) in a
fresh process from the repository root with this interpreter, and appends a record (the command,
seconds, pytest's counts, the 30 slowest tests, seconds per test file, the tests of `SLOW_SECONDS`
or more that lack the `slow` mark, commit, machine, load, date, and the entries of XLA's compile
cache at the start: 0 for a cold start, as on a fresh machine) to
`benchmarks/results/test_suite.jsonl`; README's line on how long the suite takes is generated from
the newest records of README's command (`python -m benchmarks.pages`). Exits with pytest's status.

Run: `python -m benchmarks.test_suite [--not-slow]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

from benchmarks import common
from benchmarks.pages import readme_timings
from benchmarks.pages.readme_timings import SLOW_SECONDS

RECORDS = os.path.join(common.RESULTS, "test_suite.jsonl")
DURATION = re.compile(r"^(\d+\.\d+)s (call|setup|teardown)\s+(\S+)")


def counts(output: str) -> dict[str, int]:
    """pytest's closing counts ("956 passed, 4 skipped in ..."), by outcome."""
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    if not lines:
        return {}
    return {name: int(number) for number, name in re.findall(r"(\d+) (\w+)", lines[-1])}


def slowest(output: str) -> list[list]:
    """pytest's `--durations` lines as [seconds, phase, test id], slowest first."""
    found = (DURATION.match(line) for line in output.splitlines())
    return [[float(m[1]), m[2], m[3]] for m in found if m]


def by_file(durations: list[list]) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown summed), the costliest first."""
    files: dict[str, float] = {}
    for seconds, _, test in durations:
        path = test.split("::")[0]
        files[path] = files.get(path, 0.0) + seconds
    return {path: round(total, 1) for path, total in sorted(files.items(), key=lambda x: -x[1])}


def per_test(durations: list[list]) -> dict[str, float]:
    """Seconds per test id (setup, call and teardown summed)."""
    tests: dict[str, float] = {}
    for seconds, _, test in durations:
        tests[test] = tests.get(test, 0.0) + seconds
    return tests


def marked_slow() -> set[str]:
    """The ids of the tests that carry the `slow` mark (pytest's collection, nothing run)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow", "tests"],
        cwd=common.ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    return {line.strip() for line in result.stdout.splitlines() if "::" in line}


def unmarked_slow(durations: list[list], marked: set[str]) -> list[list]:
    """[seconds, test id] of the tests of `SLOW_SECONDS` or more that lack the `slow` mark."""
    over = per_test(durations).items()
    found = [[round(t, 2), test] for test, t in over if t >= SLOW_SECONDS and test not in marked]
    return sorted(found, reverse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--not-slow", action="store_true", help="deselect tests marked slow")
    args = parser.parse_args(argv)
    readme = readme_timings.readme_command()
    if not readme.startswith("python -m pytest "):
        raise SystemExit(f"README's test command is not `python -m pytest ...`: {readme!r}")
    command = [sys.executable, *readme.split()[1:], "--durations=0"]
    if args.not_slow:
        command += ["-m", readme_timings.QUICK]
    started, revision, host = time.strftime("%Y-%m-%d %H:%M:%S"), common.commit(), common.machine()
    cached = common.cached_programs()  # 0: a cold start.
    begun = time.perf_counter()
    result = subprocess.run(
        command, cwd=common.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seconds = time.perf_counter() - begun
    durations = slowest(result.stdout)
    shown = [line for line in result.stdout.splitlines() if not DURATION.match(line)]
    sys.stdout.write("\n".join(shown)[-6000:] + "\n")
    unmarked = [] if args.not_slow else unmarked_slow(durations, marked_slow())
    for seconds_of_test, test in unmarked:
        print(f"{seconds_of_test:.1f} s without the slow mark: {test}")
    record = dict(
        started=started,
        date=started[:16],
        commit=revision,
        machine=host,
        load=os.getloadavg()[0],
        compile_cache_entries=cached,
        command=readme,
        selection=readme_timings.QUICK if args.not_slow else readme_timings.WHOLE,
        seconds=seconds,
        returncode=result.returncode,
        slowest=durations[:30],
        files=by_file(durations),
        unmarked_slow=unmarked,
        **counts(result.stdout),
    )
    with open(RECORDS, "a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")
    print(f"{seconds / 60:.1f} min, exit {result.returncode}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
