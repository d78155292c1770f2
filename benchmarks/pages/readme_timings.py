"""The paragraph under README's two commands, how long each takes, between two markers; and the
test command and selections of the suite it times, which `python -m benchmarks.test_suite` runs."""

from __future__ import annotations

import os
import re
import textwrap

from benchmarks import common
from benchmarks.pages import claims, readme_numbers

README = os.path.join(common.ROOT, "README.md")
TIMES_BEGIN = "<!-- timings generated from benchmarks/results by python -m benchmarks.pages -->"
TIMES_END = "<!-- end of generated timings -->"
WHOLE, QUICK = "all", "not slow"  # A record's `selection`: the whole suite, or `-m "not slow"`.
SLOW_SECONDS = 4.0  # A test that takes this long on the reference machine carries the `slow` mark.


def readme_command(readme: str = README) -> str:
    """The test command of README's second shell block: what follows its last `&& `."""
    with open(readme, encoding="utf-8") as file:
        blocks = re.findall(r"```sh\n(.*?)\n```", file.read(), re.DOTALL)
    return blocks[1].split("&& ")[-1].strip()


def timings() -> str:
    """The paragraph under README's two commands: how long each takes, from records."""
    rows = [
        r
        for r in common.sitting(readme_numbers.read("vs_sb3"))
        if r["task"] == "pendulum" and r["side"] == "ours" and r.get("cache") == "cold"
    ]  # A fresh cache, a user's first run: its XLA programs compile.
    train = "trains PPO on Pendulum-v1" + (f" ({train_timing(rows)})" if rows else "")
    suites = readme_numbers.read("test_suite")
    recent = recent_suites(suites)
    suite = "runs the whole test suite, slow tests included"
    if recent:
        low, high = min(r["seconds"] for r in recent) / 60, max(r["seconds"] for r in recent) / 60
        span = f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}"
        runs = f"over the last {len(recent)} runs" if len(recent) > 1 else "for one run"
        suite += (
            f" ({span} minutes {runs}{cache_label(recent)}, {recent[-1].get('passed', 0):,} tests, "
            f"{readme_numbers.where(recent[-1])}; `python -m benchmarks.test_suite`)"
        )
    for quick in quick_suite(suites):
        suite += (
            f"; without the tests marked slow (those of {SLOW_SECONDS:.0f} s or more: processes "
            f'started, training runs; `-m "{QUICK}"`) it takes '
            f"{quick['seconds'] / 60:.1f} minutes ({quick.get('passed', 0):,} tests"
            f"{cache_label([quick])}, "
            f"{readme_numbers.where(quick)}; `python -m benchmarks.test_suite --not-slow`)"
        )
    text = (
        f"The first command installs the package and {train}; the second installs the test "
        f"dependencies and {suite}."
    )
    wrapped = textwrap.fill(text, 100, break_on_hyphens=False)
    return "\n".join([TIMES_BEGIN, wrapped, TIMES_END])


def train_timing(rows: list[dict]) -> str:
    """The first command's figure from `rows`, the speed benchmark's cold runs of ours on
    Pendulum: what was timed (the training command alone, at the records' budget), its span or
    single run, and where (the machine of those runs only)."""
    seconds = sorted(r["seconds"] for r in rows)
    span = f"{seconds[0]:.1f} s" if len(seconds) == 1 else f"{seconds[0]:.1f}-{seconds[-1]:.1f} s"
    runs = "one run" if len(seconds) == 1 else f"{len(seconds)} runs"
    return (
        f"the training command alone, {rows[0]['env_steps']:,} env steps: {span} from command to "
        f"exit with an empty compile cache, {runs} on one machine, {readme_numbers.where(*rows)}; "
        "[speed](docs/results/speed.md)"
    )


def cache_label(records: list[dict]) -> str:
    """ ", with a cold compile cache" or ", with a warm compile cache of 131 programs", from the
    records' `compile_cache_entries`; "" for records made before the count was kept."""
    return cold_label(records) or (
        f", with {claims.cache(records)}"
        if all("compile_cache_entries" in r for r in records)
        else ""
    )


def cold_label(records: list[dict]) -> str:
    """The words ', with a cold compile cache' where every record started without compiled code."""
    cold = all(r.get("compile_cache_entries") == 0 for r in records)
    return ", with a cold compile cache" if cold else ""


def _passing(records: list[dict], selection: str) -> list[dict]:
    """The passing runs of README's test command over `selection` (`WHOLE` or `QUICK`)."""
    command = readme_command()
    return [
        r
        for r in records
        if r["selection"] == selection and r["returncode"] == 0 and r.get("command") == command
    ]


def recent_suites(records: list[dict]) -> list[dict]:
    """README's span of the whole suite's time: on the slowest machine (`slowest_machine`), its
    last three passing runs with README's test command at the commit of its newest one (a line
    never spans commits or machines)."""
    passing = slowest_machine(_passing(records, WHOLE))
    commit = passing[-1].get("commit") if passing else None
    return [r for r in passing if r.get("commit") == commit][-3:]


def quick_suite(records: list[dict]) -> list[dict]:
    """The newest passing run of README's test command without the tests marked slow (the
    check a change gets before the learning tests) on the slowest machine, or none."""
    return slowest_machine(_passing(records, QUICK))[-1:]


def slowest_machine(runs: list[dict]) -> list[dict]:
    """The runs of the machine whose newest run took longest: a contributor's machine decides
    whether the suite's minutes hold, so README shows the slowest met, not the newest."""
    newest = {run.get("machine"): run for run in runs}
    if not newest:
        return []
    machine = max(newest, key=lambda name: newest[name]["seconds"])
    return [run for run in runs if run.get("machine") == machine]


def shown_suites(records: list[dict]) -> list[dict]:
    """The suite's runs README shows: its span of the whole suite, then the quick run."""
    return recent_suites(records) + quick_suite(records)
