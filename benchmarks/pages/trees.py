"""Whether a figure's records ran on today's library code: the `agents/` tree of their commit
against HEAD's, and the words a page and README say where it differs.

A page measured at a commit whose `agents/` differs from HEAD's says so in a line under its
title, with how many files of `agents/` had changed when it was written. That count moves with
every commit to `agents/`, so `steady` takes it out before a committed page is compared with
what its records give: the page is stale when its records or its words change, not at every
commit of the library.
"""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Callable, Iterable
from typing import NamedTuple

from benchmarks import common


class Age(NamedTuple):
    """How a records' commit stands against HEAD's `agents/` tree."""

    commit: str  # As the records name it ("ed936d1", "ed936d1-dirty", "unknown").
    current: bool  # Its `agents/` tree is HEAD's: the code measured is today's.
    changed: int | None  # Files of `agents/` that differ from HEAD's; None where unknown.


AgeOf = Callable[[str], Age]  # A records' commit -> its Age.


def _git(*args: str) -> str:
    result = subprocess.run(["git", "-C", common.ROOT, *args], capture_output=True, text=True)
    return result.stdout.strip()


@functools.cache
def git_age(commit: str) -> Age:
    """`commit`'s `agents/` tree against HEAD's in this checkout. A commit git does not know
    (one not in this history, "unknown") or one measured with uncommitted changes ("-dirty")
    counts as older: nothing says its code is today's."""
    if commit.endswith("-dirty") or common.agents_tree(commit) is None:
        return Age(commit, False, None)
    if common.agents_tree(commit) == common.agents_tree("HEAD"):
        return Age(commit, True, 0)
    names = _git("diff", "--name-only", f"{commit}^{{commit}}", "HEAD", "--", "agents/")
    return Age(commit, False, len(names.splitlines()))


def older(records: Iterable[dict], age_of: AgeOf = git_age) -> dict[str, tuple[Age, list[str]]]:
    """Commit -> (its Age, the days its records were made), for the records' commits whose
    `agents/` tree is not HEAD's, in the order the records first name them."""
    found: dict[str, tuple[Age, list[str]]] = {}
    for record in records:
        commit = str(record.get("commit") or "not recorded")
        age = found[commit][0] if commit in found else age_of(commit)
        if not age.current:
            days = found.get(commit, (age, []))[1]
            found[commit] = (age, sorted({*days, str(record.get("date", "?"))[:10]}))
    return found


def _span(days: list[str]) -> str:
    return days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"


def _one(age: Age, days: list[str]) -> str:
    if age.commit.endswith("-dirty"):
        what = "uncommitted changes on top"
    elif age.changed is None:
        what = "not in this repository's history"
    else:
        what = f"{age.changed} file{'s' if age.changed != 1 else ''} of `agents/` changed since"
    return f"commit {age.commit.removesuffix('-dirty')} of {_span(days)} ({what})"


def page_line(records: list[dict], age_of: AgeOf = git_age) -> str | None:
    """The line a page shows under its title where any of its `records` ran on an older
    `agents/` tree; None where all ran on HEAD's."""
    found = older(records, age_of)
    if not found:
        return None
    some = len(found) < len({str(r.get("commit") or "not recorded") for r in records})
    trees = "an older `agents/` tree" if len(found) == 1 else "older `agents/` trees"
    head = f"**{'Partly measured' if some else 'Measured'} on {trees}**"
    commits = "; ".join(_one(age, days) for age, days in found.values())
    first = next(iter(found))
    return (
        f"{head}: {commits}, counted when this page was written (`git diff --stat "
        f"{first.removesuffix('-dirty')} HEAD -- agents/` lists them now). Its figures "
        "describe that code, not today's."
    )


def mark(text: str, records: list[dict], age_of: AgeOf = git_age) -> str:
    """`text` (a page whose first line is its title) with `page_line` after the title."""
    line = page_line(records, age_of)
    if line is None:
        return text
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{line}\n{rest}"


def readme_words(records: Iterable[dict], age_of: AgeOf = git_age) -> str:
    """ "" where every record ran on HEAD's `agents/` tree, else the words README's bullet
    adds to its date: "; measured on an older tree, commit ed936d1"."""
    found = older(records, age_of)
    if not found:
        return ""
    names = ", ".join(commit.removesuffix("-dirty") for commit in found)
    trees = "an older tree, commit" if len(found) == 1 else "older trees, commits"
    return f"; measured on {trees} {names}"


_COUNT = re.compile(r"\(\d+ files? of `agents/` changed since\)")


def steady(text: str) -> str:
    """`text` with the moving counts of `page_line` taken out, for comparing pages."""
    return _COUNT.sub("(files of `agents/` changed since)", text)
