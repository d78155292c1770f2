"""Figures as their labels claim them: a page refuses a "median" its records cannot give.

A median of one or two values is that value or their mean: a label that says "median" promises
a middle of several rounds, runs or seeds. Pages take their medians here, so that a record set
too small for its label stops the page generator with a line naming the figure instead of a
figure that says more than was measured.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable

MEDIAN_AT_LEAST = 3  # Values a figure labelled "median" needs.


class ClaimError(ValueError):
    """A figure whose records lack what its label claims."""


def median(values: Iterable[float], what: str = "a figure labelled median") -> float:
    """The median of `values`, which must hold at least `MEDIAN_AT_LEAST` of them.

    Raises:
        ClaimError: Fewer values, naming `what` and how many the records hold.
    """
    values = list(values)
    if len(values) < MEDIAN_AT_LEAST:
        raise ClaimError(
            f"{what}: a median needs at least {MEDIAN_AT_LEAST} values, the records hold "
            f"{len(values)}; measure more rounds or label the figure as what it is"
        )
    return statistics.median(values)


def compiling(runs: list[dict]) -> str:
    """What whole-run figures of `runs` hold of XLA's compiling, from each record's
    `compiled_programs` (programs the run compiled rather than read from the compile cache):
    "compiling included" only where every run compiled."""
    if any("compiled_programs" not in run for run in runs):
        return (
            "whether each run compiled its XLA programs or read them from the cache: not recorded"
        )
    compiled = sum(run["compiled_programs"] > 0 for run in runs)
    if compiled == len(runs):
        return "compiling included"
    if compiled == 0:
        return "every run read its XLA programs from the compile cache"
    return (
        f"{compiled} of the {len(runs)} runs compiled XLA programs, the others read theirs from "
        "the compile cache"
    )


def cache(records: list[dict]) -> str:
    """The compile cache the records' processes started with, from `compile_cache_entries`
    (compiled programs in XLA's cache at the start): "a cold compile cache" only where every
    record started from an empty one."""
    counts = [record.get("compile_cache_entries") for record in records]
    if any(count is None for count in counts):
        return "compile cache not recorded"
    if all(count == 0 for count in counts):
        return "a cold compile cache"
    if all(count > 0 for count in counts):
        low, high = min(counts), max(counts)
        held = f"{low}" if low == high else f"{low}-{high}"
        return f"a warm compile cache of {held} programs"
    cold = sum(count == 0 for count in counts)
    return f"a cold compile cache in {cold} of {len(counts)} runs, a warm one in the others"


NEAR = 0.01  # A figure within this fraction of its threshold's size says by how much it passes.


def margin(value: float, threshold: float, higher: bool = True) -> str:
    """ " (passes -200 by 0.05)" where `value` is within `NEAR` of `threshold` (on the side
    `higher` says passes), " (misses ... by ...)" where it falls short as near, else ""."""
    gap = value - threshold if higher else threshold - value
    if abs(gap) > NEAR * max(abs(threshold), 1e-9):
        return ""
    return f" ({'passes' if gap >= 0 else 'misses'} {threshold:g} by {abs(gap):.2f})"


def runs_a_side(runs: list[dict], key: str = "side") -> str:
    """How many runs each side of a comparison holds, in words: "one run a side, a single
    sample each" or "3 runs a side" (the fewest where sides differ)."""
    counts = [sum(run[key] == side for run in runs) for side in dict.fromkeys(r[key] for r in runs)]
    if min(counts) == 1:
        return "one run a side, a single sample each"
    return f"{min(counts)} runs a side"


def busy(records: list[dict]) -> str:
    """ ", on a machine busier than its cores (load 3.3-5.2 on 2 cores)" where any record's
    one-minute load passed the core count its `machine` names, else ""."""
    loads = [record["load"] for record in records]
    found = [re.search(r"(\d+) cores", str(r.get("machine", ""))) for r in records]
    cores = min((int(match.group(1)) for match in found if match), default=None)
    if cores is None or max(loads) <= cores:
        return ""
    return (
        f", on a machine busier than its cores (load {min(loads):.1f}-{max(loads):.1f} on "
        f"{cores} cores)"
    )
